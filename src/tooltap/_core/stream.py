"""Public entry points of the core: a stream parser and a whole-body parser."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from typing import Any

from ._json import loads, match_string
from .dialects import dialect_module
from .model import Limits, Parsed, Problem, ToolCall
from .sse import SSEEvent, SSEParser

__all__ = ["StreamParser", "parse_response"]

_log = logging.getLogger("tooltap")


class StreamParser:
    """Incremental tool-call parser for one streamed response.

    ``feed(chunk)`` returns the calls that chunk completed; ``close()`` returns the
    whole ``Parsed``. The parser is total: malformed input becomes problems.

    Hot path: when the SSE decoder is between events and the reducer is ``armed`` (the
    head and tail of the open call's argument deltas), a chunk that is exactly one such
    delta has its escaped fragment appended to the call's open run here (``match_string``:
    one C call when ``_speedups`` is built), which is most of a stream's chunks. Next,
    when the SSE decoder is between events and a chunk ends on a blank line,
    it goes first to the reducer's ``fast(chunk) -> bool`` (if it has one), which applies
    a chunk holding one event whose effect is certain from its bytes (an argument delta
    of the open call, a text delta) without building an event or decoding JSON, and
    returns False for anything else; a chunk of several events is split and each one
    offered to ``fast`` in turn. What ``fast`` declines takes the full path.
    """

    __slots__ = (
        "_cap",
        "_closed",
        "_fast",
        "_faults",
        "_limit",
        "_match",
        "_reducer",
        "_sse",
        "dialect",
        "limits",
    )

    def __init__(self, dialect: str, *, limits: Limits | None = None) -> None:
        self.dialect = dialect
        self.limits = limits or Limits()
        self._cap = self.limits.max_event_bytes
        self._limit = self.limits.max_argument_bytes
        self._match: Callable[[bytes, bytes, bytes], bytes | None] = match_string
        self._sse = SSEParser(self._cap)
        self._reducer = dialect_module(dialect).Reducer(self.limits)
        self._fast: Callable[[bytes], bool] | None = getattr(self._reducer, "fast", None)
        self._faults: list[Problem] = []
        self._closed: Parsed | None = None

    def feed(self, chunk: bytes) -> list[ToolCall]:
        """Take the next bytes of the body; return the calls they complete, in order."""
        armed = self._reducer.armed
        sse = self._sse
        if armed is not None and sse.idle and len(chunk) <= self._cap:
            try:
                raw = self._match(chunk, armed[0], armed[1])
            except Exception as exc:  # noqa: BLE001 - the core is total
                self._fault("fast path", exc)
                return []
            if raw is not None:  # Fragments.add_raw's usual case, inline
                fragments = armed[2]
                run, size = fragments.run, fragments.size + len(raw)
                if run is not None and size <= self._limit:
                    fragments.size = size
                    run += raw
                    return []
        fast = self._fast
        if fast is not None and sse.idle and chunk.endswith(b"\n\n"):
            try:
                if len(chunk) <= self._cap and fast(chunk):
                    return []
            except Exception as exc:  # noqa: BLE001 - the core is total
                self._fault("fast path", exc)
                return []
            if chunk.find(b"\n\n", 0, len(chunk) - 2) >= 0:  # several events: one by one
                return self._blocks(fast, chunk)
        events = sse.feed(chunk)
        return self._events(events) if events else []

    def _blocks(self, fast: Callable[[bytes], bool], chunk: bytes) -> list[ToolCall]:
        """Whole events, one by one: to ``fast``, else through the SSE decoder."""
        calls: list[ToolCall] = []
        blocks = chunk.split(b"\n\n")
        blocks.pop()
        for block in blocks:
            one = block + b"\n\n"
            try:
                if len(one) <= self._cap and (self._append(one) or fast(one)):
                    continue
            except Exception as exc:  # noqa: BLE001 - the core is total
                self._fault("fast path", exc)
                continue
            events = self._sse.feed(one)
            if events:
                calls += self._events(events)
        return calls

    def _append(self, chunk: bytes) -> bool:
        """``feed``'s armed case for one event of a chunk of several; True if applied."""
        armed = self._reducer.armed
        if armed is None:
            return False
        raw = self._match(chunk, armed[0], armed[1])
        if raw is None:
            return False
        fragments = armed[2]
        run, size = fragments.run, fragments.size + len(raw)
        if run is None or size > self._limit:
            return False
        fragments.size = size
        run += raw
        return True

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
        for ev in self._sse.close():
            try:
                self._reducer.event(ev)
            except Exception as exc:  # noqa: BLE001
                self._fault(ev.event, exc)
        parsed = self._reducer.finish()
        extra = list(self._faults)
        extra += [
            Problem("oversized_event", detail=f"event over {self.limits.max_event_bytes} bytes")
        ] * self._sse.dropped_events
        if extra:
            parsed = dataclasses.replace(parsed, problems=parsed.problems + tuple(extra))
        self._closed = parsed
        return parsed


def parse_response(
    body: bytes | str | Mapping[str, Any] | Any, dialect: str, *, limits: Limits | None = None
) -> Parsed:
    """Parse one whole response: JSON or SSE bytes/text, a decoded dict, or an SDK object."""
    limits = limits or Limits()
    module = dialect_module(dialect)
    if isinstance(body, str):
        body = body.encode("utf-8")
    if isinstance(body, (bytes, bytearray, memoryview)):
        raw = bytes(body)
        head = raw.lstrip()[:6]
        if head.startswith((b"data:", b"event:", b":", b"id:")):
            parser = StreamParser(dialect, limits=limits)
            parser.feed(raw)
            return parser.close()
        try:
            decoded = loads(raw)
        except (ValueError, RecursionError) as exc:
            return Parsed(dialect, problems=(Problem("unexpected_shape", detail=f"body: {exc}"),))
        return module.parse_body(decoded, limits, size=len(raw))
    if not isinstance(body, (Mapping, list)):
        dump = getattr(body, "model_dump", None)
        if dump is None:
            return Parsed(
                dialect,
                problems=(Problem("unexpected_shape", detail=f"body is {type(body).__name__}"),),
            )
        body = dump(mode="json", by_alias=True, exclude_none=True)
    return module.parse_body(body, limits)
