"""The harness's side of a tool call: its handler run, recorded on THE ``execute_tool`` span.

``tool_execution(call)`` finds the span the wire tap opened for the call (or opens and
registers it when the tap never saw the call) and yields an ``Execution`` that records
the handler's outcome on it. Nothing here raises into the harness; without tooltap
instrumented everything is a no-op.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from .._core.model import ToolCall
from .._patch.quietly import report
from . import semconv as sc
from .content import to_json

if TYPE_CHECKING:
    from .lifecycle import OpenCall
    from .telemetry import Telemetry

__all__ = ["Execution", "tool_execution"]


class Execution:
    """The handler run of one call, recorded on its ``execute_tool`` span."""

    __slots__ = ("_capture", "_entry", "_started")

    def __init__(self, entry: OpenCall | None, capture: bool) -> None:
        self._entry = entry
        self._started = time.monotonic()
        self._capture = capture

    def record_result(self, output: Any, *, is_error: bool, error_type: str | None = None) -> None:
        """Record the handler's outcome (never raises)."""
        entry = self._entry
        if entry is None:
            return
        span = entry.span
        try:
            span.set_attribute(sc.TOOLTAP_HANDLER_DURATION, time.monotonic() - self._started)
            if is_error:
                entry.handler_error = error_type or sc.ERROR_TOOL
                span.set_attribute(sc.ERROR_TYPE, entry.handler_error)
                span.set_status(Status(StatusCode.ERROR, entry.handler_error))
            if self._capture:
                span.set_attribute(sc.GEN_AI_TOOL_CALL_RESULT, to_json(output))
        except Exception as exc:  # noqa: BLE001
            _report(exc)


_NOOP: Final = Execution(None, False)


def _report(exc: BaseException) -> None:
    report(exc, "lifecycle")


def _open_execution(tel: Telemetry, call: ToolCall, side_effects: bool) -> Execution:
    lifecycle = tel.lifecycle
    entry = lifecycle.find(call)
    if entry is None:  # the tap never saw this call: open (and register) its span now
        parent = trace.get_current_span()
        entry = lifecycle.received(
            call,
            parent=parent if parent.get_span_context().is_valid else None,
            provider=sc.provider_name(call.dialect) if call.dialect else call.provider,
            label=tel.tool_names.label(call.name, None),
        )
    entry.handled = True
    entry.span.set_attribute(sc.TOOLTAP_SIDE_EFFECTS, side_effects)
    return Execution(entry, tel.config.content_on_span)


@contextmanager
def tool_execution(call: ToolCall, *, side_effects: bool = False) -> Iterator[Execution]:
    """Record a harness's handler run on THE ``execute_tool`` span of ``call``.

    The span is the one the wire tap opened when it saw the call; if it never did,
    one is opened now and registered, so the wire never opens a second one. It ends
    when the result is sent (or as orphaned). An exception escaping the block is
    recorded as the handler's error and re-raised unchanged. No-op when not
    instrumented.
    """
    from .telemetry import get_telemetry

    tel = get_telemetry()
    execution = _NOOP
    if tel is not None:
        try:
            execution = _open_execution(tel, call, side_effects)
        except Exception as exc:  # noqa: BLE001
            _report(exc)
    try:
        yield execution
    except BaseException as exc:
        execution.record_result(None, is_error=True, error_type=type(exc).__name__)
        raise
