"""JSON nested deeper than the C codec's recursion allows: an iterative decoder and encoder.

The stdlib's C scanner and encoder recurse once per level, so a document nested ~1,000
deep raises ``RecursionError`` (how deep depends on the caller's own stack: the app's
``json.loads`` at the top of its stack takes nesting up to the recursion limit), and
jiter refuses nesting past its limit. These two loops keep an explicit stack instead.
They are fallbacks, run only after the fast codecs gave up. ``loads`` returns what
``json.loads`` would, for nesting up to the interpreter's recursion limit (at least
1,000 levels); deeper, or invalid, it raises ``json.JSONDecodeError`` (a ValueError), so
memory stays bounded (a level costs ~90 bytes) and callers need catch no RecursionError.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any, Final, cast

__all__ = ["dumps", "loads"]

#: The stdlib's string scanner (C when available): ``scanstring(s, after_quote, strict)``.
_scanstring = cast(
    "Callable[[str, int, bool], tuple[str, int]]",
    json.decoder.scanstring,  # type: ignore[attr-defined]
)

_WS: Final = re.compile(r"[ \t\n\r]*")
_NUMBER: Final = re.compile(r"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_CONSTANTS: Final[dict[str, Any]] = {
    "null": None,
    "true": True,
    "false": False,
    "NaN": math.nan,
    "Infinity": math.inf,
    "-Infinity": -math.inf,
}


def _error(message: str, text: str, pos: int) -> json.JSONDecodeError:
    return json.JSONDecodeError(message, text, pos)


def _scalar(text: str, pos: int) -> tuple[Any, int]:
    """The string, number or constant at ``pos`` and where it ends."""
    if text.startswith('"', pos):
        return _scanstring(text, pos + 1, True)
    number = _NUMBER.match(text, pos)
    if number is not None:
        whole, fraction, exponent = number.groups()
        if fraction or exponent:
            return float(whole + (fraction or "") + (exponent or "")), number.end()
        return int(whole), number.end()
    for word, value in _CONSTANTS.items():
        if text.startswith(word, pos):
            return value, pos + len(word)
    raise _error("Expecting value", text, pos)


def loads(text: str) -> Any:
    """``json.loads(text)`` without recursion (objects keep the last of repeated keys)."""
    stack: list[list[Any] | dict[str, Any]] = []
    deepest = max(1000, sys.getrecursionlimit())
    keys: list[str] = []  # the pending key of each open object, in stack order
    pos = _WS.match(text, 0).end()  # type: ignore[union-attr]  # always matches
    result: Any = None
    while True:
        # a value starts at pos
        if pos >= len(text):
            raise _error("Expecting value", text, pos)
        ch = text[pos]
        if ch in "[{":
            container: list[Any] | dict[str, Any] = [] if ch == "[" else {}
            pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
            closer = "]" if ch == "[" else "}"
            if text.startswith(closer, pos):
                value: Any = container
                pos += 1
            else:
                if len(stack) >= deepest:
                    raise _error(f"nested deeper than {deepest} levels", text, pos)
                stack.append(container)
                if ch == "{":
                    pos = _key(text, pos, keys)
                continue
        else:
            value, pos = _scalar(text, pos)
        # place the finished value, closing every container it completes
        while True:
            if not stack:
                result = value
                break
            top = stack[-1]
            if isinstance(top, list):
                top.append(value)
            else:
                top[keys.pop()] = value
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
            closer = "]" if isinstance(top, list) else "}"
            if text.startswith(",", pos):
                pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
                if isinstance(top, dict):
                    pos = _key(text, pos, keys)
                break
            if not text.startswith(closer, pos):
                raise _error(f"Expecting ',' delimiter or {closer!r}", text, pos)
            value = stack.pop()
            pos += 1
        if not stack:
            break
    end = _WS.match(text, pos).end()  # type: ignore[union-attr]
    if end != len(text):
        raise _error("Extra data", text, end)
    return result


def _key(text: str, pos: int, keys: list[str]) -> int:
    """Read ``"key" :`` at ``pos`` into ``keys``; where its value starts."""
    if not text.startswith('"', pos):
        raise _error("Expecting property name enclosed in double quotes", text, pos)
    key, pos = _scanstring(text, pos + 1, True)
    pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
    if not text.startswith(":", pos):
        raise _error("Expecting ':' delimiter", text, pos)
    keys.append(key)
    return _WS.match(text, pos + 1).end()  # type: ignore[union-attr]


class _Raw:
    """Text to emit as it is; ``leaves`` the container it closes (for cycle detection)."""

    __slots__ = ("leaves", "text")

    def __init__(self, text: str, leaves: int | None = None) -> None:
        self.text = text
        self.leaves = leaves


_NONFINITE: Final = {math.inf: '"Infinity"', -math.inf: '"-Infinity"'}
_COMMA: Final = _Raw(",")


def _string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _encoded(value: Any) -> str | None:
    """The JSON of a scalar (non-finite floats as strings), None for a container."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, int):
        try:
            return int.__repr__(value)
        except ValueError:  # more digits than the interpreter converts
            return '"<integer>"'
    if isinstance(value, float):
        if math.isfinite(value):
            return float.__repr__(value)
        return _NONFINITE.get(value, '"NaN"')
    if isinstance(value, (Mapping, list, tuple)):
        return None
    return _string(str(value))


def _key_text(key: Any) -> str:
    if isinstance(key, str):
        return _string(key)
    encoded = _encoded(key)
    return encoded if encoded is not None and encoded.startswith('"') else _string(str(encoded))


def dumps(value: Any, *, sort_keys: bool = False) -> str:
    """Compact JSON of ``value`` without recursion, always valid JSON: NaN and infinities
    as the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``, other objects as their
    ``str``, a container inside itself as ``"<cycle>"``; keys sorted as text if
    ``sort_keys``."""
    out: list[str] = []
    todo: list[Any] = [value]
    inside: set[int] = set()
    while todo:
        item = todo.pop()
        if isinstance(item, _Raw):
            out.append(item.text)
            if item.leaves is not None:
                inside.discard(item.leaves)
            continue
        encoded = _encoded(item)
        if encoded is not None:
            out.append(encoded)
            continue
        ident = id(item)
        if ident in inside:
            out.append('"<cycle>"')
            continue
        inside.add(ident)
        pending: list[Any] = []
        if isinstance(item, Mapping):
            out.append("{")
            entries = [(_key_text(key), child) for key, child in item.items()]
            if sort_keys:
                entries.sort(key=lambda entry: entry[0])
            for key, child in entries:
                if pending:
                    pending.append(_COMMA)
                pending += [_Raw(key + ":"), child]
            pending.append(_Raw("}", ident))
        else:
            out.append("[")
            for child in item:
                if pending:
                    pending.append(_COMMA)
                pending.append(child)
            pending.append(_Raw("]", ident))
        todo.extend(reversed(pending))
    return "".join(out)
