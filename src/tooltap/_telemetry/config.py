"""Instrumentation options: content capture mode, orphan timeout, caps, limits."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from .._core.model import Limits

__all__ = ["CAPTURE_MODES", "Config", "capture_mode_from"]

_log = logging.getLogger("tooltap")

CAPTURE_ENV: Final = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
CAPTURE_MODES: Final = ("NO_CONTENT", "SPAN_ONLY", "EVENT_ONLY", "SPAN_AND_EVENT")


def capture_mode_from(value: object) -> str:
    """Normalize a capture setting; invalid values fall back to ``NO_CONTENT``.

    Accepts the four modes (any case), booleans, and the legacy ``true``/``false``
    (``true`` meant content on spans).
    """
    if value is None:
        return "NO_CONTENT"
    if isinstance(value, bool):
        return "SPAN_ONLY" if value else "NO_CONTENT"
    text = str(value).strip().upper()
    if text in CAPTURE_MODES:
        return text
    if text in ("TRUE", "1", "YES"):
        return "SPAN_ONLY"
    if text not in ("", "FALSE", "0", "NO"):
        _log.warning("tooltap: invalid %s=%r, using NO_CONTENT", CAPTURE_ENV, value)
    return "NO_CONTENT"


@dataclass(frozen=True, slots=True)
class Config:
    """Options of one ``instrument()`` call."""

    capture_content: str = "NO_CONTENT"
    orphan_timeout: float = 600.0
    tool_name_cap: int = 100
    max_open_calls: int = 10_000
    #: Bytes the open calls may hold (ids and names; the oldest is orphaned first).
    max_open_bytes: int = 8 * 1024 * 1024
    #: Answered calls and response ids the lifecycle remembers (re-sent results, replays).
    call_id_memory: int = 1024
    limits: Limits = field(default_factory=Limits)

    @property
    def content_on_span(self) -> bool:
        """Content goes on span attributes."""
        return self.capture_content in ("SPAN_ONLY", "SPAN_AND_EVENT")

    @property
    def content_in_events(self) -> bool:
        """Content goes into log-based events."""
        return self.capture_content in ("EVENT_ONLY", "SPAN_AND_EVENT")

    @property
    def capture_any(self) -> bool:
        """Any content is recorded at all."""
        return self.capture_content != "NO_CONTENT"

    @classmethod
    def from_options(
        cls, options: Mapping[str, Any], environ: Mapping[str, str] | None = None
    ) -> Config:
        """Build from ``instrument(**options)``; unknown or invalid options are logged, not raised."""
        env = os.environ if environ is None else environ
        default = cls()
        capture = options.get("capture_content", env.get(CAPTURE_ENV))
        return cls(
            capture_content=capture_mode_from(capture),
            orphan_timeout=_number(options, "orphan_timeout", default.orphan_timeout),
            tool_name_cap=int(_number(options, "tool_name_cap", default.tool_name_cap)),
            max_open_calls=int(_number(options, "max_open_calls", default.max_open_calls)),
            max_open_bytes=int(_number(options, "max_open_bytes", default.max_open_bytes)),
            call_id_memory=int(_number(options, "call_id_memory", default.call_id_memory)),
            limits=_limits(options.get("limits")),
        )


def _number(options: Mapping[str, Any], key: str, default: float) -> float:
    value = options.get(key, default)
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = -1.0
    if number < 0:
        _log.warning("tooltap: invalid %s=%r, using %s", key, value, default)
        return default
    return number


def _limits(value: object) -> Limits:
    if value is None:
        return Limits()
    if isinstance(value, Limits):
        return value
    _log.warning("tooltap: limits must be a tooltap.Limits, got %r; using defaults", value)
    return Limits()
