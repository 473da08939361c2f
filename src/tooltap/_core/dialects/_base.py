"""The shape every dialect module follows: a stream reducer and a whole-body parser."""

from __future__ import annotations

from typing import Any, Protocol

from ..model import Limits, Parsed, ToolCall
from ..sse import SSEEvent

__all__ = ["DialectModule", "Reducer"]


class Reducer(Protocol):
    """Folds one response's SSE events into tool calls (one instance per response).

    A reducer may also have ``fast(event_bytes) -> bool``: apply one whole event whose
    effect is certain from its bytes (see ``StreamParser``), or return False, unchanged.
    """

    def __init__(self, limits: Limits) -> None: ...

    def event(self, ev: SSEEvent) -> list[ToolCall]:
        """Take one event; return the calls it completes, in order."""
        ...

    def finish(self) -> Parsed:
        """End of stream: everything learnt, with problems for what stayed incomplete."""
        ...


class DialectModule(Protocol):
    """A dialect file exposes ``Reducer`` and ``parse_body``."""

    Reducer: type[Reducer]

    def parse_body(self, body: Any, limits: Limits, *, size: int | None = None) -> Parsed:
        """Parse one whole, decoded JSON body (a Mapping, or a list for Google arrays).

        ``size``: the body's encoded length, when it was decoded from bytes.
        """
        ...
