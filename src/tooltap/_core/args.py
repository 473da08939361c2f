"""Turn received argument text or objects into a call's ``args``, or a Problem."""

from __future__ import annotations

import json
import re
from typing import Any, Final

from ._json import loads_str
from .model import Limits, Problem
from .problems import ProblemKind

__all__ = ["coerce_args", "decode_arguments", "json_incomplete", "may_exceed", "oversized_value"]

#: How much longer than its encoded JSON a decoded value can get when dumped again:
#: ``9e15`` (4 characters) dumps as ``9000000000000000.0`` (18); everything else shrinks
#: (escapes, whitespace) or stays.
_MAX_GROWTH = 5


def may_exceed(encoded_bytes: int, limits: Limits) -> bool:
    """Whether a value decoded from ``encoded_bytes`` of JSON could exceed the argument limit."""
    return encoded_bytes * _MAX_GROWTH > limits.max_argument_bytes


#: Inside a JSON string: the longest run of valid characters and escapes.
_STRING_BODY: Final = re.compile(r'(?:[^"\\\x00-\x1f]++|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*+')
#: An escape cut short at the end of the text.
_CUT_ESCAPE: Final = re.compile(r"\\(?:u[0-9a-fA-F]{0,3})?")
_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?(?:[eE][+-]?[0-9]++)?")
#: A number cut short at the end of the text (``-``, ``1.``, ``2e``, ``2e+``...).
_CUT_NUMBER: Final = re.compile(
    r"-?(?:(?:0|[1-9][0-9]*+)(?:\.[0-9]*+)?(?:(?<=[0-9])[eE][+-]?[0-9]*+)?)?"
)
_WS: Final = re.compile(r"[ \t\n\r]*+")
_CLOSER: Final = {"{": "}", "[": "]"}


#: ``_token_end`` outcomes other than a position: the token was cut short, or is broken.
_CUT: Final = -1
_BROKEN: Final = -2
_LITERALS: Final = ("true", "false", "null")


def json_incomplete(text: str) -> bool:
    """True when ``text`` is a proper prefix of some JSON text: it ended early (a value, a
    string, an escape, a number or a literal still open). False when it is complete, or
    broken where no continuation could mend it (``{"a": [1, 2}``)."""
    n, pos, state = len(text), 0, "value"
    stack: list[str] = []
    while True:
        pos = _WS.match(text, pos).end()  # type: ignore[union-attr]  # always matches
        if pos == n:
            return state != "end"
        ch = text[pos]
        if state in ("end", "colon", "after") or (
            ch in "}]" and state in ("key_or_close", "value_or_close")
        ):
            after = _punctuation(ch, state, stack)
            if after is None:
                return False
            pos, state = pos + 1, after
            continue
        key = state in ("key", "key_or_close")
        if ch in "{[" and not key:
            stack.append(ch)
            pos, state = pos + 1, "key_or_close" if ch == "{" else "value_or_close"
            continue
        end = _token_end(text, pos, key)
        if end < 0:
            return end == _CUT
        pos, state = end, "colon" if key else ("after" if stack else "end")


def _punctuation(ch: str, state: str, stack: list[str]) -> str | None:
    """The state after ``ch`` where a colon, comma or closer belongs; None if it is wrong."""
    if state == "end":
        return None
    if state == "colon":
        return "value" if ch == ":" else None
    if state == "after" and ch == ",":
        return "key" if stack[-1] == "{" else "value"
    if ch != _CLOSER[stack[-1]]:
        return None
    stack.pop()
    return "after" if stack else "end"


