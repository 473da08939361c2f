"""Instrumentation options: ``tooltap.Config`` and the checks on ``instrument()``'s options.

A misspelt or invalid option never breaks the app: it is warned about
(``warnings.warn`` naming the option, with the closest known name, and a log
record) and the default applies. In strict mode (``TOOLTAP_STRICT_CONFIG=1``, or
``instrument(strict=True)``) the same finding raises ``ConfigError`` instead.
"""

from __future__ import annotations

import difflib
import fnmatch
import logging
import math
import os
import sys
import warnings
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, fields, replace
from typing import Any, Final, Literal, get_args

from .._core.model import Limits
from .export import export_requested

__all__ = [
    "CAPTURE_ENV",
    "CAPTURE_MODES",
    "OPTION_NAMES",
    "STRICT_ENV",
    "CaptureMode",
    "Config",
    "ConfigError",
    "capture_mode_from",
    "check_names",
    "reject",
    "strict_mode",
]

_log = logging.getLogger("tooltap")

CaptureMode = Literal["NO_CONTENT", "SPAN_ONLY", "EVENT_ONLY", "SPAN_AND_EVENT"]
CAPTURE_ENV: Final = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
CAPTURE_MODES: Final[tuple[CaptureMode, ...]] = get_args(CaptureMode)
STRICT_ENV: Final = "TOOLTAP_STRICT_CONFIG"

_strict: ContextVar[bool | None] = ContextVar("tooltap_strict_config", default=None)


class ConfigError(ValueError):
    """An unknown or invalid option, raised in strict mode only."""


def _strict_from_env() -> bool:
    return os.environ.get(STRICT_ENV, "").strip().lower() in ("1", "true", "yes")


@contextmanager
def strict_mode(strict: bool | None) -> Iterator[None]:
    """Check options strictly within the block if ``strict`` (None: ``$TOOLTAP_STRICT_CONFIG``)."""
    token = _strict.set(strict)
    try:
        yield
    finally:
        _strict.reset(token)


def _is_strict() -> bool:
    strict = _strict.get()
    return _strict_from_env() if strict is None else strict


def reject(message: str) -> None:
    """Raise in strict mode; else warn (to the caller's caller) and log."""
    if _is_strict():
        raise ConfigError(message)
    warnings.warn(message, stacklevel=_callers_level())
    _log.warning("%s", message)


_OWN_FILES: Final = (os.path.dirname(os.path.dirname(__file__)), "<")


def _callers_level() -> int:
    """The ``stacklevel`` of the first frame outside tooltap (and generated code) above here."""
    level, frame = 2, sys._getframe(2)
    while frame.f_back is not None and (
        frame.f_code.co_filename.startswith(_OWN_FILES)
        or "opentelemetry/instrumentation" in frame.f_code.co_filename
    ):
        level, frame = level + 1, frame.f_back
    return level


