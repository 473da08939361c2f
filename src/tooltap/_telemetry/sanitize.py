"""Model-written text made safe for telemetry: valid UTF-8, bounded, and JSON that parses.

A tool name, a call id, arguments, results and messages are whatever a model (or a tool)
wrote. Every one of them that becomes a span name, a span or event attribute or a metric
attribute goes through here first:

* a lone surrogate (``"\\ud800"``, which JSON escapes can carry) becomes U+FFFD: the
  protobuf encoder refuses it, and one such string fails the whole export batch;
* a value longer than its limit is cut to the limit, ending with ``…``; the span (or
  event) counts the values cut in ``tooltap.truncated``;
* a value recorded as JSON is valid JSON: NaN and the infinities become the strings
  ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``, and nesting too deep for the C encoder
  is encoded iteratively.

The limits, in characters: ``NAME_CHARS`` (tool names, models: span names and
``gen_ai.tool.name``), ``ID_CHARS`` (tool call and response ids), ``TEXT_CHARS`` (other
short text: problem details) and ``CONTENT_CHARS`` (opt-in content: arguments, results,
messages, tool definitions).
"""

from __future__ import annotations

import json
from typing import Any, Final

from .._core._deep_json import dumps
from . import semconv as sc

__all__ = [
    "CONTENT_CHARS",
    "ID_CHARS",
    "MARK",
    "NAME_CHARS",
    "TEXT_CHARS",
    "Sanitizer",
    "json_text",
    "text",
    "valid_text",
]

NAME_CHARS: Final = 256
ID_CHARS: Final = 256
TEXT_CHARS: Final = 4096
CONTENT_CHARS: Final = 256 * 1024
#: What ends a value that was cut.
MARK: Final = "…"


def valid_text(value: str) -> str:
    """``value`` with each lone surrogate replaced by U+FFFD (pairs are joined)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return value


def _clean(value: str, limit: int) -> tuple[str, bool]:
    """``value`` valid and at most ``limit`` characters; whether it was cut."""
    if len(value) <= limit and value.isascii():
        return value, False
    value = valid_text(value)
    if len(value) <= limit:
        return value, False
    return value[: limit - 1] + MARK, True


def text(value: str, limit: int = TEXT_CHARS) -> str:
    """``value`` valid and within ``limit`` (where nothing counts the cut: metric values)."""
    if len(value) <= limit and value.isascii():  # most values: as they are
        return value
    return _clean(value, limit)[0]


def json_text(value: Any) -> str:
    """Compact JSON (non-ASCII kept) that is always valid JSON; strings pass through."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(
            value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str
        )
    except (ValueError, RecursionError):  # NaN, a cycle, nesting past the C recursion
        return dumps(value)


class Sanitizer:
    """Cleans the values of one span or event, counting the ones it cut."""

    __slots__ = ("truncated",)

    def __init__(self) -> None:
        self.truncated = 0

    def text(self, value: str, limit: int = TEXT_CHARS) -> str:
        if len(value) <= limit and value.isascii():  # most values: as they are
            return value
        cleaned, cut = _clean(value, limit)
        self.truncated += cut
        return cleaned

    def name(self, value: str) -> str:
        """A tool name or a model."""
        if len(value) <= NAME_CHARS and value.isascii():
            return value
        return self.text(value, NAME_CHARS)

    def id(self, value: str) -> str:
        """A tool call id or a response id."""
        if len(value) <= ID_CHARS and value.isascii():
            return value
        return self.text(value, ID_CHARS)

    def json(self, value: Any) -> str:
        """Content (arguments, results, messages) as valid, bounded JSON text."""
        return self.text(json_text(value), CONTENT_CHARS)

    def count(self, attributes: dict[str, Any]) -> dict[str, Any]:
        """``attributes`` with ``tooltap.truncated`` added when something was cut."""
        if self.truncated:
            attributes[sc.TOOLTAP_TRUNCATED] = self.truncated
        return attributes
