"""How the lifecycle's open calls end: matched to a request's tool results, or otherwise.

A request's results are grouped by what identifies the call each answers, matched to open
calls (by id, else by content) and the answered memory (``Lifecycle.results_sent``); each
call ends once (``_finish``): ``ok``/``error``, or ``orphaned``, ``unanswered``,
``not_delivered``, ``output``; results that answer nothing new are only counted
(``unknown_call``, ``duplicate``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Collection, Mapping, Sized
from typing import Any, Final

from opentelemetry.trace import Span, SpanContext, Status, StatusCode

from .._core.model import ModelTurn, ToolResultRef
from .._forks import OwnedLock
from . import semconv as sc
from .callids import call_key
from .correlate import Answered, Identity, OpenCall, OpenCalls, Scope, Wanted, moved_past
from .instruments import Instruments, ToolNames
from .listeners import Listeners, ToolResultSent
from .pending_span import adopted_result
from .sanitize import Sanitizer

__all__ = ["CallEnds"]

#: The turn of a result whose call the request does not show: later than any.
_LATER: Final = 1 << 62


class CallEnds:
    """The part of ``lifecycle.Lifecycle`` that ends its open calls (it holds the tables)."""

    _lock: OwnedLock
    _open: OpenCalls
    _answered: Answered
    _instruments: Instruments
    _listeners: Listeners
    _tool_names: ToolNames
    #: What is still being ended (calls taken out of the table, operations): a token
    #: (``mark``) -> the thread ending it.
    _ending: dict[object, int]

    def results_sent(
        self,
        refs: tuple[ToolResultRef, ...],
        *,
        provider: str,
        declared: Mapping[str, object] | None,
        inference_span: Span | None,
        conversation: Scope = None,
        previous_response: str | None = None,
        history_length: int | None = None,
        model_turns: tuple[ModelTurn, ...] = (),
        system: int | None = None,
    ) -> list[SpanContext]:
        """Account a request's results; return the tool spans they answer (to link).

        ``conversation``: the request's scope. A result before the request's last model
        turn (``ToolResultRef.history``) that was accounted already, or that answers no
        open call, is history: it counts nothing. With ``history_length`` (the request
        carries its history), the open calls of the scope that the history has moved past
        without a result for them end as ``unanswered`` (``moved_past``).
        """
        if not refs and history_length is None:
            return []
        groups: dict[Identity, tuple[Wanted, list[ToolResultRef]]] = {}
        answered: dict[object, int] = {}  # call id or key -> latest turn a result answers
        for ref in refs:  # keys are JSON-encoded here, outside the lock
            key = call_key(ref.name, ref.call_args)
            latest = _LATER if ref.turn is None else ref.turn
            for known in (ref.call_id, key):
                if known is not None:
                    answered[known] = max(answered.get(known, -1), latest)
            scope = hash((conversation, ref.turn))
            identity = (hash(ref.call_id), hash(key), hash(ref.position), scope)
            wanted = Wanted(ref.call_id, key, conversation, previous_response, ref.turn, system)
            groups.setdefault(identity, (wanted, []))[1].append(ref)
        with self._lock:
            matched, extra = self._match(groups)
            passed: list[OpenCall] = []
            if history_length is not None and conversation is not None:
                below = self._open.of_scope(conversation, history_length - 1)
                passed = moved_past(below, history_length, model_turns, answered)
                for entry in passed:
                    self._open.remove(entry)
            token = self._taken(matched or passed)
        try:
            return self._answer(matched, passed, extra, provider, declared, inference_span)
        finally:
            self.unmark(token)

    def _answer(
        self,
        matched: list[tuple[OpenCall, ToolResultRef]],
        passed: list[OpenCall],
        extra: list[tuple[ToolResultRef, str]],
        provider: str,
        declared: Mapping[str, object] | None,
        inference_span: Span | None,
    ) -> list[SpanContext]:
        """End the calls ``results_sent`` took out; count the results left over."""
        links: list[SpanContext] = []
        for entry, ref in matched:
            result = sc.RESULT_ERROR if ref.is_error else sc.RESULT_OK
            duration = self._finish(entry, result, is_error=ref.is_error)
            if entry.span is not None:
                if (context := entry.span.get_span_context()).is_valid:
                    links.append(context)
                adopted_result(
                    entry.span, inference_span, ref.call_id, entry.name, result, duration
                )
            if self._listeners:
                self._listeners.emit(
                    ToolResultSent(ref.call_id, entry.name, ref.is_error, duration, result)
                )
        for entry in passed:
            self._finish(entry, sc.RESULT_UNANSWERED, is_error=False)
        for ref, result in extra:
            self._count_extra(ref, result, provider, declared, inference_span)
        return links

    def _match(
        self, groups: dict[Identity, tuple[Wanted, list[ToolResultRef]]]
    ) -> tuple[list[tuple[OpenCall, ToolResultRef]], list[tuple[ToolResultRef, str]]]:
        """Each group's open call (taken out) and result; the results left over (locked)."""
        matched: list[tuple[OpenCall, ToolResultRef]] = []
        extra: list[tuple[ToolResultRef, str]] = []
        for identity, (wanted, group) in groups.items():
            known = self._answered.get(identity)
            history = all(ref.history for ref in group)
            if history and known is not None:
                continue
            entry = self._open.by_id(wanted)
            if entry is None and (wanted.call_id is None or known is None):
                entry = self._open.by_content(wanted)
            if entry is None and history:
                continue
            if entry is not None:
                self._open.remove(entry)
            counts: dict[int, int] = {}
            fresh: list[ToolResultRef] = []
            for ref in group:
                counts[ref.digest] = counts.get(ref.digest, 0) + 1
                if counts[ref.digest] > (known or {}).get(ref.digest, 0):
                    fresh.append(ref)
            if entry is not None:
                matched.append((entry, fresh.pop(0) if fresh else group[0]))
            elif known is None and fresh:
                extra.append((fresh.pop(0), sc.RESULT_UNKNOWN_CALL))
            extra += [(ref, sc.RESULT_DUPLICATE) for ref in fresh]
            self._answered.put(identity, counts)
        return matched, extra

    def _count_extra(
        self,
        ref: ToolResultRef,
        result: str,
        provider: str,
        declared: Mapping[str, object] | None,
        inference_span: Span | None,
    ) -> None:
        label = self._tool_names.label(ref.name, declared)
        self._instruments.tool_result(provider, label, result)
        if (
            result == sc.RESULT_DUPLICATE
            and inference_span is not None
            and inference_span.is_recording()
        ):
            clean = Sanitizer()
            attributes: dict[str, Any] = {sc.ERROR_TYPE: sc.RESULT_DUPLICATE}
            if ref.call_id is not None:
                attributes[sc.GEN_AI_TOOL_CALL_ID] = clean.id(ref.call_id)
            if ref.name is not None:
                attributes[sc.GEN_AI_TOOL_NAME] = clean.name(ref.name)
            inference_span.add_event(sc.EVENT_DUPLICATE_RESULT, clean.count(attributes))
        self._listeners.emit(ToolResultSent(ref.call_id, ref.name, ref.is_error, None, result))

    # --- ending ----------------------------------------------------------------------------

    def _taken(self, entries: Sized) -> object:
        """Mark ``entries``, just taken out of the table, as being ended by this thread
        (locked; None when there are none); ``unmark`` the token once they have ended."""
        return self.mark() if entries else None

    def mark(self) -> object:
        """A token saying that this thread is ending spans a flush should wait for
        (``wait_ending``); ``unmark`` it once they have ended."""
        token = object()
        self._ending[token] = threading.get_ident()
        return token

    def unmark(self, token: object) -> None:
        """What ``token`` marked has ended."""
        self._ending.pop(token, None)

    def _end_taken(self, entries: list[OpenCall], token: object, result: str) -> None:
        """End ``entries`` (taken out, marked by ``token``) with ``result``, as an error."""
        try:
            for entry in entries:
                self._finish(entry, result, is_error=True)
        finally:
            self.unmark(token)

    def wait_ending(self, deadline: float, besides: Collection[int | None]) -> None:
        """Wait, until ``deadline`` at most, for what other threads (not those of
        ``besides``) were ending (calls taken out of the table, operations): a flush
        force-flushes their spans too. Not for what is marked later, nor for a thread a
        signal handler stopped."""
        with self._lock:
            pending = [token for token, thread in self._ending.items() if thread not in besides]
        while pending and time.monotonic() < deadline:
            time.sleep(0.001)
            pending = [token for token in pending if token in self._ending]

    def _finish(self, entry: OpenCall, result: str, *, is_error: bool) -> float:
        """End one (already removed) call with ``result``; record metrics; return duration.

        A spanless (truncated) call counts its result, and expires without a trace. An
        output tool's call is never orphaned nor unanswered: the framework consumed it.
        """
        if entry.output and result in (sc.RESULT_ORPHANED, sc.RESULT_UNANSWERED):
            result, is_error = sc.RESULT_OUTPUT, False
        duration = time.monotonic() - entry.started
        span = entry.span
        if span is None:
            if result != sc.RESULT_ORPHANED:
                self._instruments.tool_result(entry.provider, entry.label, result)
            return duration
        span.set_attribute(sc.TOOLTAP_RESULT, result)
        error_type = {
            sc.RESULT_ERROR: entry.handler_error or sc.ERROR_TOOL,
            sc.RESULT_ORPHANED: sc.RESULT_ORPHANED,
            sc.RESULT_NOT_DELIVERED: sc.RESULT_NOT_DELIVERED,
        }.get(result, entry.outcome if entry.outcome != sc.RESULT_OK else None)
        if entry.broken:  # never run: the problem is the error, whatever the result
            error_type = entry.outcome
        if error_type is not None:
            span.set_attribute(sc.ERROR_TYPE, error_type)
        if is_error or entry.broken:
            span.set_status(Status(StatusCode.ERROR, error_type))
        span.end()
        self._instruments.tool_result(entry.provider, entry.label, result, duration)
        return duration
