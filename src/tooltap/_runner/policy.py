"""Failure policy values: how often a read-only tool is retried, and a deliberate tool error."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["NO_RETRY", "RetryPolicy", "ToolError"]


class ToolError(Exception):
    """Raise from a handler to send ``message`` to the model as is; never retried.

    Any other exception is also turned into an error result, but as
    ``"ExceptionName: message"`` and after the tool's retries.
    """

    def __init__(self, message: str, *, error_type: str = "tool_error") -> None:
        super().__init__(message)
        self.message = message
        self.error_type = error_type


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Up to ``attempts`` runs, waiting ``initial_delay * multiplier**n`` (capped) in between."""

    attempts: int = 3
    initial_delay: float = 0.2
    multiplier: float = 2.0
    max_delay: float = 5.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("RetryPolicy.attempts must be at least 1")
        if self.initial_delay < 0 or self.max_delay < 0 or self.multiplier < 1:
            raise ValueError("RetryPolicy delays must be >= 0 and multiplier >= 1")

    def delays(self) -> Iterator[float]:
        """The waits between consecutive attempts (``attempts - 1`` values, growing)."""
        delay = self.initial_delay
        for _ in range(self.attempts - 1):
            yield min(delay, self.max_delay)
            delay *= self.multiplier


#: A single attempt: the default for tools with side effects.
NO_RETRY = RetryPolicy(attempts=1)
