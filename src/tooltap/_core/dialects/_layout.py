"""Event layouts learnt per stream: fast paths that hold for any key order and spacing.

A fast path matches an event's bytes against a pattern instead of decoding it. One server
lays out an event kind the same way every time (key order, spaces, an ``event:`` line or
not), but servers differ. ``learn`` takes one event the full path decoded and turns its
bytes into the pattern of its layout: its bytes literally, but for the values of the
keys named, each a group that matches any value of its kind. Later events laid out the
same way match it, whatever their values; any other event does not (and is decoded).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final, Literal

from .._json import PLAIN_STRING, RAW_STRING

__all__ = ["Layout", "learn", "one_event"]

Kind = Literal["string", "id", "int"]
#: Regex source of a value of each kind; the group holds a string's body, unquoted.
_VALUES: Final[dict[Kind, bytes]] = {
    "string": b'"(' + RAW_STRING + b')"',
    "id": b'"(' + PLAIN_STRING + b')"',
    "int": rb"(0|-?[1-9][0-9]{0,17})",
}
_WS: Final = rb"[ \t\n\r]*"


class Layout:
    """The pattern of one event layout; ``groups[key]``: the group of that key's value."""

    __slots__ = ("groups", "pattern")

    def __init__(self, pattern: re.Pattern[bytes], groups: dict[str, int]) -> None:
        self.pattern = pattern
        self.groups = groups


def one_event(chunk: bytes) -> bool:
    """Whether ``chunk`` is one whole event, LF line ends: the only kind to learn from."""
    return chunk.find(b"\n\n") == len(chunk) - 2 and chunk.find(b"\r") < 0


def learn(
    event: bytes, keys: Mapping[str, Kind], optional: frozenset[str] = frozenset()
) -> Layout | None:
    """The layout of ``event`` (one whole SSE event) with the values of ``keys`` (each once
    in the event, at any depth; a key of ``optional`` may be absent) as groups; None when
    a key is not there once, or its value is not of its kind."""
    spans: list[tuple[int, int, str, Kind]] = []
    for key, kind in keys.items():
        # After "{" or ",": a key, never the inside of a string (its quotes are escaped).
        head = re.compile(rb"[{,]" + _WS + b'"' + re.escape(key.encode()) + b'"' + _WS + b":" + _WS)
        found = list(head.finditer(event))
        if len(found) != 1:
            if not found and key in optional:
                continue
            return None
        start = found[0].end()
        value = re.compile(_VALUES[kind]).match(event, start)
        if value is None:
            return None
        spans.append((start, value.end(), key, kind))
    spans.sort()
    parts: list[bytes] = []
    groups: dict[str, int] = {}
    pos = 0
    for n, (start, end, key, kind) in enumerate(spans, 1):
        parts += [re.escape(event[pos:start]), _VALUES[kind]]
        groups[key] = n
        pos = end
    parts.append(re.escape(event[pos:]))
    pattern = re.compile(b"".join(parts))
    return Layout(pattern, groups) if pattern.fullmatch(event) is not None else None
