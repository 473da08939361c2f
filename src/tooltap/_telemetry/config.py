"""Instrumentation options: ``tooltap.Config`` and the checks on ``instrument()``'s options.

A misspelt or invalid option never breaks the app: it is warned about once
(``warnings.warn`` naming the option, with the closest known name; also a log record
when the app's logging has a handler, so that Python's last-resort handler never prints
it a second time) and the default applies. Each option is checked on its own, for type
and range. In strict mode (``TOOLTAP_STRICT_CONFIG=1``, or ``instrument(strict=True)``)
the same finding raises ``ConfigError`` instead. Every option also reads a
``TOOLTAP_*`` variable (``config_env``), checked the same way.
"""

from __future__ import annotations

import difflib
import fnmatch
import functools
import logging
import math
import os
import re
import sys
import warnings
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any, Final, Literal, get_args

from .._core.model import Limits
from .config_env import LIMIT_VARIABLES, environment_options, variable
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
    "changes",
    "check_names",
    "environ_given",
    "reject",
    "strict_mode",
    "variables",
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
    if _log.hasHandlers():  # else the last-resort handler would print it a second time
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
    #: Adopt an agent framework's own tool span (pydantic-ai, OpenInference's LangChain
    #: instrumentor) as a call's ``execute_tool`` span instead of emitting a second one.
    #: None (auto): while the framework's tracing records into tooltap's provider; True:
    #: whenever a framework is hooked; False: never.
    adopt_tool_spans: bool | None = None

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

    #: Directory of the flight recorder (records hold response content: off by default).
    flight_recorder: str | os.PathLike[str] | None = None
    #: Bytes of one response a record keeps (4 MiB; beyond them the record is cut).
    flight_recorder_bytes: int | None = None
    #: Record every response, not only those that ended with a problem or an error.
    flight_recorder_all: bool | None = None
    #: Records the directory keeps (200), and the bytes they may hold (256 MiB); oldest go first.
    flight_recorder_files: int | None = None
    flight_recorder_total_bytes: int | None = None

    def __post_init__(self) -> None:
        for name, (check, wanted) in _CHECKS.items():
            value = getattr(self, name)
            checked = check(value)
            if checked is _INVALID:
                checked = _FALLBACKS[name]
                reject(f"tooltap: invalid {name}={value!r}, using {checked!r} ({wanted})")
            if checked is not value:
                object.__setattr__(self, name, checked)
        if not _valid_limits(self.limits):
            limits = self.limits
            reject(f"tooltap: limits must be a tooltap.core.Limits, got {limits!r}; using defaults")
            object.__setattr__(self, "limits", Limits())
        for name in ("hosts", "exclude"):
            object.__setattr__(self, name, _patterns(name, getattr(self, name)))
        object.__setattr__(self, "output_tools", _names(self.output_tools))

    def output_tool(self, name: str) -> bool:
        """Whether a call of ``name`` is an output tool (``output_tools``)."""
        return bool(self.output_tools) and _output_tools(self.output_tools).match(name) is not None

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
        """``base`` (else the defaults) with the Config fields among ``options``, then the
        ``TOOLTAP_*`` variables for the options left at their default, resolved."""
        given = {k: v for k, v in options.items() if k in OPTION_NAMES}
        config = replace(base, **given) if base is not None else cls(**given)
        env = os.environ if environ is None else environ
        skip = set(given) | {f for f in OPTION_NAMES if getattr(config, f) != _DEFAULTS[f]}
        found = environ_given(env, skip)
        return (replace(config, **found) if found else config).resolved(env)


def changes(active: Config, wanted: Config) -> dict[str, str]:
    """The options ``wanted`` sets differently: name -> ``name=wanted (active: value)``."""
    return {
        f.name: f"{f.name}={getattr(wanted, f.name)!r} (active: {getattr(active, f.name)!r})"
        for f in fields(Config)
        if getattr(wanted, f.name) != getattr(active, f.name)
    }


def variables(names: Collection[str]) -> list[str]:
    """The ``TOOLTAP_*`` variables of the options ``names``."""
    found: list[str] = []
    for name in names:
        found += list(LIMIT_VARIABLES.values()) if name == "limits" else [variable(name)]
    return found


def environ_given(environ: Mapping[str, str], skip: Collection[str] = ()) -> dict[str, Any]:
    """The options the ``TOOLTAP_*`` variables set (but those in ``skip``), each checked; an
    invalid one warns naming its variable (strictly, raises) and is left out."""
    parsed, limit_fields = environment_options(environ, skip, reject)
    found: dict[str, Any] = {}
    for name, (var, value) in parsed.items():
        check, wanted = _CHECKS.get(name, (_as_is, ""))
        checked = check(value)
        if checked is _INVALID:
            reject(f"tooltap: invalid {var}={value!r}, using {_FALLBACKS[name]!r} ({wanted})")
        else:
            found[name] = checked
    if limit_fields:
        found["limits"] = replace(Limits(), **limit_fields)
    return found


