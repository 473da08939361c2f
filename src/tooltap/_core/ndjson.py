"""Incremental newline-delimited JSON framing (Ollama's streams), sans-I/O.

Each non-blank line is one event (``SSEEvent("message", line)``); a line longer than
``max_event_bytes`` is dropped whole (counted in ``dropped_events``) without being held.
"""

from __future__ import annotations

from .sse import SSEEvent

__all__ = ["NDJSONParser"]


class NDJSONParser:
    """Feed bytes, get one event per line; ``close()`` flushes an unterminated last line."""

    __slots__ = ("_discarding", "_parts", "_pending", "dropped_events", "max_event_bytes")

    def __init__(self, max_event_bytes: int = 8 * 1024 * 1024) -> None:
        self._parts: list[bytes] = []
        self._pending = 0
        self._discarding = False
        self.max_event_bytes = max_event_bytes
        self.dropped_events = 0

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Take the next chunk; return the lines it completes, as events."""
        events: list[SSEEvent] = []
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                self._hold(data[start:])
                return events
            piece = data[start:end]
            start = end + 1
            if self._discarding:
                self._discarding = False
                self.dropped_events += 1
                continue
            if self._parts:
                self._parts.append(piece)
                piece = b"".join(self._parts)
                self._parts, self._pending = [], 0
            if len(piece) > self.max_event_bytes:
                self.dropped_events += 1
            elif piece.strip():
                events.append(SSEEvent("message", piece.rstrip(b"\r")))

    def _hold(self, piece: bytes) -> None:
        if self._discarding or not piece:
            return
        self._pending += len(piece)
        if self._pending > self.max_event_bytes:
            self._parts, self._pending = [], 0
            self._discarding = True
            return
        self._parts.append(piece)

    def close(self) -> list[SSEEvent]:
        """End of the body: an unterminated last line (``terminated=False``), if any."""
        line = b"".join(self._parts)
        self._parts, self._pending = [], 0
        if self._discarding:
            self._discarding = False
            self.dropped_events += 1
            return []
        return [SSEEvent("message", line, None, False)] if line.strip() else []
