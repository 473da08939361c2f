"""The harness's side of a tool call: its handler runs, recorded on THE ``execute_tool`` span.

``tool_execution(call)`` finds the span the wire tap opened for the call (or opens and
registers it when the tap never saw the call), makes it the current span while the
handler runs (spans the handler starts nest under it) and yields an ``Execution`` that
records retries, ledger replays and the outcome on it. A call whose span already
ended and that arrives again unchanged (a re-sent response) is a replay: no second
span. Nothing here raises into the harness; without tooltap instrumented, and on a
span that has already ended (flush), everything is a no-op.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, Final

from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode

from .._core.model import ToolCall
from .._quietly import report
from . import semconv as sc
from .conversation import current_conversation
from .sanitize import Sanitizer
from .telemetry import Telemetry, get_telemetry

if TYPE_CHECKING:
    from .correlate import OpenCall
    from .instruments import Instruments

__all__ = ["NO_EXECUTION", "Execution", "find_execution", "tool_execution"]


class Execution:
    """The handler runs of one call, recorded on its ``execute_tool`` span; never raises."""

    __slots__ = ("_capture", "_entry", "_instruments", "_started")

    def __init__(
        self, entry: OpenCall | None, capture: bool, instruments: Instruments | None = None
    ) -> None:
        self._entry = entry
        self._started = time.monotonic()
        self._capture = capture
        self._instruments = instruments

    def _span(self) -> Span | None:
        entry = self._entry
        span = entry.span if entry is not None else None
        return span if span is not None and span.is_recording() else None

    def record_retry(self, attempt: int, error_type: str) -> None:
        """Handler attempt ``attempt`` failed with ``error_type``; another one follows."""
        span = self._span()
        if span is None:
            return
        try:
            attributes: dict[str, Any] = {
                sc.ERROR_TYPE: error_type,
                sc.TOOLTAP_TOOL_ATTEMPTS: attempt,
            }
            span.add_event(sc.EVENT_TOOL_RETRY, attributes)
        except Exception as exc:  # noqa: BLE001
            _report(exc)

    def record_replay(self, state: str | None = None) -> None:
        """The call was answered with a stored result instead of running again.

        ``state``: the ledger entry's (``done``, or ``pending`` when an earlier run's
        outcome is unknown).
        """
        span = self._span()
        if span is None:
            return
        try:
            span.add_event(
                sc.EVENT_TOOL_REPLAYED, {sc.TOOLTAP_LEDGER_STATE: state} if state else {}
            )
            span.set_attribute(sc.TOOLTAP_TOOL_REPLAYED, True)
        except Exception as exc:  # noqa: BLE001
            _report(exc)

    def record_in_doubt(self, reason: str) -> None:
        """A side effect's outcome is unknown (``reason``: ``pending``/``timeout``); not rerun."""
        span = self._span()
        if span is None:
            return
        try:
            span.add_event(sc.EVENT_TOOL_IN_DOUBT, {sc.TOOLTAP_IN_DOUBT_REASON: reason})
        except Exception as exc:  # noqa: BLE001
            _report(exc)

    def record_result(
        self,
        output: Any,
        *,
        is_error: bool,
        error_type: str | None = None,
        attempts: int | None = None,
    ) -> None:
        """The handler's final outcome, after ``attempts`` runs (when the harness counts them)."""
        entry, span = self._entry, self._span()
        if entry is None or span is None:
            return
        try:
            duration = time.monotonic() - self._started
            span.set_attribute(sc.TOOLTAP_HANDLER_DURATION, duration)
            if attempts is not None:
                span.set_attribute(sc.TOOLTAP_TOOL_ATTEMPTS, attempts)
            if is_error:
                entry.handler_error = error_type or sc.ERROR_TOOL
                span.set_attribute(sc.ERROR_TYPE, entry.handler_error)
                span.set_status(Status(StatusCode.ERROR, entry.handler_error))
            if self._capture:
                clean = Sanitizer()
                result = clean.json(output)
                span.set_attributes(clean.count({sc.GEN_AI_TOOL_CALL_RESULT: result}))
            if self._instruments is not None:
                error = (entry.handler_error or sc.ERROR_TOOL) if is_error else None
                context = trace.set_span_in_context(span)
                self._instruments.execution(duration, entry.provider, entry.label, error, context)
        except Exception as exc:  # noqa: BLE001
            _report(exc)


#: The execution of a call tooltap does not record: every method is a no-op.
NO_EXECUTION: Final = Execution(None, False)


def _report(exc: BaseException) -> None:
    report(exc, "execution")


def _open_execution(tel: Telemetry, call: ToolCall, side_effects: bool) -> Execution:
    lifecycle = tel.lifecycle
    conversation = current_conversation.get()
    entry = lifecycle.find(call, conversation)
    if entry is None:
        parent = trace.get_current_span()  # the tap never saw this call: open its span now
        entry = lifecycle.received(
            call,
            parent=parent if parent.get_span_context().is_valid else None,
            provider=(
                sc.provider_name(call.dialect)
                if call.dialect
                else sc.provider_of_family(call.provider)
            ),
            label=tel.tool_names.label(call.name, None),
            conversation=conversation,
        )
    entry.handled = True
    if entry.span is not None and entry.span.is_recording():
        entry.span.set_attribute(sc.TOOLTAP_SIDE_EFFECTS, side_effects)
    return Execution(entry, tel.config.content_on_span, tel.instruments)


def find_execution(call: ToolCall) -> Execution:
    """The ``Execution`` of ``call``'s open span, without opening one (else a no-op)."""
    tel = get_telemetry()
    if tel is None:
        return NO_EXECUTION
    try:
        entry = tel.lifecycle.find(call, current_conversation.get())
    except Exception as exc:  # noqa: BLE001
        _report(exc)
        return NO_EXECUTION
    if entry is None:
        return NO_EXECUTION
    return Execution(entry, tel.config.content_on_span, tel.instruments)


@contextmanager
def tool_execution(call: ToolCall, *, side_effects: bool = False) -> Iterator[Execution]:
    """Record a harness's handler run on THE ``execute_tool`` span of ``call``.

    The span is the one the wire tap opened when it saw the call; if it never did,
    one is opened now and registered, so the wire never opens a second one. It is the
    current span inside the block and ends when the result is sent (or as orphaned),
    not here. An exception escaping the block is recorded as the handler's error and
    re-raised unchanged. No-op when not instrumented.
    """
    tel = get_telemetry()
    execution = NO_EXECUTION
    if tel is not None:
        try:
            execution = _open_execution(tel, call, side_effects)
        except Exception as exc:  # noqa: BLE001
            _report(exc)
    span = execution._span()
    current: AbstractContextManager[Any] = (
        nullcontext()
        if span is None
        else trace.use_span(
            span, end_on_exit=False, record_exception=False, set_status_on_exception=False
        )
    )
    with current:
        try:
            yield execution
        except BaseException as exc:
            execution.record_result(None, is_error=True, error_type=type(exc).__name__)
            raise
