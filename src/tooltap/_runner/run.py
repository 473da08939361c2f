"""Run one turn: validate every call, execute the valid ones once, answer every call id."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import inspect
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from .._core.dialects import provider_of
from .._core.model import Parsed, Problem, RequestInfo, ToolCall
from .._core.problems import UNPARSED_KINDS
from .._core.results import result_messages
from .._core.validate import validate
from ._observe import note_in_doubt, note_replay, observed
from .inflight import InFlight
from .invoke import MAX_ERROR_TEXT, TimedOut, invoke
from .ledger import Ledger, LedgerEntry, MemoryLedger
from .outcome import Outcome, TurnResult
from .policy import ToolError
from .tool import Tool

__all__ = ["Turn", "run_turn"]

_log = logging.getLogger("tooltap.runner")

#: Polling of a peer's pending ledger entry: first wait, growth, longest wait (seconds).
_POLL: Final = (0.002, 1.5, 0.05)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Turn:
    """What one turn runs with: the tools, the ledger and the in-flight map of its registry."""

    tools: Mapping[str, Tool]
    ledger: Ledger
    inflight: InFlight
    #: Seconds a call that lost its claim waits for the winner's entry before it is in doubt.
    peer_wait: float
    #: Where the response's model turn sits in its conversation (id-less calls' key).
    position: str | None = None


async def run_turn(
    turn: Turn,
    calls: Parsed | Sequence[ToolCall],
    *,
    dialect: str | None,
    request_info: RequestInfo | None,
    concurrent: bool,
) -> TurnResult:
    """Body of :meth:`ToolRegistry.run`."""
    todo, dialect = _gather(calls, dialect)
    info = request_info or RequestInfo(
        dialect, tools={t.name: t.schema for t in turn.tools.values()}
    )
    first: dict[str, int] = {}
    outcomes: list[Outcome | None] = [None] * len(todo)
    jobs: list[tuple[int, Tool, ToolCall]] = []
    for i, (call, unparsed) in enumerate(todo):
        if call.call_id is not None and call.call_id in first:
            continue  # answered once, below
        if call.call_id is not None:
            first[call.call_id] = i
        tool = turn.tools.get(call.name)
        if tool is None:
            outcomes[i] = _undeclared(turn, call)
        elif problems := (unparsed or _validation_problems(tool, call, info)):
            outcomes[i] = _invalid(call, problems)
        else:
            jobs.append((i, tool, call))
    if concurrent and len(jobs) > 1:
        done = await asyncio.gather(*(_execute(turn, t, c, True) for _, t, c in jobs))
    else:
        done = [await _execute(turn, t, c, concurrent) for _, t, c in jobs]
    for (i, _, _), outcome in zip(jobs, done, strict=True):
        outcomes[i] = outcome
    final: list[Outcome] = []
    for i, (call, _) in enumerate(todo):
        own = outcomes[i]
        if own is None:  # a repeated call id: same answer, not sent twice
            twin = outcomes[first[call.call_id or ""]]
            assert twin is not None
            replayed = twin.executed and twin.status != "in_doubt"
            status = "replayed" if replayed else twin.status
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
            if p.kind in UNPARSED_KINDS and p.name and (p.call_id not in seen or not p.call_id):
                index = p.call_index if p.call_index is not None else len(todo)
                provider = provider_of(calls.dialect)
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
    """Schema problems (``tooltap.core.validate``), else arguments the handler cannot take."""
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


def _undeclared(turn: Turn, call: ToolCall) -> Outcome:
    names = ", ".join(turn.tools) or "none"
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


def _ledger_keys(tool: Tool, call: ToolCall, position: str | None) -> list[str]:
    """The keys naming this call's effect, each an equal claim on it.

    ``call:<id>:<fingerprint>`` for a call with an id; for one without (Google),
    ``turn:<position>:<index in the turn>:<fingerprint>`` when the turn's position is
    known; ``key:<tool>:<idempotency key>`` when the tool has one. The fingerprint (of
    name and args) keeps a provider that reuses ids across turns (``call_0``...) from
    having a different call answered with an old result.
    """
    canonical = json.dumps([call.name, call.args], sort_keys=True, default=str)
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:16]
    keys = []
    if call.call_id:
        keys.append(f"call:{call.call_id}:{digest}")
    elif position is not None:
        keys.append(f"turn:{position}:{call.index}:{digest}")
    if tool.idempotency_key is not None:
        keys.append(f"key:{tool.name}:{tool.idempotency_key(dict(call.args))}")
    return keys


async def _io(ledger: Ledger, method: Callable[..., T], *args: Any) -> T:
    """A ledger call, off the event loop unless the ledger never blocks (in memory)."""
    if isinstance(ledger, MemoryLedger):
        return method(*args)
    return await asyncio.to_thread(method, *args)


async def _execute(turn: Turn, tool: Tool, call: ToolCall, threaded: bool) -> Outcome:
    """Run one valid call; a side-effecting one at most once (ledger claim)."""
    if not tool.side_effects:
        return await _attempts(tool, call, threaded)  # a read may safely run again
    try:
        keys = _ledger_keys(tool, call, turn.position)
    except Exception as exc:  # noqa: BLE001 - a broken idempotency-key function
        return _ledger_error(call, exc)
    if not keys:  # nothing names this call (no id, position or key): it cannot be tracked
        return await _attempts(tool, call, threaded)
    future, first = turn.inflight.start(keys)
    if not first:  # the same effect is running in this process: wait for its entry
        return _answer(call, await _await_peer(future, _wait_limit(turn, tool)))
    settled = LedgerEntry("pending", tool.name)
    try:
        outcome = await _claimed(turn, tool, call, keys, threaded)
        if outcome.status in ("ok", "error", "replayed"):
            settled = LedgerEntry(
                "done", tool.name, outcome.output, outcome.is_error, outcome.error_type
            )
        return outcome
    finally:
        turn.inflight.finish(keys, future, settled)


async def _claimed(
    turn: Turn, tool: Tool, call: ToolCall, keys: list[str], threaded: bool
) -> Outcome:
    """Claim every key, then run; a key another run holds is answered from its entry."""
    won: list[str] = []
    ledger = turn.ledger
    try:
        for key in keys:
            claim = await _io(ledger, ledger.claim, key, tool.name)
            if not claim.won:
                return await _lost(turn, tool, call, key, claim.entry, won)
            won.append(key)
    except Exception as exc:  # noqa: BLE001 - a broken ledger: refuse, never run blind
        await _release(turn, won)
        return _ledger_error(call, exc)

    def late(entry: LedgerEntry) -> None:  # a timed-out sync handler finished after all
        for key in keys:
            _put_quietly(ledger, key, entry)

    outcome = await _attempts(tool, call, threaded, late)
    if outcome.status != "in_doubt":
        entry = LedgerEntry("done", tool.name, outcome.output, outcome.is_error, outcome.error_type)
        for key in keys:
            await _io(ledger, _put_quietly, ledger, key, entry)
    return outcome


async def _lost(
    turn: Turn,
    tool: Tool,
    call: ToolCall,
    key: str,
    entry: LedgerEntry | None,
    won: list[str],
) -> Outcome:
    """Another run holds ``key``: answer with its result (bounded wait) or in doubt."""
    try:
        final = await _poll(turn.ledger, key, entry, _wait_limit(turn, tool))
    except Exception:  # noqa: BLE001 - the entry cannot be read: never run blind
        _log.warning("tooltap: ledger unreadable for call %s", call.call_id, exc_info=True)
        final = None
    if final is not None and final.state == "done":
        for other in won:
            await _io(turn.ledger, _put_quietly, turn.ledger, other, final)
    else:
        await _release(turn, won)
    return _answer(call, final)


async def _poll(
    ledger: Ledger, key: str, entry: LedgerEntry | None, limit: float
) -> LedgerEntry | None:
    """``key``'s entry once done, or as it is ``limit`` seconds after it was claimed."""
    delay, growth, longest = _POLL
    while entry is not None and entry.state == "pending":
        left = entry.recorded_at + limit - time.time()
        if left <= 0:
            break
        await asyncio.sleep(min(delay, left))
        delay = min(delay * growth, longest)
        entry = await _io(ledger, ledger.get, key)
    return entry


