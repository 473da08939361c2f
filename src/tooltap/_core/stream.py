"""Public entry points of the core: a stream parser and a whole-body parser."""

from __future__ import annotations

import dataclasses
import logging
import os
import re
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

from ._json import loads
from .dialects import dialect as dialect_entry
from .dialects._base import Reducer
from .eventstream import EventStreamDecoder, events, looks_like_eventstream
from .model import Limits, Parsed, Problem, ToolCall
from .ndjson import NDJSONParser
from .problems import ProblemKind
from .sse import SSEEvent, SSEParser

__all__ = [
    "FAST_PATHS_ENV",
    "Framing",
    "StreamParser",
    "fast_paths",
    "framing_of",
    "parse_response",
]

#: How a stream's events are framed: SSE, AWS event-stream binary messages, or one JSON
#: object per line (Ollama).
Framing = Literal["sse", "eventstream", "ndjson"]
#: ``TOOLTAP_FAST_PATHS=0`` turns the dialects' fast paths off: every event takes the full
#: path (the results are the same; a check, and the benchmark's on/off figure).
FAST_PATHS_ENV: Final = "TOOLTAP_FAST_PATHS"

_log = logging.getLogger("tooltap")
#: Content types of streams, by their framing.
_STREAM_TYPES: Final[tuple[tuple[str, Framing], ...]] = (
    ("text/event-stream", "sse"),
    ("application/vnd.amazon.eventstream", "eventstream"),  # Bedrock
    ("application/x-ndjson", "ndjson"),  # Ollama
)


def framing_of(content_type: str) -> Framing | None:
    """The stream framing a response's ``Content-Type`` names; None for any other type."""
    kind = content_type.lower()
    for prefix, framing in _STREAM_TYPES:
        if kind.startswith(prefix):
            return framing
    return None


#: Three or more LFs in a row: an event boundary, then blank lines that do nothing (any run
#: of two or more line ends means the same as two).
_BLANK_RUN = re.compile(rb"\n{3,}")


def fast_paths() -> bool:
    """Whether the dialects' fast paths are on (``TOOLTAP_FAST_PATHS`` is not ``0``)."""
    return os.environ.get(FAST_PATHS_ENV) != "0"


