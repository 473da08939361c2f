"""The shape every dialect module follows: a stream reducer and a whole-body parser."""

from __future__ import annotations

from typing import Any, Protocol

from ..model import Limits, Parsed, ToolCall
from ..sse import SSEEvent
from ._fragments import Fragments

#: What a reducer arms the stream parser with: the head and tail of an argument delta of
#: the open call (exact but for ``match_run``'s slots: a sequence number, a random
#: padding value), and that call's fragments (see ``StreamParser.feed``).
Armed = tuple[bytes, bytes, Fragments]

__all__ = ["Armed", "DialectModule", "Reducer"]


class Reducer(Protocol):
    """Folds one response's SSE events into tool calls (one instance per response).

    ``armed``: None, or the head and tail of a one-event argument delta of the open call
    and its ``Fragments``: a chunk that is head + valid string body + tail (slots filled)
    has the same effect as appending that body to the fragments' open escaped run.
    """

    armed: Armed | None

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