async def _await_peer(future: Future[LedgerEntry], limit: float) -> LedgerEntry | None:
    """The entry a same-process run of the effect leaves, waiting at most ``limit`` s."""
    try:
        return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), limit)
    except TimeoutError:
        return None


def _wait_limit(turn: Turn, tool: Tool) -> float:
    return max(turn.peer_wait, tool.timeout or 0.0)


async def _release(turn: Turn, keys: list[str]) -> None:
    """Forget claims whose call was not run, so it may run later."""
    for key in keys:
        try:
            await _io(turn.ledger, turn.ledger.forget, key)
        except Exception:  # noqa: BLE001 - the claim stays: the call is in doubt, not rerun
            _log.warning("tooltap: could not release the claim %s", key, exc_info=True)


def _put_quietly(ledger: Ledger, key: str, entry: LedgerEntry) -> None:
    try:
        ledger.put(key, entry)
    except Exception:  # noqa: BLE001 - the run itself must still be answered
        _log.warning("tooltap: could not record %s in the ledger", key, exc_info=True)


def _ledger_error(call: ToolCall, exc: Exception) -> Outcome:
    _log.warning("tooltap: ledger unusable for call %s", call.call_id, exc_info=exc)
    text = f"The tool {call.name!r} was not called: its execution record is unavailable."
    return Outcome(call, "error", text, True, "ledger_error", exception=exc)


