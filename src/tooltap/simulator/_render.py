"""Rendering helpers shared by the wire modules: the Rendered result, SSE framing, cut points."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from ._scenario import IdStyle, Reply, Turn

__all__ = [
    "Rendered",
    "Wire",
    "args_cut",
    "body_cut",
    "dumps",
    "fragments",
    "json_response",
    "sse",
]


@dataclass(slots=True)
class Rendered:
    """A provider response before faults and framing.

    ``chunks`` holds one item per SSE event for a stream, or the whole body otherwise.
    ``mark`` is how many events come before a mid-stream ``error_event`` (the first call has
    started and received some arguments); ``cut`` is a byte offset in the middle of the
    second call's arguments (``truncate_args``), or None when the reply has no such call.
    """

    status: int
    headers: list[tuple[str, str]]
    chunks: list[bytes]
    stream: bool = False
    mark: int = 1
    cut: int | None = None

    @property
    def body(self) -> bytes:
        """The whole body."""
        return b"".join(self.chunks)


def dumps(value: Any, *, spaced: bool = False) -> str:
    """Compact JSON (``spaced`` puts a space after colons, as Google's SSE does)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ": " if spaced else ":"))


def sse(data: Any, event: str | None = None, *, crlf: bool = False) -> bytes:
    """One SSE event carrying ``data`` (a dict, or an already-encoded string)."""
    text = data if isinstance(data, str) else dumps(data, spaced=crlf)
    nl = "\r\n" if crlf else "\n"
    head = f"event: {event}{nl}" if event else ""
    return f"{head}data: {text}{nl}{nl}".encode()


def fragments(text: str, size: int) -> list[str]:
    """``text`` cut into pieces of ``size`` characters (at least one piece)."""
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def json_response(
    status: int, value: Any, headers: list[tuple[str, str]] | None = None
) -> Rendered:
    """A non-streamed JSON response."""
    head = [("content-type", "application/json"), *(headers or [])]
    return Rendered(status, head, [dumps(value).encode()])


def args_cut(chunks: list[bytes], first: int, count: int) -> int:
    """A byte offset inside a call's arguments spread over ``chunks[first:first+count]``.

    With two or more argument events the stream stops after half of them (an event
    boundary); with one, it stops in the middle of that event.
    """
    before = sum(len(c) for c in chunks[:first])
    if count >= 2:
        return before + sum(len(c) for c in chunks[first : first + count // 2])
    return before + len(chunks[first]) // 2


def body_cut(body: bytes, marker: bytes, occurrence: int, needle: bytes) -> int | None:
    """The middle of ``needle`` after the ``occurrence``-th (0-based) ``marker`` in ``body``."""
    at = -1
    for _ in range(occurrence + 1):
        at = body.find(marker, at + 1)
        if at < 0:
            return None
    start = body.find(needle, at)
    return None if start < 0 else start + max(1, len(needle) // 2)


class Wire(IdStyle, Protocol):
    """One provider dialect: spells its ids, reads its requests, writes responses and errors."""

    dialect: str

    def read(self, body: Any, path: str, query: str) -> Turn:
        """The turn a decoded request body asks for (TypeError/ValueError when malformed)."""
        ...

    def render(self, reply: Reply, turn: Turn, *, fragment: int, no_ids: bool) -> Rendered:
        """The response to ``turn``, streamed when ``turn.stream``."""
        ...

    def error(
        self, kind: str, status: int, message: str, retry_after: float | None = None
    ) -> Rendered:
        """A provider-native error response.

        ``kind``: invalid_request, not_found, rate_limit, insufficient_balance, server_error
        or overloaded.
        """
        ...

    def stream_error(self, reply: Reply, sequence: int) -> bytes:
        """A provider-native error event sent in the middle of a stream."""
        ...
