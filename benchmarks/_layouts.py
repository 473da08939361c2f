"""The recorded streams laid out as other servers may lay them out, for the parser run.

A fast path that holds only for one vendor's bytes would be fast on the recorded streams
and slow on any other server's; these variants carry the same events with every
object's keys in reverse order, spaces after ``,`` and ``:``, ``event:`` lines only where
the dialect needs them (Anthropic), and LF or CRLF line ends.
"""

from __future__ import annotations

import json
from typing import Any

from ._parsers import Stream

__all__ = ["relaid"]

#: Dialects whose servers must name each event (``event:`` lines).
_NAMED = frozenset({"anthropic.messages"})


def _reversed(value: Any) -> Any:
    if isinstance(value, list):
        return [_reversed(v) for v in value]
    if isinstance(value, dict):
        return {k: _reversed(v) for k, v in reversed(value.items())}
    return value


def _event(block: bytes, named: bool, end: bytes) -> bytes:
    name, data = None, b""
    for line in block.split(b"\n"):
        field, _, value = line.partition(b":")
        value = value.removeprefix(b" ")
        if field == b"event":
            name = value
        elif field == b"data":
            data = value
    if data.startswith(b"{"):
        data = json.dumps(_reversed(json.loads(data)), ensure_ascii=False).encode()
    lines = ([b"event: " + name] if named and name else []) + [b"data: " + data]
    return end.join(lines) + end + end


def relaid(streams: list[Stream]) -> list[Stream]:
    """Each stream again, reordered with LF line ends, and reordered with CRLF."""
    out: list[Stream] = []
    for end, label in ((b"\n", "reordered"), (b"\r\n", "reordered CRLF")):
        for stream in streams:
            named = stream.dialect in _NAMED
            bodies = tuple(
                tuple(
                    _event(block, named, end)
                    for block in b"".join(body).replace(b"\r\n", b"\n").split(b"\n\n")
                    if block.strip()
                )
                for body in stream.bodies
            )
            out.append(Stream(f"{stream.name}, {label}", stream.dialect, bodies))
    return out
