"""Public entry points of the core: a stream parser and a whole-body parser."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from .dialects import dialect_module
from .model import Limits, Parsed, Problem, ToolCall
from .sse import SSEParser

__all__ = ["StreamParser", "parse_response"]


class StreamParser:
    """Incremental tool-call parser for one streamed response.

    ``feed(chunk)`` returns the calls that chunk completed; ``close()`` returns the
    whole ``Parsed``. The parser is total: malformed input becomes problems.
    """

    __slots__ = ("dialect", "limits", "_sse", "_reducer", "_faults", "_closed")

    def __init__(self, dialect: str, *, limits: Limits | None = None) -> None:
        self.dialect = dialect
        self.limits = limits or Limits()
        self._sse = SSEParser(self.limits.max_event_bytes)
        self._reducer = dialect_module(dialect).Reducer(self.limits)
        self._faults: list[Problem] = []
        self._closed: Parsed | None = None

    def feed(self, chunk: bytes) -> list[ToolCall]:
        """Take the next bytes of the body; return the calls they complete, in order."""
        events = self._sse.feed(chunk)
        if not events:
            return []
        calls: list[ToolCall] = []
        event = self._reducer.event
        for ev in events:
            try:
                calls += event(ev)
            except Exception as exc:  # noqa: BLE001 - the core is total
                self._faults.append(Problem("unexpected_shape", detail=f"{ev.event}: {exc!r}"))
        return calls

    def close(self) -> Parsed:
        """End of the body. Idempotent: a second call returns the same value."""
        if self._closed is not None:
            return self._closed
        for ev in self._sse.close():
            try:
                self._reducer.event(ev)
            except Exception as exc:  # noqa: BLE001
                self._faults.append(Problem("unexpected_shape", detail=f"{ev.event}: {exc!r}"))
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
            decoded = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            return Parsed(dialect, problems=(Problem("unexpected_shape", detail=f"body: {exc}"),))
        return module.parse_body(decoded, limits)
    if not isinstance(body, (Mapping, list)):
        dump = getattr(body, "model_dump", None)
        if dump is None:
            return Parsed(
                dialect,
                problems=(Problem("unexpected_shape", detail=f"body is {type(body).__name__}"),),
            )
        body = dump(mode="json", by_alias=True, exclude_none=True)
    return module.parse_body(body, limits)
