"""The runner's side of telemetry: the handler runs on THE execute_tool span of a call id.

Runs go through ``tool_execution``, which finds the span the wire tap opened (or opens
and registers it) and makes it current while the handler runs; retries, attempts and
ledger replays are recorded through ``Execution``'s methods (names in ``semconv``).
Nothing here ever raises into the harness; everything is a no-op when tooltap is not
instrumented.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from .._core.model import ToolCall
from .._quietly import quietly
from .._telemetry.execution import Execution, find_execution, tool_execution

__all__ = ["ExecutionSpan", "note_in_doubt", "note_replay", "observed"]


class ExecutionSpan:
    """What the runner records while one call's handler runs (no-op without an execution)."""

    __slots__ = ("_execution",)

    def __init__(self, execution: Execution | None) -> None:
        self._execution = execution

    def retrying(self, attempt: int, error_type: str) -> None:
        """Attempt ``attempt`` failed with ``error_type``; another one follows."""
        if self._execution is not None:
            self._execution.record_retry(attempt, error_type)

    def in_doubt(self, reason: str) -> None:
        """This run's outcome is unknown (``reason``: ``timeout``); it is not repeated."""
        if self._execution is not None:
            self._execution.record_in_doubt(reason)

    def record(
        self, output: Any, *, is_error: bool, attempts: int, error_type: str | None = None
    ) -> None:
        """The handler's final outcome, after ``attempts`` runs."""
        if self._execution is not None:
            self._execution.record_result(
                output, is_error=is_error, error_type=error_type, attempts=attempts
            )


@contextmanager
def observed(call: ToolCall, *, side_effects: bool) -> Iterator[ExecutionSpan]:
    """The call's execute_tool span (found or opened), current around its handler runs."""
    with ExitStack() as stack:
        execution = quietly(stack.enter_context, tool_execution(call, side_effects=side_effects))
        yield ExecutionSpan(execution)


def note_replay(call: ToolCall, *, state: str) -> None:
    """Mark the call's open span (if any) as answered from the ledger, not run."""
    execution = quietly(find_execution, call)
    if execution is not None:
        execution.record_replay(state)


def note_in_doubt(call: ToolCall, *, reason: str) -> None:
    """Mark the call's open span (if any): an earlier run's outcome is unknown, not rerun."""
    execution = quietly(find_execution, call)
    if execution is not None:
        execution.record_in_doubt(reason)
