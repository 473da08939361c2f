"""What running one turn produced: the messages to send back and an outcome per call."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .._core.model import Problem, ToolCall

__all__ = ["Outcome", "Status", "TurnResult"]

#: ``ok``: the handler ran and succeeded. ``error``: it ran and failed (after retries).
#: ``invalid``: arguments unparsable or against the schema, not run. ``undeclared``: no
#: such tool, not run. ``replayed``: already executed (same call id or idempotency key),
#: its stored result is sent again. ``in_doubt``: a side-effecting run started (here and
#: timed out, or earlier or elsewhere and never reported back), so it is not repeated.
Status = Literal["ok", "error", "invalid", "undeclared", "replayed", "in_doubt"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """The fate of one call. ``output`` is what the model receives for it."""

    call: ToolCall
    status: Status
    output: Any = field(default=None, hash=False)
    is_error: bool = False
    error_type: str | None = None
    attempts: int = 0
    #: Seconds spent inside the handler, over all attempts.
    duration: float = 0.0
    problems: tuple[Problem, ...] = ()
    #: The handler's last exception, kept for diagnosis (the model sees only a message).
    exception: BaseException | None = field(default=None, compare=False)
    #: False for a repeated call id within the turn: it is answered once, not twice.
    sent: bool = True

    @property
    def call_id(self) -> str | None:
        """The provider's id of the call."""
        return self.call.call_id

    @property
    def executed(self) -> bool:
        """Whether the handler ran in this turn."""
        return self.attempts > 0


@dataclass(frozen=True, slots=True)
class TurnResult:
    """Results of one turn: ``messages`` go at the end of the next request, as they are."""

    dialect: str
    messages: list[dict[str, Any]] = field(hash=False)
    outcomes: tuple[Outcome, ...] = ()

    def outcome(self, call_id: str) -> Outcome:
        """The outcome of the call with ``call_id`` (KeyError if none)."""
        for item in self.outcomes:
            if item.call_id == call_id:
                return item
        raise KeyError(call_id)

    @property
    def by_id(self) -> dict[str, Outcome]:
        """Outcomes by call id (calls without an id are left out)."""
        return {o.call_id: o for o in self.outcomes if o.call_id is not None and o.sent}

    @property
    def ok(self) -> bool:
        """True when every call ran (now or before) without an error."""
        return all(o.status in ("ok", "replayed") and not o.is_error for o in self.outcomes)
