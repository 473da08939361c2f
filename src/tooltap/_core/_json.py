"""JSON decoding for the stream hot path: ``jiter`` when installed, the stdlib's answer always.

``loads`` returns exactly what ``json.loads`` returns: jiter decodes what it accepts
(it produces the same values), and whatever it refuses (lone surrogate escapes, a BOM,
UTF-16, nesting deeper than its limit, invalid JSON) goes to ``json.loads``, which
decides and raises with its own messages. jiter ships with openai and anthropic; the
core works without it.

``RAW_STRING`` matches the body of a JSON string (between its quotes) that is valid on
its own: the dialects' fast paths keep argument fragments in that escaped form and
``unescape`` them once per call, instead of decoding every event. ``match_run`` finds
such bodies between a known head and tail, event after event, in C when ``_speedups``
is built.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any, Final

__all__ = [
    "INT",
    "PLAIN_STRING",
    "RAW_STRING",
    "SLOT_INT",
    "SLOT_PLAIN",
    "loads",
    "loads_str",
    "match_run",
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
#: In ``match_run``'s head and tail, bytes that stand for an ``INT`` / a ``PLAIN_STRING``
#: (JSON text never holds them raw).
SLOT_INT: Final = b"\x01"
SLOT_PLAIN: Final = b"\x02"
_SLOTS: Final = {SLOT_INT[0]: INT, SLOT_PLAIN[0]: PLAIN_STRING}


def loads(data: bytes) -> Any:
    """``json.loads(data)``, decoded by jiter when it can."""
    if _jiter is not None:
        try:  # keys only: jiter's default also caches short string values, process-wide
            return _jiter(data, cache_mode="keys")  # (ids, argument text: unbounded variety)
        except ValueError:
            pass
    return json.loads(data)


def loads_str(text: str) -> Any:
    """``json.loads(text)`` for text, decoded by jiter (as UTF-8 bytes) when it can."""
    if _jiter is not None:
        try:  # UnicodeEncodeError (lone surrogates) is a ValueError too
            return _jiter(text.encode("utf-8"), cache_mode="keys")
        except ValueError:
            pass
    return json.loads(text)


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


def _match_run(chunk: bytes, pos: int, head: bytes, tail: bytes, cap: int) -> tuple[bytes, int]:
    """The bodies of the whole events of ``chunk`` from ``pos`` that are each head + the
    body of a JSON string valid on its own (``RAW_STRING``, UTF-8) + ``tail`` (starting
    with the closing quote; spaces and tabs may pad it where JSON allows them: outside
    its strings, before its first newline) and at most ``cap`` bytes, joined; and the
    offset after the last of them. An event ends at the first blank line. In head and
    tail, ``SLOT_INT`` stands for a JSON integer (``INT``) and ``SLOT_PLAIN`` for a
    ``PLAIN_STRING``: the fields that change from event to event of one call.

    The pure Python version of ``_speedups.match_run``, used when that is not built.
    """
    if not (isinstance(head, bytes) and isinstance(tail, bytes)):
        raise TypeError("match_run: head and tail must be bytes")
    if not tail.startswith(b'"'):
        raise ValueError("match_run: tail must start with the closing quote")
    if type(chunk) is not bytes or pos < 0:
        return b"", pos
    template, bodies = _template(head, tail), []
    while pos < len(chunk):
        stop = chunk.find(b"\n\n", pos) + 2
        if stop < 2 or stop - pos > cap:
            break
        found = template.fullmatch(chunk, pos, stop)
        if found is None or not valid_utf8(raw := found[1]):
            break
        bodies.append(raw)
        pos = stop
    return b"".join(bodies), pos


@functools.lru_cache(maxsize=64)
def _template(head: bytes, tail: bytes) -> re.Pattern[bytes]:
    """``head``, a string body, then ``tail`` with the padding ``_match_run`` allows."""
    parts = [_SLOTS.get(byte, re.escape(bytes((byte,)))) for byte in head]
    parts.append(b"(" + RAW_STRING + b")")
    in_string = newline = False
    for index, byte in enumerate(tail):
        if index and not in_string and not newline:
            parts.append(rb"[ \t]*+")
        parts.append(_SLOTS.get(byte, re.escape(bytes((byte,)))))
        if byte == ord('"') and index:
            in_string = not in_string
        elif byte == ord("\n"):
            newline = True
    return re.compile(b"".join(parts))


try:
    from ._speedups import match_run
except ImportError:  # pragma: no cover - built wherever a C compiler is
    match_run = _match_run