def _match(host: str, full: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(full if "/" in pattern else host, pattern)


def _patterns(name: str, value: object) -> tuple[str, ...]:
    """A host pattern option as lower-case patterns; anything else warns and means none."""
    items = (value,) if isinstance(value, str) else value
    if isinstance(items, (tuple, list, set, frozenset)) and all(isinstance(v, str) for v in items):
        return tuple(v.lower() for v in items)
    reject(f"tooltap: {name} must be a string or strings, got {value!r}; ignored")
    return ()


@functools.lru_cache(maxsize=8)
def _output_tools(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern matching a name ``fnmatchcase`` matches with any of ``patterns``."""
    return re.compile("|".join(fnmatch.translate(p) for p in patterns) or "(?!)")


def _names(value: object) -> tuple[str, ...]:
    """``output_tools`` as name patterns; anything else warns and means none."""
    items = (value,) if isinstance(value, str) else value
    if isinstance(items, (tuple, list, set, frozenset)) and all(isinstance(v, str) for v in items):
        return tuple(items)
    reject(f"tooltap: output_tools must be a string or strings, got {value!r}; ignored")
    return ()


class _Invalid:
    """What a check returns for a value the option refuses."""


_INVALID: Final = _Invalid()


def _as_is(value: object) -> object:
    return value


def _number(value: object) -> float | None:
    """``value`` if it is an int or a float (a bool is neither here), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def _seconds(value: object) -> object:
    """A number of seconds >= 0 (infinity: never), as a float."""
    number = _number(value)
    if number is None or math.isnan(number) or number < 0:
        return _INVALID
    return float(number)


def _count(value: object) -> object:
    """A whole number >= 0 (``3.0`` counts as 3), as an int."""
    number = _number(value)
    if number is None or not math.isfinite(number) or number < 0:
        return _INVALID
    if isinstance(number, float) and not number.is_integer():
        return _INVALID
    return int(number)


def _capture(value: object) -> object:
    return None if value is None else (_capture_mode(value) or _INVALID)


def _flag(value: object) -> object:
    return value if value is None or isinstance(value, bool) else _INVALID


def _port(value: object) -> object:
    if value is None:
        return None
    return value if type(value) is int and 0 <= value <= 65535 else _INVALID


def _host(value: object) -> object:
    if value is None:
        return None
    return value.strip() if isinstance(value, str) and value.strip() else _INVALID


def _directory(value: object) -> object:
    if value is None or isinstance(value, os.PathLike):
        return value
    return value if isinstance(value, str) and value else _INVALID


def _size(value: object) -> object:
    """None (the default applies), or a whole number >= 1."""
    return value if value is None or (type(value) is int and value >= 1) else _INVALID


def _valid_limits(limits: object) -> bool:
    return isinstance(limits, Limits) and all(
        type(v) is int and v > 0 for v in (limits.max_event_bytes, limits.max_argument_bytes)
    )


#: Each option's own check (value -> the value to keep, or ``_INVALID``) and what it wants.
_CHECKS: Final[Mapping[str, tuple[Callable[[object], object], str]]] = {
    "capture_content": (_capture, f"one of {', '.join(CAPTURE_MODES)}"),
    "orphan_timeout": (_seconds, "seconds >= 0"),
    "tool_name_cap": (_count, "a whole number >= 0"),
    "max_open_calls": (_count, "a whole number >= 0"),
    "max_open_bytes": (_count, "a whole number of bytes >= 0"),
    "call_id_memory": (_count, "a whole number >= 0"),
    "export": (_flag, "True, False or None"),
    "adopt_tool_spans": (_flag, "True, False or None (auto)"),
    "prometheus_port": (_port, "a port number 0-65535 (0: a free one) or None"),
    "prometheus_host": (_host, "an address such as 127.0.0.1, or None"),
    "stream_buffered_wait": (_seconds, "seconds >= 0"),
    "stream_buffered_events": (_count, "a whole number >= 0"),
    "flight_recorder": (_directory, "a directory path or None"),
    "flight_recorder_bytes": (_size, "a whole number of bytes >= 1 or None"),
    "flight_recorder_all": (_flag, "True, False or None"),
    "flight_recorder_files": (_size, "a whole number >= 1 or None"),
    "flight_recorder_total_bytes": (_size, "a whole number of bytes >= 1 or None"),
}
_DEFAULTS: Final[Mapping[str, Any]] = {
    f.name: f.default_factory() if f.default is MISSING else f.default  # type: ignore[operator]
    for f in fields(Config)
}
#: What an invalid value is replaced by: the default (an invalid capture mode: none).
_FALLBACKS: Final[Mapping[str, Any]] = {**_DEFAULTS, "capture_content": "NO_CONTENT"}
#: The ``Config`` fields, each also a keyword option of ``instrument()``.
OPTION_NAMES: Final = frozenset(f.name for f in fields(Config))
