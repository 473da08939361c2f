"""JSON decoding for the stream hot path: ``jiter`` when installed, the stdlib's answer always.

``loads`` returns exactly what ``json.loads`` returns: jiter decodes what it accepts
(it produces the same values), and whatever it refuses (lone surrogate escapes, a BOM,
UTF-16, nesting deeper than its limit, invalid JSON) goes to ``json.loads``, which
decides and raises with its own messages. Nesting too deep for ``json.loads``'s own
recursion goes to an iterative decoder (``_deep_json``) that returns the same value, so
no depth makes valid JSON an error. jiter ships with openai and anthropic; the core
works without it.

``RAW_STRING`` matches the body of a JSON string (between its quotes) that is valid on
its own: the dialects' fast paths keep argument fragments in that escaped form and
``unescape`` them once per call, instead of decoding every event.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from ._deep_json import loads as deep_loads

__all__ = [
    "INT",
    "PLAIN_STRING",
    "RAW_STRING",
    "loads",
    "loads_str",
    "unescape",
    "valid_utf8",
]

_jiter: Callable[..., Any] | None
try:
    from jiter import from_json as _jiter
except ImportError:  # pragma: no cover - jiter comes with openai and anthropic
    _jiter = None

#: Regex source: a JSON string body (no quotes) with only valid escapes and no control
#: characters. Bytes >= 0x80 are allowed; check them with ``valid_utf8``.
RAW_STRING: Final = rb'(?:[^"\\\x00-\x1f]++|\\["\\/bfnrt]|\\u[0-9A-Fa-f]{4})*+'
#: Regex source: a JSON string body of printable ASCII without escapes (ids, padding).
PLAIN_STRING: Final = rb"[ !#-\[\]-~]*+"
#: Regex source: a JSON integer as OpenAI numbers events and items (at most 9 digits).
INT: Final = rb"(?:0|[1-9][0-9]{0,8}+)"


def loads(data: bytes) -> Any:
    """``json.loads(data)``, decoded by jiter when it can."""
    if _jiter is not None:
        try:  # keys only: jiter's default also caches short string values, process-wide
            return _jiter(data, cache_mode="keys")  # (ids, argument text: unbounded variety)
        except ValueError:
            pass
    try:
        return json.loads(data)
    except RecursionError:
        return deep_loads(data.decode(json.detect_encoding(data), "surrogatepass"))


def loads_str(text: str) -> Any:
    """``json.loads(text)`` for text, decoded by jiter (as UTF-8 bytes) when it can."""
    if _jiter is not None:
        try:  # UnicodeEncodeError (lone surrogates) is a ValueError too
            return _jiter(text.encode("utf-8"), cache_mode="keys")
        except ValueError:
            pass
    try:
        return json.loads(text)
    except RecursionError:
        return deep_loads(text)


def valid_utf8(raw: bytes) -> bool:
    """Whether ``raw`` decodes as UTF-8 (what ``json.loads`` requires of bytes)."""
    if raw.isascii():
        return True
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def unescape(raw: bytes | bytearray) -> str:
    """The text of a JSON string body matched by ``RAW_STRING`` (or several, concatenated)."""
    try:
        text: str = json.loads(b'"' + raw + b'"')
    except (ValueError, RecursionError):  # not reachable for validated input; stay total
        return bytes(raw).decode("utf-8", "replace")
    return text