def _answer(call: ToolCall, entry: LedgerEntry | None) -> Outcome:
    """A call not run here: the stored result, else in doubt (an earlier run's outcome unknown)."""
    if entry is None or entry.state == "pending":
        note_in_doubt(call, reason="pending")
        text = (
            f"An earlier run of {call.name!r} for this call started and its outcome is "
            "unknown; it was not repeated, to avoid doing it twice."
        )
        return Outcome(call, "in_doubt", text, True, "in_doubt")
    note_replay(call, state=entry.state)
    return Outcome(call, "replayed", entry.output, entry.is_error, entry.error_type)


async def _attempts(
    tool: Tool,
    call: ToolCall,
    threaded: bool,
    late: Callable[[LedgerEntry], None] | None = None,
) -> Outcome:
    """Run the handler under the tool's retry policy and timeout, inside its execute_tool span."""
    delays = tool.retry.delays()
    attempts = 0
    spent = 0.0
    with observed(call, side_effects=tool.side_effects) as span:
        while True:
            attempts += 1
            start = time.perf_counter()
            try:
                output = await invoke(tool, call.args, threaded, late)
            except ToolError as exc:
                spent += time.perf_counter() - start
                failure: Exception = exc
                text, error_type = exc.message, exc.error_type
                break
            except Exception as exc:  # noqa: BLE001 - the model gets a message instead
                spent += time.perf_counter() - start
                failure = exc
                if isinstance(exc, TimedOut):
                    text, error_type = f"The tool {call.name!r} {exc}", "timeout"
                    if tool.side_effects:
                        span.record_in_doubt("timeout")
                        break
                else:
                    text = f"The tool {call.name!r} failed: {type(exc).__name__}: {exc}"
                    text, error_type = text[:MAX_ERROR_TEXT], type(exc).__name__
                delay = next(delays, None)
                if delay is None:
                    break
                span.record_retry(attempts, error_type)
                await asyncio.sleep(delay)
            else:
                spent += time.perf_counter() - start
                span.record_result(output, is_error=False, attempts=attempts)
                return Outcome(call, "ok", output, attempts=attempts, duration=spent)
        span.record_result(text, is_error=True, attempts=attempts, error_type=error_type)
    _log.debug("tooltap: tool %s failed", call.name, exc_info=failure)
    if isinstance(failure, TimedOut) and tool.side_effects:
        text += "; whether it took effect is unknown, so it was not repeated."
        return Outcome(call, "in_doubt", text, True, "in_doubt", attempts, spent, exception=failure)
    return Outcome(
        call, "error", text, True, error_type, attempts=attempts, duration=spent, exception=failure
    )
