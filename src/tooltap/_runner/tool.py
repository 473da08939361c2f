"""One registered tool: its name, schema, handler and how it may be run."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .policy import NO_RETRY, RetryPolicy

__all__ = ["Tool"]


@dataclass(frozen=True, slots=True)
class Tool:
    """One registered tool. ``handler(**args)`` may be sync or async."""

    name: str
    handler: Callable[..., Any]
    schema: dict[str, Any] = field(hash=False)
    description: str = ""
    side_effects: bool = False
    retry: RetryPolicy = NO_RETRY
    #: Maps validated args to a key naming the effect, so a re-sent call under a new
    #: call id (same key) is not executed twice either.
    idempotency_key: Callable[[dict[str, Any]], str] | None = None
    #: Seconds one attempt may take (None: no limit). A read-only tool that takes
    #: longer fails the attempt (retried per ``retry``); a side-effecting one is in doubt.
    timeout: float | None = None

    @property
    def is_async(self) -> bool:
        """Whether the handler is a coroutine function."""
        return inspect.iscoroutinefunction(self.handler)
