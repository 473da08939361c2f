"""The runner's side of telemetry: the handler run on THE execute_tool span of its call id.

Executions go through ``tool_execution`` (which finds the span the wire tap opened, or
opens and registers it). Retries and replays are annotated on that same span. Nothing
here ever raises into the harness; everything is a no-op when tooltap is not
instrumented.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, Final, Protocol

from .._core.model import ToolCall
from .._patch.quietly import quietly
from .._telemetry.execution import Execution, tool_execution
from .._telemetry.telemetry import get_telemetry

__all__ = [
    "ATTEMPTS",
    "EVENT_REPLAYED",
    "EVENT_RETRY",
    "LEDGER_STATE",
    "REPLAYED",
    "ExecutionSpan",
    "note_replay",
    "observed",
]

#: Span attribute: how many times the handler ran for this call.
ATTEMPTS: Final = "tooltap.tool.attempts"
#: Span event: a handler attempt failed and will be retried (``error.type``, attempt).
EVENT_RETRY: Final = "tooltap.tool.retry"
#: Span event (and boolean attribute): the call was already executed (or started:
#: ``tooltap.ledger.state`` pending); its stored result was sent instead of a new run.
EVENT_REPLAYED: Final = "tooltap.tool.replayed"
REPLAYED: Final = "tooltap.tool.replayed"
LEDGER_STATE: Final = "tooltap.ledger.state"
_ERROR_TYPE: Final = "error.type"


class _Span(Protocol):
    def add_event(self, name: str, attributes: dict[str, Any]) -> Any: ...
    def set_attribute(self, key: str, value: Any) -> Any: ...


def _span_of(call: ToolCall) -> _Span | None:
    """The open execute_tool span of ``call``, if tooltap is instrumented and has one."""
    tel = get_telemetry()
    if tel is None:
        return None
    entry = tel.lifecycle.find(call)
    return entry.span if entry is not None else None


class ExecutionSpan:
    """What the runner records while one call's handler runs; every method is guarded."""

    __slots__ = ("_execution", "_span")

    def __init__(self, execution: Execution | None, span: _Span | None) -> None:
        self._execution = execution
        self._span = span

    def retrying(self, attempt: int, error_type: str) -> None:
        """Attempt ``attempt`` failed with ``error_type``; another one follows."""
        if self._span is not None:
            attributes = {_ERROR_TYPE: error_type, ATTEMPTS: attempt}
            quietly(self._span.add_event, EVENT_RETRY, attributes)

    def record(
        self, output: Any, *, is_error: bool, attempts: int, error_type: str | None = None
    ) -> None:
        """The handler's final outcome, after ``attempts`` runs."""
        if self._span is not None:
            quietly(self._span.set_attribute, ATTEMPTS, attempts)
        if self._execution is not None:
            quietly(self._execution.record_result, output, is_error=is_error, error_type=error_type)


@contextmanager
def observed(call: ToolCall, *, side_effects: bool) -> Iterator[ExecutionSpan]:
    """Open (or find) the call's execute_tool span around its handler runs."""
    with ExitStack() as stack:
        before = quietly(_span_of, call)  # id-less calls are found only before the run
        execution = quietly(stack.enter_context, tool_execution(call, side_effects=side_effects))
        span = before if before is not None else quietly(_span_of, call)
        yield ExecutionSpan(execution, span)


def note_replay(call: ToolCall, *, state: str) -> None:
    """Mark the call's span (if the tap opened one for it) as answered from the ledger."""
    span = quietly(_span_of, call)
    if span is not None:
        quietly(span.add_event, EVENT_REPLAYED, {LEDGER_STATE: state})
        quietly(span.set_attribute, REPLAYED, True)
