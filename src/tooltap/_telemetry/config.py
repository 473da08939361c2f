"""Instrumentation options: content capture mode, orphan timeout, caps, limits."""

from __future__ import annotations

import fnmatch
import logging
import os
from collections.abc import Iterable, Mapping
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
    #: Call ids each lifecycle memory keeps (replays, answered and truncated ids).
    call_id_memory: int = 1024
    limits: Limits = field(default_factory=Limits)
    #: Host patterns observed (``fnmatch``, e.g. ``"*.openai.azure.com"``; one with a ``/``
    #: matches ``host/path``); empty: every host (gateways, self-hosted proxies).
    hosts: tuple[str, ...] = ()
    #: Patterns never observed (same forms), checked after ``hosts``.
    exclude: tuple[str, ...] = ()

    def observes(self, host: str | None, path: str) -> bool:
        """Whether traffic to ``host`` + ``path`` is observed under ``hosts`` / ``exclude``."""
        if not self.hosts and not self.exclude:
            return True
        where = (host or "").lower()
        full = where + path
        if self.hosts and not any(_match(where, full, p) for p in self.hosts):
            return False
        return not any(_match(where, full, p) for p in self.exclude)

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
            call_id_memory=int(_number(options, "call_id_memory", default.call_id_memory)),
            limits=_limits(options.get("limits")),
            hosts=_patterns(options, "hosts"),
            exclude=_patterns(options, "exclude"),
        )


def _match(host: str, full: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(full if "/" in pattern else host, pattern)


def _patterns(options: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = options.get(key)
    if value is None:
        return ()
    items = (value,) if isinstance(value, str) else value
    if isinstance(items, Iterable) and all(isinstance(v, str) for v in items):
        return tuple(v.lower() for v in items)
    _log.warning("tooltap: %s must be a string or strings, got %r; ignored", key, value)
    return ()


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
