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

from .._core.model import ToolCall
from .._quietly import quietly
from .._telemetry.execution import NO_EXECUTION, Execution, find_execution, tool_execution

__all__ = ["note_in_doubt", "note_replay", "observed"]


@contextmanager
def observed(call: ToolCall, *, side_effects: bool) -> Iterator[Execution]:
    """The call's execute_tool span (found or opened), current around its handler runs
    (``NO_EXECUTION`` when it cannot be had)."""
    with ExitStack() as stack:
        execution = quietly(stack.enter_context, tool_execution(call, side_effects=side_effects))
        yield NO_EXECUTION if execution is None else execution


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