class StreamParser:
    """Incremental tool-call parser for one streamed response.

    ``feed(chunk)`` returns the calls that chunk completed; ``close()`` returns the
    whole ``Parsed``. The parser is total: malformed input becomes problems. Runs of
    blank lines (padding, which dispatches nothing) are collapsed in one step.

    Fast path, at an event boundary (the SSE decoder idle): the chunk, then each whole
    event of it, goes first to the reducer's ``fast(event) -> bool`` (if it has one),
    which applies a chunk that is exactly one event whose effect is certain from its
    bytes (an argument delta of an open call, a text delta) without building an event or
    decoding JSON, and declines any other chunk (several events, a partial one, CR line
    ends, blank-line padding); what it declines takes the full path (SSE decoder, JSON,
    ``Reducer.event``). A chunk that starts inside an event goes to the decoder only up
    to the end of that event. CRLF line ends are taken as LF ones first (unless a lone CR
    is in the chunk), so they take the fast path too. ``TOOLTAP_FAST_PATHS=0`` (read
    when a parser is made) turns the fast paths off.

    ``framing="eventstream"``: the body is AWS event-stream messages (Bedrock), each
    handed to the reducer as one event (``eventstream.events``); a message the decoder
    skips (a checksum mismatch, over ``max_event_bytes``) is a problem at ``close``.
    ``framing="ndjson"``: each line is one event (``ndjson``).
    """

    __slots__ = (
        "_cap",
        "_closed",
        "_eventstream",
        "_fast",
        "_faults",
        "_kept",
        "_limit",
        "_lines",
        "_match",
        "_reducer",
        "_returned",
        "_sse",
        "dialect",
        "limits",
    )

    def __init__(
        self,
        dialect: str,
        *,
        limits: Limits | None = None,
        framing: Framing = "sse",
        reducer: Reducer | None = None,
    ) -> None:
        """``reducer``: the dialect's reducer to go on with, for bytes that start at an
        event boundary after the events it took (``Reducer.fork``); else a new one."""
        self.dialect = dialect
        self.limits = limits or Limits()
        self._cap = self.limits.max_event_bytes
        self._sse = SSEParser(self._cap)
        self._reducer = (
            reducer if reducer is not None else dialect_entry(dialect).reducer(self.limits)
        )
        self._eventstream = EventStreamDecoder(self._cap) if framing == "eventstream" else None
        self._lines = NDJSONParser(self._cap) if framing == "ndjson" else None
        self._fast: Callable[[bytes], bool] | None = (
            getattr(self._reducer, "fast", None) if framing == "sse" and fast_paths() else None
        )
        self._faults: list[Problem] = []
        self._closed: Parsed | None = None
        self._returned = 0  # calls handed on by ``feed``
        self._kept: int | None = None  # of those, how many before an event was dropped

    def feed(self, chunk: bytes) -> list[ToolCall]:
        """Take the next bytes of the body; return the calls they complete, in order.

        Once the decoder has dropped an event (over ``max_event_bytes``), no call completes
        any more: one might miss that event's bytes (``close`` says which, as problems)."""
        if self._eventstream is not None:
            messages = self._eventstream.feed(chunk)
            calls = self._events(events(messages)) if messages else []
            self._returned += len(calls)
            return calls
        if self._lines is not None:
            lines = self._lines.feed(chunk)
            calls = self._events(lines) if lines else []
            self._returned += len(calls)
            return calls
        if chunk.find(b"\r") >= 0:
            chunk = _lf(chunk)
        fast = self._fast
        if fast is not None and self._sse.idle and len(chunk) <= self._cap:
            try:  # most chunks: one event the fast path takes (it checks the chunk's shape)
                if fast(chunk):
                    return []
            except Exception as exc:  # noqa: BLE001 - the core is total
                self._fault("fast path", exc)
                return []
            # ``find``, not ``in``: CPython takes a bytes operand of ``in`` for an int
            # first, raising and formatting a TypeError on every test.
            if chunk.endswith(b"\n\n") and chunk.find(b"\r") < 0 and chunk.find(b"\n\n\n") < 0:
                calls = self._rest(fast, chunk, 0, offered=True)  # whole events, LF only
            else:
                calls = self._feed(chunk)
        else:
            calls = self._feed(chunk)
        if self._sse.dropped_events:
            if self._kept is None:
                self._kept = self._returned
            return []
        if calls:
            self._returned += len(calls)
        return calls

    def _feed(self, chunk: bytes) -> list[ToolCall]:
        sse = self._sse
        cr = chunk.find(b"\r") >= 0
        if not cr and chunk.find(b"\n") < 0:  # within one line: nothing completes
            sse.feed(chunk)
            return []
        if cr and chunk.find(b"\r\n\r\n\r\n") >= 0:  # CRLF padding: as LFs
            chunk = chunk.replace(b"\r\n\r\n", b"\n\n")  # (two line ends stay two)
        if chunk.find(b"\n\n\n") >= 0:  # padding: skipped in one step
            chunk = _BLANK_RUN.sub(b"\n\n", chunk)
        if not sse.idle:
            return self._resume(chunk)
        fast = self._fast
        if fast is None:
            events = sse.feed(chunk)
            return self._events(events) if events else []
        if len(chunk) <= self._cap and chunk.endswith(b"\n\n"):
            try:
                if fast(chunk):  # most chunks: one event the fast path takes
                    return []
            except Exception as exc:  # noqa: BLE001 - the core is total
                self._fault("fast path", exc)
                return []
            return self._rest(fast, chunk, 0, offered=True)
        return self._rest(fast, chunk, 0, offered=False)

    def _resume(self, chunk: bytes) -> list[ToolCall]:
        """A chunk that starts inside an event (reads that cut events): the decoder takes
        it up to the first blank line, which ends that event; the rest, from an event
        boundary again, takes the fast path instead of staying in the decoder for good."""
        sse, fast = self._sse, self._fast
        cut = chunk.find(b"\n\n") + 2
        if fast is None or cut < 2 or cut == len(chunk):
            events = sse.feed(chunk)
            return self._events(events) if events else []
        events = sse.feed(chunk[:cut])
        calls = self._events(events) if events else []
        if sse.idle:
            return calls + self._rest(fast, chunk, cut, offered=False)
        events = sse.feed(chunk[cut:])
        return calls + self._events(events) if events else calls

    def _rest(
        self, fast: Callable[[bytes], bool], chunk: bytes, pos: int, *, offered: bool
    ) -> list[ToolCall]:
        """``chunk`` from ``pos`` (an event boundary): whole events one by one, each to
        ``fast`` (unless ``offered``: the chunk is that event and ``fast`` declined it),
        else through the SSE decoder; a partial last event to the decoder."""
        calls: list[ToolCall] = []
        sse, n = self._sse, len(chunk)
        while pos < n and sse.idle:
            stop = chunk.find(b"\n\n", pos) + 2
            if stop < 2:
                break  # a partial event
            one = chunk if stop - pos == n else chunk[pos:stop]
            pos = stop
            try:
                if not (offered and one is chunk) and len(one) <= self._cap and fast(one):
                    continue
            except Exception as exc:  # noqa: BLE001 - the core is total
                self._fault("fast path", exc)
                continue
            events = sse.feed(one)
            if events:
                calls += self._events(events)
        if pos < n:
            events = sse.feed(chunk[pos:] if pos else chunk)
            if events:
                calls += self._events(events)
        return calls

    def _events(self, events: list[SSEEvent]) -> list[ToolCall]:
        calls: list[ToolCall] = []
        event = self._reducer.event
        for ev in events:
            try:
                calls += event(ev)
            except Exception as exc:  # noqa: BLE001 - the core is total
                self._fault(ev.event, exc)
        return calls

    def _fault(self, where: str, exc: Exception) -> None:
        """A reducer raised (a tooltap bug): a problem for the response, and a debug log."""
        _log.debug(
            "tooltap: %s reducer raised on %s (contained)", self.dialect, where, exc_info=exc
        )
        self._faults.append(Problem("unexpected_shape", detail=f"{where}: {exc!r}"))

    def close(self) -> Parsed:
        """End of the body. Idempotent: a second call returns the same value."""
        if self._closed is not None:
            return self._closed
        tail = self._lines.close() if self._lines is not None else self._sse.close()
        for ev in tail:
            try:
                self._reducer.event(ev)
            except Exception as exc:  # noqa: BLE001
                self._fault(ev.event, exc)
        parsed = self._reducer.finish()
        extra = list(self._faults)
        if self._eventstream is not None:
            self._eventstream.close()
            extra += [_framing_problem(p) for p in self._eventstream.problems]
        if self._lines is not None and self._lines.dropped_events:
            detail = f"line over {self.limits.max_event_bytes} bytes"
            extra += [Problem("oversized_event", detail=detail)] * self._lines.dropped_events
        detail = f"event over {self.limits.max_event_bytes} bytes"
        unseen = parsed.calls[self._returned if self._kept is None else self._kept :]
        if self._sse.dropped_events and unseen:  # completed after a drop: not calls
            extra += [
                Problem(
                    "oversized_event",
                    call_index=c.index,
                    call_id=c.call_id,
                    name=c.name,
                    detail=f"{detail} dropped while the call was open",
                    received=c.raw_arguments,
                )
                for c in unseen
            ]
            parsed = dataclasses.replace(
                parsed, calls=parsed.calls[: len(parsed.calls) - len(unseen)]
            )
        else:
            extra += [Problem("oversized_event", detail=detail)] * self._sse.dropped_events
        if extra:
            parsed = dataclasses.replace(parsed, problems=parsed.problems + tuple(extra))
        self._closed = parsed
        return parsed


