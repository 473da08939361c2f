"""Turn received argument text or objects into a call's ``args``, or a Problem."""

from __future__ import annotations

import json
from typing import Any

from ._json import loads_str
from .model import Limits, Problem

__all__ = ["coerce_args", "decode_arguments", "json_incomplete", "may_exceed", "oversized_value"]

#: How much longer than its encoded JSON a decoded value can get when dumped again:
#: ``9e15`` (4 characters) dumps as ``9000000000000000.0`` (18); everything else shrinks
#: (escapes, whitespace) or stays.
_MAX_GROWTH = 5


def may_exceed(encoded_bytes: int, limits: Limits) -> bool:
    """Whether a value decoded from ``encoded_bytes`` of JSON could exceed the argument limit."""
    return encoded_bytes * _MAX_GROWTH > limits.max_argument_bytes


def json_incomplete(text: str) -> bool:
    """True when ``text`` stops inside a JSON value: an open string, array or object."""
    depth = 0
    in_string = False
    escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
    return in_string or depth > 0


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
        kind = "truncated_json" if json_incomplete(text) else "invalid_json"
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
            inner = json.loads(value)
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
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return None
    if len(text) <= limits.max_argument_bytes:
        return None
    return Problem(
        "oversized_arguments", index, call_id, f"{len(text)} characters", name, text[:256]
    )


def _preview(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)[:4096]
    except (TypeError, ValueError):
        return repr(value)[:4096]
    except RecursionError:
        return f"<deeply nested {type(value).__name__}>"
