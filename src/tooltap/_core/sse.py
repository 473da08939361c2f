"""Incremental Server-Sent Events decoder (WHATWG rules), sans-I/O.

Lines are split on bytes (LF, CR or CRLF), so a UTF-8 character cut between
two chunks stays intact; ``data`` stays bytes for the JSON parser to decode.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["SSEEvent", "SSEParser"]

_BOM = b"\xef\xbb\xbf"  # a UTF-8 byte order mark the stream may start with (WHATWG)


class SSEEvent(NamedTuple):
    """One dispatched event. ``terminated`` is False for an event flushed at EOF."""

    event: str
    data: bytes
    id: str | None = None
    terminated: bool = True


class SSEParser:
    """Feed bytes, get events; ``close()`` flushes what is left at EOF.

    An event larger than ``max_event_bytes`` is dropped whole (up to its blank
    line) and counted in ``dropped_events``; memory stays under the cap.

    ``idle`` is True between events (nothing pending, the start of the stream
    settled): a chunk that then ends on a blank line is whole events, which a
    caller may split on ``\n\n`` itself, feeding back the blocks it cannot handle.
    """

    __slots__ = (
        "_data",
        "_discarding",
        "_event",
        "_head",
        "_id",
        "_parts",
        "_pending",
        "_size",
        "_skip_lf",
        "dropped_events",
        "idle",
        "max_event_bytes",
    )

    def __init__(self, max_event_bytes: int = 8 * 1024 * 1024) -> None:
        self._parts: list[bytes] = []  # pieces of the current, unfinished line
        self._pending = 0  # bytes held in _parts
        self._skip_lf = False  # the last chunk ended on CR: drop a leading LF
        self._event = ""
        self._data: list[bytes] = []
        self._size = 0
        self._id: str | None = None
        self._discarding = False
        self._head: bytes | None = b""  # start of stream, until a leading BOM is ruled out
        self.max_event_bytes = max_event_bytes
        self.dropped_events = 0
        self.idle = False

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Take the next chunk; return the events it completes, in order."""
        events = self._feed(data)
        self.idle = self._head is None and not (
            self._parts or self._data or self._event or self._skip_lf or self._discarding
        )
        return events

    def _feed(self, data: bytes) -> list[SSEEvent]:
        if self._head is not None:
            head = self._head + data
            if len(head) < len(_BOM) and _BOM.startswith(head):
                self._head = head  # could still be a BOM cut between chunks
                return []
            self._head = None
            data = head.removeprefix(_BOM)
        if self._skip_lf and data:
            self._skip_lf = False
            if data[:1] == b"\n":
                data = data[1:]
        cr = data.find(b"\r") >= 0  # (held parts never have one)
        if not cr and data.find(b"\n") < 0:
            if data:
                self._hold(data)
            return []
        if self._parts:
            self._parts.append(data)
            data = b"".join(self._parts)
            self._parts = []
            self._pending = 0
        if cr:  # CR or CRLF line ends: split on all three in one pass
            if data[-1:] == b"\r":
                self._skip_lf = True
            lines = data.splitlines()  # (``replace(b"\r\n", ...)`` first: ~10x slower)
            rest = b"" if data[-1:] in (b"\n", b"\r") else lines.pop()
        else:
            lines = data.split(b"\n")
            rest = lines.pop()
        events: list[SSEEvent] = []
        for line in lines:
            self._line(line, events)
        if rest:
            self._hold(rest)
        return events

    def close(self) -> list[SSEEvent]:
        """End of stream: process a last unterminated line and event, if any."""
        events: list[SSEEvent] = []
        if self._head:  # the whole stream was a partial BOM: not a BOM after all
            self._parts = [self._head]
        self._head = None
        if self._parts:
            line = b"".join(self._parts)
            self._parts = []
            self._pending = 0
            self._line(line, events)
        if self._data and not self._discarding:
            events.append(
                SSEEvent(self._event or "message", b"\n".join(self._data), self._id, False)
            )
        elif self._discarding:
            self.dropped_events += 1
        self._reset()
        self._discarding = False
        self.idle = False
        return events

    def _hold(self, piece: bytes) -> None:
        if self._discarding:
            return
        self._pending += len(piece)
        if self._pending + self._size > self.max_event_bytes:
            self._parts = []
            self._pending = 0
            self._reset()
            self._discarding = True
            return
        self._parts.append(piece)

    def _reset(self) -> None:
        self._event = ""
        self._data = []
        self._size = 0

    def _line(self, line: bytes, events: list[SSEEvent]) -> None:
        if not line:
            if self._discarding:
                self._discarding = False
                self.dropped_events += 1
            elif self._data:
                events.append(SSEEvent(self._event or "message", b"\n".join(self._data), self._id))
            self._reset()
            return
        if self._discarding or line[0] == 0x3A:  # ":" starts a comment
            return
        if len(line) > self.max_event_bytes:  # a huge line that arrived in one chunk
            self._reset()
            self._discarding = True
            return
        name, colon, value = line.partition(b":")
        if colon and value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            self._size += len(value) + 1
            if self._size > self.max_event_bytes:
                self._reset()
                self._discarding = True
                return
            self._data.append(value)
        elif name == b"event":
            self._event = value.decode("utf-8", "replace")
        elif name == b"id" and b"\0" not in value:
            self._id = value.decode("utf-8", "replace")
        # "retry" and unknown fields are ignored, as the spec says.
