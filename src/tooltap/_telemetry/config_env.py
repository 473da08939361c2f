"""``TOOLTAP_*`` environment variables: every ``tooltap.Config`` option without code.

``opentelemetry-instrument`` calls ``instrument()`` with no options, so each option also
reads a variable: ``TOOLTAP_`` and the option's name in capitals (``TOOLTAP_ORPHAN_TIMEOUT=30``,
``TOOLTAP_CAPTURE_CONTENT=SPAN_ONLY``, ``TOOLTAP_HOSTS=*.openai.azure.com,api.example.com``);
the two ``Limits`` read ``TOOLTAP_MAX_EVENT_BYTES`` and ``TOOLTAP_MAX_ARGUMENT_BYTES``. An
option given in code wins over its variable. A value that does not parse, or that the
option refuses, warns naming the variable and the option keeps its default (strict mode:
``ConfigError``), as a keyword would.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, Final

__all__ = ["ENV_PREFIX", "LIMIT_VARIABLES", "environment_options", "variable"]

ENV_PREFIX: Final = "TOOLTAP_"
#: ``Limits`` fields -> their variables.
LIMIT_VARIABLES: Final = {
    "max_event_bytes": "TOOLTAP_MAX_EVENT_BYTES",
    "max_argument_bytes": "TOOLTAP_MAX_ARGUMENT_BYTES",
}
_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"0", "false", "no", "off"})


def variable(option: str) -> str:
    """The environment variable of ``option``."""
    return ENV_PREFIX + option.upper()


def _flag(text: str) -> bool:
    low = text.lower()
    if low in _TRUE or low in _FALSE:
        return low in _TRUE
    raise ValueError(text)


def _flag_or_auto(text: str) -> bool | None:
    return None if text.lower() == "auto" else _flag(text)


def _patterns(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split(",") if p.strip())


#: How a variable's text becomes the option's value (the option then checks it).
_PARSERS: Final[Mapping[str, Callable[[str], Any]]] = {
    "capture_content": str,
    "orphan_timeout": float,
    "tool_name_cap": int,
    "max_open_calls": int,
    "max_open_bytes": int,
    "call_id_memory": int,
    "export": _flag,
    "adopt_tool_spans": _flag_or_auto,
    "prometheus_port": int,
    "prometheus_host": str,
    "stream_buffered_wait": float,
    "stream_buffered_events": int,
    "hosts": _patterns,
    "exclude": _patterns,
    "output_tools": _patterns,
    "flight_recorder": str,
    "flight_recorder_bytes": int,
    "flight_recorder_all": _flag,
    "flight_recorder_files": int,
    "flight_recorder_total_bytes": int,
}


def environment_options(
    environ: Mapping[str, str],
    skip: Collection[str],
    reject: Callable[[str], None],
) -> tuple[dict[str, tuple[str, Any]], dict[str, int]]:
    """The options the environment sets (but those in ``skip``): option -> (variable, parsed
    value), for the option to check; and the ``Limits`` fields it sets. A variable that
    does not parse is ``reject``-ed and left out."""
    options: dict[str, tuple[str, Any]] = {}
    for option, parse in _PARSERS.items():
        name = variable(option)
        text = environ.get(name, "").strip()
        if option in skip or not text:
            continue
        try:
            options[option] = (name, parse(text))
        except ValueError:
            reject(f"tooltap: invalid {name}={text!r}; ignored")
    limits: dict[str, int] = {}
    for field, name in LIMIT_VARIABLES.items():
        text = environ.get(name, "").strip()
        if "limits" in skip or not text:
            continue
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value > 0:
            limits[field] = value
        else:
            reject(f"tooltap: invalid {name}={text!r} (a whole number of bytes > 0); ignored")
    return options, limits