def _token_end(text: str, pos: int, key: bool) -> int:
    """Where the string (or, unless ``key``, number or literal) at ``pos`` ends, or ``_CUT``
    when the text ends inside it, or ``_BROKEN``."""
    ch = text[pos]
    if ch == '"':
        end = _STRING_BODY.match(text, pos + 1).end()  # type: ignore[union-attr]
        if end == len(text) or _CUT_ESCAPE.fullmatch(text, end):
            return _CUT
        return end + 1 if text[end] == '"' else _BROKEN
    if key:
        return _BROKEN
    if ch == "-" or ch.isdigit():
        number = _NUMBER.match(text, pos)
        if _CUT_NUMBER.fullmatch(text, pos) or (number is not None and number.end() == len(text)):
            return _CUT
        return _BROKEN if number is None else number.end()
    for word in _LITERALS:
        if text.startswith(word, pos):
            return pos + len(word)
    return _CUT if any(word.startswith(text[pos:]) for word in _LITERALS) else _BROKEN


def decode_arguments(
    text: str | None,
    *,
    limits: Limits,
    index: int | None,
    call_id: str | None,
    name: str | None,
) -> dict[str, Any] | Problem:
    """Decode a call's argument text (JSON). Empty or missing text means ``{}``."""
    if text is None or not text.strip():
        return {}
    if len(text) > limits.max_argument_bytes:
        return Problem(
            "oversized_arguments", index, call_id, f"{len(text)} characters", name, text[:256]
        )
    try:
        value = loads_str(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
        kind: ProblemKind = "truncated_json" if json_incomplete(text) else "invalid_json"
        return Problem(kind, index, call_id, str(exc), name, text)
    return coerce_args(value, index=index, call_id=call_id, name=name, raw=text)


def coerce_args(
    value: Any,
    *,
    index: int | None,
    call_id: str | None,
    name: str | None,
    raw: str | None = None,
) -> dict[str, Any] | Problem:
    """Accept an object; tolerate ``None`` (no arguments) and a JSON string holding an object."""
    if isinstance(value, dict):
        return value
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            inner = loads_str(value)
        except (ValueError, RecursionError):
            inner = None
        if isinstance(inner, dict):
            return inner
    detail = f"arguments are {type(value).__name__}, not an object"
    received = raw if raw is not None else _preview(value)
    return Problem("unexpected_shape", index, call_id, detail, name, received)


def oversized_value(
    value: Any,
    *,
    limits: Limits,
    index: int | None,
    call_id: str | None,
    name: str | None,
) -> Problem | None:
    """An ``oversized_arguments`` Problem when decoded ``value`` exceeds the limit as JSON text."""
    if _surely_within(value, limits.max_argument_bytes):
        return None
    try:
        text = _ENCODER.encode(value)
    except (TypeError, ValueError, RecursionError):
        return None
    if len(text) <= limits.max_argument_bytes:
        return None
    return Problem(
        "oversized_arguments", index, call_id, f"{len(text)} characters", name, text[:256]
    )


_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
#: Values ``_surely_within`` looks at before it leaves the answer to the encoder.
_WALK: Final = 64
#: The longest JSON of a float (``-2.2250738585072014e-308``).
_FLOAT_CHARS: Final = 24


def _surely_within(value: Any, limit: int) -> bool:
    """Whether ``value`` as compact JSON is surely at most ``limit`` characters, from an
    upper bound of its length (a character escapes to at most 6, an int of n bits has
    fewer than n/3 + 1 digits); False when unsure: over the bound, not plain JSON types,
    or more than ``_WALK`` values (a cycle among them)."""
    size, stack, budget = 0, [value], _WALK
    while stack:
        budget -= 1
        item = stack.pop()
        kind = type(item)
        if kind is str:
            size += 6 * len(item) + 2
        elif kind is dict:
            size += 2 + 2 * len(item)  # braces; a colon and a comma each
            for key in item:
                if type(key) is not str:
                    return False
                size += 6 * len(key) + 2
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            size += 2 + len(item)
            stack.extend(item)
        elif kind is int:
            size += item.bit_length() // 3 + 2
        elif kind is float:
            size += _FLOAT_CHARS
        elif kind is bool or item is None:
            size += 5
        else:
            return False
        if size > limit or budget < 0:
            return False
    return True


def _preview(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)[:4096]
    except (TypeError, ValueError):
        return repr(value)[:4096]
    except RecursionError:
        return f"<deeply nested {type(value).__name__}>"