def check_names(given: Collection[str], known: Collection[str]) -> None:
    """Warn about (or, strictly, reject) each of ``given`` that is not in ``known``."""
    for name in sorted(set(given) - set(known)):
        close = difflib.get_close_matches(name, sorted(known), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        reject(f"tooltap: unknown option {name!r}{hint}")


def capture_mode_from(value: object) -> CaptureMode:
    """Normalize a capture setting from the environment; invalid values fall back to ``NO_CONTENT``.

    Accepts the four modes (any case), booleans, and the legacy ``true``/``false``
    (``true`` meant content on spans).
    """
    mode = _capture_mode(value)
    if mode is None:
        _log.warning("tooltap: invalid %s=%r, using NO_CONTENT", CAPTURE_ENV, value)
        return "NO_CONTENT"
    return mode


def _capture_mode(value: object) -> CaptureMode | None:
    """The mode ``value`` names, ``NO_CONTENT`` for unset/false values, None if invalid."""
    if value is None:
        return "NO_CONTENT"
    if isinstance(value, bool):
        return "SPAN_ONLY" if value else "NO_CONTENT"
    text = str(value).strip().upper()
    for mode in CAPTURE_MODES:
        if text == mode:
            return mode
    if text in ("TRUE", "1", "YES"):
        return "SPAN_ONLY"
    if text in ("", "FALSE", "0", "NO"):
        return "NO_CONTENT"
    return None


@dataclass(frozen=True, slots=True)
class Config:
    """tooltap's instrumentation options: ``instrument(config=Config(...))``, or as keywords.

    An invalid value warns and its default applies (strict mode: ``ConfigError``).
    """

    #: Whether message content and tool arguments are recorded, and where: ``NO_CONTENT``
    #: (the default), ``SPAN_ONLY`` (span attributes), ``EVENT_ONLY`` (log-based events)
    #: or ``SPAN_AND_EVENT``. None reads ``$OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``
    #: when tooltap is instrumented.
    capture_content: CaptureMode | None = None
    #: Seconds a tool span may stay open waiting for its result before it ends as orphaned.
    orphan_timeout: float = 600.0
    #: Distinct tool names kept as metric attribute values; later names count as ``_OTHER``.
    tool_name_cap: int = 100
    #: Tool spans open at once; beyond it the oldest ends as orphaned.
    max_open_calls: int = 10_000
    #: Bytes the open calls may hold (ids and names; the oldest is orphaned first).
    max_open_bytes: int = 8 * 1024 * 1024
    #: Answered calls and response ids the lifecycle remembers (re-sent results, replays).
    call_id_memory: int = 1024
    #: Memory caps applied to hostile or runaway responses.
    limits: Limits = field(default_factory=Limits)
    #: Export on tooltap's own private providers, built from ``OTEL_*``; else record through
    #: the app's (given or global) providers. None reads ``$TOOLTAP_EXPORT``.
    export: bool | None = None
    #: ``/metrics`` port of the private meter provider (0: a free one; None: no endpoint).
    prometheus_port: int | None = None
    #: Address ``/metrics`` binds (default 127.0.0.1; ``0.0.0.0`` for a container's scraper).
    prometheus_host: str | None = None
    #: Seconds a stream's reader must wait for the first byte before a burst of events
    #: counts as ``stream_buffered`` (a buffering proxy); 0 turns the check off.
    stream_buffered_wait: float = 2.0
    #: Events the first read of a ``stream_buffered`` stream carries, at least.
    stream_buffered_events: int = 8

    #: Host patterns observed (``fnmatch``, e.g. ``"*.openai.azure.com"``; one with a ``/``
    #: matches ``host/path``); empty: every host (gateways, self-hosted proxies).
    hosts: tuple[str, ...] = ()
    #: Patterns never observed (same forms), checked after ``hosts``.
    exclude: tuple[str, ...] = ()
    #: Tool names (``fnmatch`` patterns, case-sensitive) a framework consumes itself as the
    #: run's structured output: no result is ever sent for their calls, so they end as
    #: ``output``, never orphaned. The default is pydantic-ai's output tools and
    #: smolagents' ``final_answer``.
    output_tools: tuple[str, ...] = ("final_result", "final_result_*", "final_answer")

    def __post_init__(self) -> None:
        if self.capture_content is not None:
            mode = _capture_mode(self.capture_content)
            if mode is None:
                reject(
                    f"tooltap: invalid capture_content={self.capture_content!r}, using NO_CONTENT "
                    f"(one of {', '.join(CAPTURE_MODES)})"
                )
                mode = "NO_CONTENT"
            object.__setattr__(self, "capture_content", mode)
        for name in _NUMBERS:
            value = getattr(self, name)
            real = name in _SECONDS
            number = _non_negative(value, integral=not real)
            if number is None:
                fallback = _DEFAULTS[name]
                reject(f"tooltap: invalid {name}={value!r}, using {fallback}")
                number = fallback
            object.__setattr__(self, name, number if real else int(number))
        if not isinstance(self.limits, Limits):
            limits = self.limits
            reject(f"tooltap: limits must be a tooltap.core.Limits, got {limits!r}; using defaults")
            object.__setattr__(self, "limits", Limits())
        for name in ("hosts", "exclude"):
            object.__setattr__(self, name, _patterns(name, getattr(self, name)))
        object.__setattr__(self, "output_tools", _names(self.output_tools))

    def output_tool(self, name: str) -> bool:
        """Whether a call of ``name`` is an output tool (``output_tools``)."""
        return any(fnmatch.fnmatchcase(name, p) for p in self.output_tools)

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
        return self.capture_content not in (None, "NO_CONTENT")

    def resolved(self, environ: Mapping[str, str] | None = None) -> Config:
        """This config with ``capture_content`` and ``export`` read from the environment if None."""
        if self.capture_content is not None and self.export is not None:
            return self
        env = os.environ if environ is None else environ
        capture = self.capture_content or capture_mode_from(env.get(CAPTURE_ENV))
        export = export_requested(self.export, env)
        return replace(self, capture_content=capture, export=export)

    @classmethod
    def from_options(
        cls,
        options: Mapping[str, Any],
        environ: Mapping[str, str] | None = None,
        base: Config | None = None,
    ) -> Config:
        """``base`` (else the defaults) with the Config fields among ``options``, resolved."""
        given = {k: v for k, v in options.items() if k in OPTION_NAMES}
        config = replace(base, **given) if base is not None else cls(**given)
        return config.resolved(environ)


def _match(host: str, full: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(full if "/" in pattern else host, pattern)


def _patterns(name: str, value: object) -> tuple[str, ...]:
    """A host pattern option as lower-case patterns; anything else warns and means none."""
    items = (value,) if isinstance(value, str) else value
    if isinstance(items, (tuple, list, set, frozenset)) and all(isinstance(v, str) for v in items):
        return tuple(v.lower() for v in items)
    reject(f"tooltap: {name} must be a string or strings, got {value!r}; ignored")
    return ()


def _names(value: object) -> tuple[str, ...]:
    """``output_tools`` as name patterns; anything else warns and means none."""
    items = (value,) if isinstance(value, str) else value
    if isinstance(items, (tuple, list, set, frozenset)) and all(isinstance(v, str) for v in items):
        return tuple(items)
    reject(f"tooltap: output_tools must be a string or strings, got {value!r}; ignored")
    return ()


def _non_negative(value: object, *, integral: bool) -> float | None:
    """``value`` as a number >= 0 (finite if ``integral``), or None."""
    try:
        number = float(value)  # type: ignore[arg-type]  # anything float() takes
    except (TypeError, ValueError):
        return None
    if math.isnan(number) or number < 0 or (integral and math.isinf(number)):
        return None
    return number


_SECONDS: Final = ("orphan_timeout", "stream_buffered_wait")
_NUMBERS: Final = (
    *_SECONDS, "tool_name_cap", "max_open_calls", "call_id_memory", "stream_buffered_events",
)  # fmt: skip
_DEFAULTS: Final[Mapping[str, Any]] = {f.name: f.default for f in fields(Config)}
#: The ``Config`` fields, each also a keyword option of ``instrument()``.
OPTION_NAMES: Final = frozenset(f.name for f in fields(Config))
