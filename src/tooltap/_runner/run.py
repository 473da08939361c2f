"""Run one turn: validate every call, execute the valid ones once, answer every call id."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import inspect
import json
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from .._core.model import PROVIDER_OF, Parsed, Problem, RequestInfo, ToolCall
from .._core.results import result_messages
from .._core.validate import validate
from ._observe import note_replay, observed
from .ledger import LedgerEntry
from .outcome import Outcome, TurnResult
from .policy import ToolError

if TYPE_CHECKING:
    from .registry import Tool, ToolRegistry

__all__ = ["run_turn"]

_log = logging.getLogger("tooltap.runner")

#: Problems of the response parser that leave a call id owed a (error) result.
_UNPARSED_KINDS: Final = frozenset(
    {"invalid_json", "truncated_json", "unexpected_shape", "oversized_arguments"}
)
_MAX_ERROR_TEXT: Final = 500


async def run_turn(
    registry: ToolRegistry,
    calls: Parsed | Sequence[ToolCall],
    *,
    dialect: str | None,
    request_info: RequestInfo | None,
    concurrent: bool,
) -> TurnResult:
    """Body of :meth:`ToolRegistry.run`."""
    todo, dialect = _gather(calls, dialect)
    info = request_info or registry.request_info(dialect)
    first: dict[str, int] = {}
    outcomes: list[Outcome | None] = [None] * len(todo)
    jobs: list[tuple[int, Tool, ToolCall]] = []
    for i, (call, unparsed) in enumerate(todo):
        if call.call_id is not None and call.call_id in first:
            continue  # answered once, below
        if call.call_id is not None:
            first[call.call_id] = i
        tool = registry.get(call.name)
        if tool is None:
            outcomes[i] = _undeclared(registry, call)
        elif problems := (unparsed or _validation_problems(tool, call, info)):
            outcomes[i] = _invalid(call, problems)
        else:
            jobs.append((i, tool, call))
    if concurrent and len(jobs) > 1:
        done = await asyncio.gather(*(_execute(registry, t, c, True) for _, t, c in jobs))
    else:
        done = [await _execute(registry, t, c, concurrent) for _, t, c in jobs]
    for (i, _, _), outcome in zip(jobs, done, strict=True):
        outcomes[i] = outcome
    final: list[Outcome] = []
    for i, (call, _) in enumerate(todo):
        own = outcomes[i]
        if own is None:  # a repeated call id: same answer, not sent twice
            twin = outcomes[first[call.call_id or ""]]
            assert twin is not None
            status = "replayed" if twin.executed else twin.status
            own = dataclasses.replace(twin, call=call, status=status, attempts=0, sent=False)
        final.append(own)
    sent = [o for o in final if o.sent]
    messages = result_messages((o.call, o.output, o.is_error) for o in sent)
    return TurnResult(dialect, messages, tuple(final))


def _gather(
    calls: Parsed | Sequence[ToolCall], dialect: str | None
) -> tuple[list[tuple[ToolCall, tuple[Problem, ...]]], str]:
    """The calls to answer, each with its parse problems; calls that did not parse come last."""
    todo: list[tuple[ToolCall, tuple[Problem, ...]]] = []
    if isinstance(calls, Parsed):
        dialect = dialect or calls.dialect
        todo = [(c, ()) for c in calls.calls]
        seen: set[str | None] = {c.call_id for c in calls.calls if c.call_id is not None}
        for p in calls.problems:
            if p.kind in _UNPARSED_KINDS and p.name and (p.call_id not in seen or not p.call_id):
                index = p.call_index if p.call_index is not None else len(todo)
                provider = PROVIDER_OF.get(calls.dialect, "")
                stub = ToolCall(p.name, {}, provider, p.call_id, index, p.received, calls.dialect)
                todo.append((stub, (p,)))
                seen.add(p.call_id)
    else:
        todo = [(c, ()) for c in calls]
        dialect = dialect or next((c.dialect for c in calls if c.dialect), None)
    if not dialect:
        raise ValueError("run(): pass dialect= (the calls do not name theirs)")
    todo = [
        (c if c.dialect else dataclasses.replace(c, dialect=dialect), problems)
        for c, problems in todo
    ]
    return todo, dialect


def _validation_problems(tool: Tool, call: ToolCall, info: RequestInfo) -> tuple[Problem, ...]:
    """Schema problems (``tooltap.validate``), else arguments the handler cannot take."""
    problems = tuple(validate(call, info))
    if problems:
        return problems
    try:
        signature = inspect.signature(tool.handler)
    except (TypeError, ValueError):  # no introspectable signature: let the call decide
        return ()
    try:
        signature.bind(**call.args)
    except TypeError as exc:
        detail = f"the arguments do not fit the tool: {exc}"
        return (Problem("schema_violation", call.index, call.call_id, detail, call.name),)
    return ()


def _undeclared(registry: ToolRegistry, call: ToolCall) -> Outcome:
    names = ", ".join(t.name for t in registry) or "none"
    text = f"Unknown tool {call.name!r}: it was not called. Available tools: {names}."
    problem = Problem("undeclared_tool", call.index, call.call_id, text, call.name)
    return Outcome(call, "undeclared", text, True, "undeclared_tool", problems=(problem,))


def _invalid(call: ToolCall, problems: tuple[Problem, ...]) -> Outcome:
    details = "; ".join(p.detail or p.kind for p in problems)
    text = (
        f"Invalid arguments for {call.name!r}, so it was not called: {details}. "
        "Call it again with arguments that match its schema."
    )
    return Outcome(call, "invalid", text, True, problems[0].kind, problems=problems)


def _ledger_keys(tool: Tool, call: ToolCall) -> list[str]:
    """``call:<id>:<fingerprint of name and args>`` and ``key:<tool>:<idempotency key>``.

    The fingerprint keeps a provider that reuses ids across turns (``call_0``...) from
    having a different call answered with an old result.
    """
    keys = []
    if call.call_id:
        canonical = json.dumps([call.name, call.args], sort_keys=True, default=str)
        digest = hashlib.sha256(canonical.encode()).hexdigest()[:16]
        keys.append(f"call:{call.call_id}:{digest}")
    if tool.idempotency_key is not None:
        keys.append(f"key:{tool.name}:{tool.idempotency_key(dict(call.args))}")
    return keys


async def _execute(registry: ToolRegistry, tool: Tool, call: ToolCall, threaded: bool) -> Outcome:
    """Run one valid call; a side-effecting one at most once (ledger)."""
    if not tool.side_effects:
        return await _attempts(tool, call, threaded)  # a read may safely run again
    try:
        keys = _ledger_keys(tool, call)
        earlier = await _earlier(registry, keys)
        if earlier is None:
            for key in keys:  # before the effect: a crash mid-run leaves "in doubt"
                registry.ledger.put(key, LedgerEntry("pending", tool.name))
    except Exception as exc:  # noqa: BLE001 - a broken ledger or idempotency-key function
        _log.warning("tooltap: ledger unusable for call %s", call.call_id, exc_info=True)
        text = f"The tool {call.name!r} was not called: its execution record is unavailable."
        return Outcome(call, "error", text, True, "ledger_error", exception=exc)
    if earlier is not None:
        note_replay(call, state=earlier.state)
        return _replay(call, earlier)
    future: asyncio.Future[LedgerEntry] = asyncio.get_running_loop().create_future()
    for key in keys:
        registry._inflight[key] = future
    try:
        outcome = await _attempts(tool, call, threaded)
        entry = LedgerEntry("done", tool.name, outcome.output, outcome.is_error, outcome.error_type)
        _record(registry, keys, entry)
        future.set_result(entry)
        return outcome
    finally:
        if not future.done():
            future.cancel()
        for key in keys:
            if registry._inflight.get(key) is future:
                del registry._inflight[key]


async def _earlier(registry: ToolRegistry, keys: list[str]) -> LedgerEntry | None:
    """What an earlier or concurrent execution of these keys left, if anything."""
    loop = asyncio.get_running_loop()
    for key in keys:
        running = registry._inflight.get(key)
        if running is not None and running.get_loop() is loop:
            try:
                return await asyncio.shield(running)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if not running.cancelled() or (task is not None and task.cancelling()):
                    raise
                return registry.ledger.get(key) or LedgerEntry("pending", "")
        entry = registry.ledger.get(key)
        if entry is not None:
            return entry
    return None


def _replay(call: ToolCall, entry: LedgerEntry) -> Outcome:
    if entry.state == "pending":
        text = (
            f"An earlier run of {call.name!r} for this call started and its outcome is "
            "unknown; it was not repeated, to avoid doing it twice."
        )
        return Outcome(call, "in_doubt", text, True, "in_doubt")
    return Outcome(call, "replayed", entry.output, entry.is_error, entry.error_type)


def _record(registry: ToolRegistry, keys: list[str], entry: LedgerEntry) -> None:
    for key in keys:
        try:
            registry.ledger.put(key, entry)
        except Exception:  # noqa: BLE001 - the run itself must still be answered
            _log.warning("tooltap: could not record %s in the ledger", key, exc_info=True)


async def _attempts(tool: Tool, call: ToolCall, threaded: bool) -> Outcome:
    """Run the handler under the tool's retry policy, inside its execute_tool span."""
    delays = tool.retry.delays()
    attempts = 0
    spent = 0.0
    with observed(call, side_effects=tool.side_effects) as span:
        while True:
            attempts += 1
            start = time.perf_counter()
            try:
                output = await _invoke(tool, call.args, threaded)
            except ToolError as exc:
                spent += time.perf_counter() - start
                failure: Exception = exc
                text, error_type = exc.message, exc.error_type
                break
            except Exception as exc:  # noqa: BLE001 - the model gets a message instead
                spent += time.perf_counter() - start
                failure = exc
                text = f"The tool {call.name!r} failed: {type(exc).__name__}: {exc}"
                text, error_type = text[:_MAX_ERROR_TEXT], type(exc).__name__
                delay = next(delays, None)
                if delay is None:
                    break
                span.retrying(attempts, error_type)
                await asyncio.sleep(delay)
            else:
                spent += time.perf_counter() - start
                span.record(output, is_error=False, attempts=attempts)
                return Outcome(call, "ok", output, attempts=attempts, duration=spent)
        span.record(text, is_error=True, attempts=attempts, error_type=error_type)
    _log.debug("tooltap: tool %s failed", call.name, exc_info=failure)
    return Outcome(
        call, "error", text, True, error_type, attempts=attempts, duration=spent, exception=failure
    )


async def _invoke(tool: Tool, args: dict[str, Any], threaded: bool) -> Any:
    """Call the handler with ``args`` as keywords; sync ones in a thread when ``threaded``."""
    if tool.is_async:
        return await tool.handler(**args)
    if threaded:
        result = await asyncio.to_thread(tool.handler, **args)
    else:
        result = tool.handler(**args)
    if inspect.isawaitable(result):
        result = await result
    return result
