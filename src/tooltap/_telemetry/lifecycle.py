"""One ``execute_tool`` span per tool call id, from the call received to its result sent.

The wire tap opens the span when ``StreamParser.feed`` (or a whole-body parse)
returns the call, as a child of the inference span that received it, and ends it
when a later request carries the call's result (that request's inference span
links to it). Results: ``ok``, ``error`` (``is_error``: ``error.type=tool_error``),
``orphaned`` (never answered within ``orphan_timeout``, or open at flush/shutdown),
``duplicate`` and ``unknown_call`` (counted only).

Requests usually re-send the whole history, so a result already seen for an id is
a replay, not a duplicate: per id we remember how many results were seen, and only
results beyond that count are new. The first new one ends the span; any more are
duplicates (a repeated side effect). Google calls without ids are keyed by
``(name, canonical JSON of args)`` and matched FIFO, then by name and order.
Memory is bounded: at most ``max_open_calls`` open spans (the oldest is orphaned
first) and ``call_id_memory`` ids per memory (received, answered, truncated), the least
recently seen forgotten first. A forgotten answered id costs nothing when its result is
re-sent with the history: the request also carries the call it answers
(``ToolResultRef.in_history``), so the result is a re-send, not an ``unknown_call``;
only a result whose call is neither open, remembered nor in the request is unknown.

Broken calls keep their call-id lifecycle. A call whose arguments arrived whole but
unusable (``invalid_json``, ``unexpected_shape``, ``oversized_arguments``, with an id)
gets its span too, ``error.type`` = the problem kind and ERROR status whatever the
result, so the error result a harness sends under its id ends it as ``error``. A
``truncated_json`` call never fully arrived: no span, but its id is remembered
(bounded) so a result for it counts as ``ok``/``error``, not ``unknown_call``.
Listeners get no ``ToolCallReceived`` for a broken call (it is not a call to run).

Replays: a call id that arrives again with the same name and arguments (a re-sent
response), after its result was sent or while its span is open, opens no second span
and is not counted again (``admit``); the inference span that got it has a
``tooltap.tool_call.replayed`` event. Listeners still get ``ToolCallReceived`` (with the
first span's context): they see what arrived. Ids are remembered with a fingerprint,
bounded; the same id with other arguments is a new call (providers that reuse ids).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from opentelemetry import trace
from opentelemetry.trace import Span, SpanContext, SpanKind, Status, StatusCode

from .._core.model import PROVIDER_OF, Problem, ToolCall, ToolResultRef
from . import semconv as sc
from .callids import Bounded, canonical, fingerprint
from .content import to_json
from .listeners import ToolCallReceived, ToolResultSent

if TYPE_CHECKING:
    from .telemetry import Telemetry

__all__ = ["Lifecycle", "OpenCall"]

#: Problems of a call that arrived whole but unusable: the call gets its span.
BROKEN_CALL_KINDS: Final = frozenset({"invalid_json", "unexpected_shape", "oversized_arguments"})
Key = tuple[str, str]


@dataclass(slots=True, eq=False)
class OpenCall:
    """One open ``execute_tool`` span."""

    span: Span
    call: ToolCall
    provider: str
    label: str
    outcome: str
    started: float
    key: Key | None = None
    handled: bool = False
    handler_error: str | None = None
    broken: bool = False  # arrived whole but unusable: ``outcome`` is the problem kind

    @property
    def context(self) -> SpanContext:
        return self.span.get_span_context()


class Lifecycle:
    """The open-call table of one ``Telemetry``; thread-safe."""

    def __init__(self, tel: Telemetry) -> None:
        self._tel = tel
        self._lock = threading.Lock()
        self._open: OrderedDict[int, OpenCall] = OrderedDict()  # by id(entry), oldest first
        self._by_id: dict[str, OpenCall] = {}
        self._by_key: dict[Key, deque[OpenCall]] = {}
        cap = tel.config.call_id_memory
        self._answered: Bounded[str | Key, int] = Bounded(cap)  # results seen per call
        self._truncated: Bounded[str, str] = Bounded(cap)  # truncated call id -> provider
        # call id -> (fingerprint of name and args, its span's context if listeners want it)
        self._received: Bounded[str, tuple[int, SpanContext | None]] = Bounded(cap)

    def __len__(self) -> int:
        return len(self._open)

    # --- calls -----------------------------------------------------------------------------

    def admit(self, item: ToolCall | Problem, inference_span: Span | None) -> bool:
        """Whether a call (or broken call) is new: False for a replay of a call id seen before.

        ``inference_span``: the span of the response that delivered it, which gets a
        ``tooltap.tool_call.replayed`` event (and listeners a ``ToolCallReceived``) for a
        replay; None when not from the wire. Calls without an id are always new.
        """
        call_id = item.call_id
        if call_id is None:
            return True
        index = item.index if isinstance(item, ToolCall) else item.call_index
        mark = fingerprint(item)
        with self._lock:
            seen = self._received.get(call_id)
            if seen is not None and seen[0] == mark:
                self._received.move_to_end(call_id)
            else:
                self._received.put(call_id, (mark, None))
                seen = None
        if seen is None or inference_span is None:
            return seen is None
        if inference_span.is_recording():
            attributes: dict[str, Any] = {sc.GEN_AI_TOOL_CALL_ID: call_id}
            if item.name:
                attributes[sc.GEN_AI_TOOL_NAME] = item.name
            if index is not None:
                attributes[sc.TOOLTAP_TOOL_CALL_INDEX] = index
            inference_span.add_event(sc.EVENT_CALL_REPLAYED, attributes)
        if isinstance(item, ToolCall):
            self._tel.listeners.emit(ToolCallReceived(item, seen[1]))
        return False

    def received(
        self,
        call: ToolCall,
        *,
        parent: Span | None,
        provider: str,
        label: str,
        outcome: str = sc.RESULT_OK,
        broken: bool = False,
    ) -> OpenCall:
        """Open the span of a call that was fully received (``outcome``: ok or the problem).

        ``broken``: ``outcome`` is a problem that kept the arguments from being used
        (``call`` is then a stand-in: no args, ``raw_arguments`` what arrived).
        """
        ctx = trace.set_span_in_context(parent) if parent is not None else None
        attributes: dict[str, Any] = {
            sc.GEN_AI_OPERATION_NAME: sc.OPERATION_EXECUTE_TOOL,
            sc.GEN_AI_TOOL_NAME: call.name,
            sc.GEN_AI_TOOL_TYPE: sc.TOOL_TYPE_FUNCTION,
            sc.GEN_AI_PROVIDER_NAME: provider,
            sc.TOOLTAP_OUTCOME: outcome,
        }
        if call.index >= 0:
            attributes[sc.TOOLTAP_TOOL_CALL_INDEX] = call.index
        if call.call_id is not None:
            attributes[sc.GEN_AI_TOOL_CALL_ID] = call.call_id
        if broken:
            attributes[sc.ERROR_TYPE] = outcome
        if self._tel.config.content_on_span:
            arguments = call.raw_arguments if broken else to_json(call.args)
            if arguments is not None:
                attributes[sc.GEN_AI_TOOL_CALL_ARGUMENTS] = arguments
        span = self._tel.tracer.start_span(
            f"{sc.OPERATION_EXECUTE_TOOL} {call.name}".rstrip(),
            context=ctx,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        entry = OpenCall(span, call, provider, label, outcome, time.monotonic(), broken=broken)
        if call.call_id is None:
            entry.key = (call.name, canonical(call.args))
        self._register(entry)
        if call.call_id is not None and self._tel.listeners:  # for ToolCallReceived on replays
            with self._lock:
                seen = self._received.get(call.call_id)
                if seen is not None:
                    self._received[call.call_id] = (seen[0], entry.context)
        if not broken and self._tel.listeners:
            self._tel.listeners.emit(ToolCallReceived(call, entry.context))
        return entry

    def broken(
        self, problem: Problem, *, parent: Span | None, provider: str, label: str, dialect: str
    ) -> None:
        """A call (with an id) that a problem kept from being a call: span, or remembered id."""
        call_id = problem.call_id
        if call_id is None:
            return
        if problem.kind in BROKEN_CALL_KINDS:
            index = -1 if problem.call_index is None else problem.call_index
            stand_in = ToolCall(problem.name or "", {}, PROVIDER_OF.get(dialect, ""), call_id,
                                index, problem.received, dialect)  # fmt: skip
            kind = problem.kind
            self.received(stand_in, parent=parent, provider=provider, label=label, outcome=kind,
                          broken=True)  # fmt: skip
        elif problem.kind == "truncated_json":
            with self._lock:
                self._truncated.put(call_id, provider)

    def _register(self, entry: OpenCall) -> None:
        evicted: list[OpenCall] = []
        superseded: OpenCall | None = None
        with self._lock:
            if entry.call.call_id is not None:
                superseded = self._by_id.pop(entry.call.call_id, None)
                if superseded is not None:
                    self._open.pop(id(superseded), None)
                self._by_id[entry.call.call_id] = entry
            else:
                assert entry.key is not None
                self._by_key.setdefault(entry.key, deque()).append(entry)
            self._open[id(entry)] = entry
            while len(self._open) > self._tel.config.max_open_calls:
                evicted.append(self._unlink_oldest())
        for old in evicted + ([superseded] if superseded is not None else []):
            self._finish(old, sc.RESULT_ORPHANED, is_error=True)

    def _unlink_oldest(self) -> OpenCall:
        _, entry = self._open.popitem(last=False)
        self._unlink(entry)
        return entry

    def _unlink(self, entry: OpenCall) -> None:
        self._open.pop(id(entry), None)
        if entry.key is None:
            if self._by_id.get(entry.call.call_id or "") is entry:
                del self._by_id[entry.call.call_id or ""]
            return
        queue = self._by_key.get(entry.key)
        if queue is not None:
            try:
                queue.remove(entry)
            except ValueError:
                pass
            if not queue:
                del self._by_key[entry.key]

    # --- results ---------------------------------------------------------------------------

    def results_sent(
        self,
        refs: tuple[ToolResultRef, ...],
        *,
        provider: str,
        declared: Mapping[str, object] | None,
        inference_span: Span | None,
    ) -> list[SpanContext]:
        """Account the results a request carries; return the tool spans it answers (to link)."""
        if not refs:
            return []
        matched: list[tuple[OpenCall, ToolResultRef]] = []
        extra: list[tuple[ToolResultRef, str, str]] = []  # (ref, result, provider)
        with self._lock:
            for group_key, group in _group(refs).items():
                seen = self._answered.get(group_key, 0)
                self._answered.put(group_key, max(seen, len(group)))
                known = seen > 0
                for ref in group[seen:]:
                    entry = self._take(ref)
                    cut = self._truncated.pop(ref.call_id, None) if ref.call_id else None
                    if entry is not None:
                        matched.append((entry, ref))
                    elif cut is not None:  # a truncated call's id: answered, never a call
                        result = sc.RESULT_ERROR if ref.is_error else sc.RESULT_OK
                        extra.append((ref, result, cut))
                    elif not known and ref.in_history:
                        pass  # history re-sent: a call answered before the memory kept it
                    else:
                        result = sc.RESULT_DUPLICATE if known else sc.RESULT_UNKNOWN_CALL
                        extra.append((ref, result, provider))
                    known = True
        links: list[SpanContext] = []
        for entry, ref in matched:
            result = sc.RESULT_ERROR if ref.is_error else sc.RESULT_OK
            duration = self._finish(entry, result, is_error=ref.is_error)
            links.append(entry.context)
            if self._tel.listeners:
                self._tel.listeners.emit(
                    ToolResultSent(ref.call_id, entry.call.name, ref.is_error, duration, result)
                )
        for ref, result, ref_provider in extra:
            self._count_extra(ref, result, ref_provider, declared, inference_span)
        return links

    def _take(self, ref: ToolResultRef) -> OpenCall | None:
        """Pop the open entry a result answers (call id; else args key; else name and order)."""
        if ref.call_id is not None:
            entry = self._by_id.get(ref.call_id)
        else:
            entry = None
            if ref.name is not None and ref.call_args is not None:
                queue = self._by_key.get((ref.name, canonical(ref.call_args)))
                entry = queue[0] if queue else None
            if entry is None and ref.name is not None:
                entry = next(
                    (e for e in self._open.values() if e.key is not None and e.key[0] == ref.name),
                    None,
                )
        if entry is not None:
            self._unlink(entry)
        return entry

    def _count_extra(
        self,
        ref: ToolResultRef,
        result: str,
        provider: str,
        declared: Mapping[str, object] | None,
        inference_span: Span | None,
    ) -> None:
        label = self._tel.tool_names.label(ref.name, declared)
        self._tel.instruments.tool_results.add(
            1,
            {
                sc.GEN_AI_PROVIDER_NAME: provider,
                sc.GEN_AI_TOOL_NAME: label,
                sc.TOOLTAP_RESULT: result,
            },
        )
        if (
            result == sc.RESULT_DUPLICATE
            and inference_span is not None
            and inference_span.is_recording()
        ):
            attributes: dict[str, Any] = {sc.ERROR_TYPE: sc.RESULT_DUPLICATE}
            if ref.call_id is not None:
                attributes[sc.GEN_AI_TOOL_CALL_ID] = ref.call_id
            if ref.name is not None:
                attributes[sc.GEN_AI_TOOL_NAME] = ref.name
            inference_span.add_event(sc.EVENT_DUPLICATE_RESULT, attributes)
        self._tel.listeners.emit(ToolResultSent(ref.call_id, ref.name, ref.is_error, None, result))

    # --- ending ----------------------------------------------------------------------------

    def _finish(self, entry: OpenCall, result: str, *, is_error: bool) -> float:
        """End one (already unlinked) span with ``result``; record metrics; return duration."""
        duration = time.monotonic() - entry.started
        span = entry.span
        span.set_attribute(sc.TOOLTAP_RESULT, result)
        error_type = {
            sc.RESULT_ERROR: entry.handler_error or sc.ERROR_TOOL,
            sc.RESULT_ORPHANED: sc.RESULT_ORPHANED,
        }.get(result, entry.outcome if entry.outcome != sc.RESULT_OK else None)
        if entry.broken:  # never run: the problem is the error, whatever the result
            error_type = entry.outcome
        if error_type is not None:
            span.set_attribute(sc.ERROR_TYPE, error_type)
        if is_error or entry.broken:
            span.set_status(Status(StatusCode.ERROR, error_type))
        span.end()
        attributes = {
            sc.GEN_AI_PROVIDER_NAME: entry.provider,
            sc.GEN_AI_TOOL_NAME: entry.label,
            sc.TOOLTAP_RESULT: result,
        }
        self._tel.instruments.tool_results.add(1, attributes)
        self._tel.instruments.tool_call_duration.record(duration, attributes)
        return duration

    def expire(self, now: float | None = None) -> int:
        """End, as orphaned, the calls open longer than ``orphan_timeout``; return how many."""
        limit = (time.monotonic() if now is None else now) - self._tel.config.orphan_timeout
        expired: list[OpenCall] = []
        with self._lock:
            while self._open:
                oldest = next(iter(self._open.values()))
                if oldest.started > limit:
                    break
                expired.append(self._unlink_oldest())
        for entry in expired:
            self._finish(entry, sc.RESULT_ORPHANED, is_error=True)
        return len(expired)

    def end_all(self) -> int:
        """End every open span as orphaned (flush, shutdown, uninstrument)."""
        with self._lock:
            entries = list(self._open.values())
            self._open.clear()
            self._by_id.clear()
            self._by_key.clear()
        for entry in entries:
            self._finish(entry, sc.RESULT_ORPHANED, is_error=True)
        return len(entries)

    def find(self, call: ToolCall) -> OpenCall | None:
        """The open entry of ``call`` (by id, else by name and args), without removing it."""
        with self._lock:
            if call.call_id is not None:
                return self._by_id.get(call.call_id)
            queue = self._by_key.get((call.name, canonical(call.args)))
            return next((e for e in queue or () if not e.handled), None)


def _group(refs: tuple[ToolResultRef, ...]) -> dict[str | Key, list[ToolResultRef]]:
    groups: dict[str | Key, list[ToolResultRef]] = {}
    for ref in refs:
        if ref.call_id is not None:
            key: str | Key = ref.call_id
        else:
            args = canonical(ref.call_args) if ref.call_args is not None else "?"
            key = (ref.name or "", args)
        groups.setdefault(key, []).append(ref)
    return groups