def _lf(chunk: bytes) -> bytes:
    """A chunk with CRLF line ends as LF ones (the same lines to SSE, and the fast paths
    take them); a chunk with a lone CR, or ending in one, as it is."""
    if chunk.endswith(b"\r") or chunk.count(b"\r") != chunk.count(b"\r\n"):
        return chunk
    return chunk.replace(b"\r\n", b"\n")


def _framing_problem(detail: str) -> Problem:
    kind: ProblemKind = "oversized_event" if "over the limit" in detail else "unexpected_shape"
    return Problem(kind, detail=f"event-stream: {detail}")


def parse_response(
    body: bytes | str | Mapping[str, Any] | Any, dialect: str, *, limits: Limits | None = None
) -> Parsed:
    """Parse one whole response: JSON or SSE bytes/text, a decoded dict, or an SDK object."""
    limits = limits or Limits()
    entry = dialect_entry(dialect)
    if isinstance(body, str):
        body = body.encode("utf-8")
    if isinstance(body, (bytes, bytearray, memoryview)):
        raw = bytes(body)
        if looks_like_eventstream(raw):
            parser = StreamParser(dialect, limits=limits, framing="eventstream")
            parser.feed(raw)
            return parser.close()
        head = raw.lstrip()[:6]
        if head.startswith((b"data:", b"event:", b":", b"id:")):
            parser = StreamParser(dialect, limits=limits)
            parser.feed(raw)
            return parser.close()
        try:
            decoded = loads(raw)
        except (ValueError, RecursionError) as exc:
            if raw.strip().startswith(b"{") and raw.find(b"}\n") >= 0:  # one object a line
                parser = StreamParser(dialect, limits=limits, framing="ndjson")
                parser.feed(raw)
                return parser.close()
            return Parsed(dialect, problems=(Problem("unexpected_shape", detail=f"body: {exc}"),))
        return entry.parse_body(decoded, limits, size=len(raw))
    if not isinstance(body, (Mapping, list)):
        dump = getattr(body, "model_dump", None)
        if dump is None:
            return Parsed(
                dialect,
                problems=(Problem("unexpected_shape", detail=f"body is {type(body).__name__}"),),
            )
        body = dump(mode="json", by_alias=True, exclude_none=True)
    return entry.parse_body(body, limits)
