"""Incremental decoder of AWS event-stream framing (``application/vnd.amazon.eventstream``).

A message is a prelude (total length, headers length, the prelude's CRC32), headers
(name, type byte, value), a payload and the CRC32 of everything before it. Both CRCs
are checked. Bytes may arrive split anywhere. A message whose CRC is wrong, or whose
headers do not decode, is skipped and counted in ``problems``; a prelude whose CRC is
wrong loses the framing, so nothing after it is decoded (counted once). Nothing raises.

``events`` turns messages into the ``SSEEvent`` shape the reducers take: the event name is
``:event-type`` (``:exception-type`` for an exception message), the data the payload. A
Bedrock ``InvokeModelWithResponseStream`` ``chunk`` (``{"bytes": base64}``) is unwrapped:
its data is the decoded provider event.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
import zlib
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final, NamedTuple

from .sse import SSEEvent

__all__ = [
    "EventStreamDecoder",
    "EventStreamMessage",
    "events",
    "looks_like_eventstream",
    "reframed",
]

_PRELUDE: Final = 12
_MIN_MESSAGE: Final = _PRELUDE + 4
_PRELUDE_FORMAT: Final = struct.Struct("!III")
_U32: Final = struct.Struct("!I")
#: Header value type -> fixed size (types with a length prefix are handled apart).
_FIXED: Final = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}
_SIGNED: Final = {2: "!b", 3: "!h", 4: "!i", 5: "!q", 8: "!q"}
#: Header blocks kept decoded per decoder: a stream repeats a few blocks (one per event
#: type); only short ones, so what is kept stays a few KiB.
_KEPT_HEADERS: Final = 32
_KEPT_HEADER_BYTES: Final = 256


class EventStreamMessage(NamedTuple):
    """One decoded message: its headers (name -> value, read-only) and payload."""

    headers: Mapping[str, Any]
    payload: bytes


def looks_like_eventstream(data: bytes) -> bool:
    """Whether ``data`` starts with an event-stream prelude (its CRC matches)."""
    if len(data) < _PRELUDE:
        return False
    total, headers, crc = _PRELUDE_FORMAT.unpack_from(data)
    return bool(total >= _MIN_MESSAGE + headers and zlib.crc32(data[:8]) & 0xFFFFFFFF == crc)


def reframed(
    data: bytes, change: Callable[[bytes], bytes]
) -> tuple[list[tuple[int, int, bytes]], int]:
    """The whole, valid messages of ``data`` whose payload ``change`` alters, framed anew
    (lengths and CRCs): (start, end, message); and where the whole messages end."""
    out: list[tuple[int, int, bytes]] = []
    pos, n = 0, len(data)
    while n - pos >= _PRELUDE:
        total, headers_len, crc = _PRELUDE_FORMAT.unpack_from(data, pos)
        end = pos + total
        if zlib.crc32(data[pos : pos + 8]) & 0xFFFFFFFF != crc or end > n:
            break
        if total < _MIN_MESSAGE + headers_len:
            break
        head = pos + _PRELUDE
        payload = data[head + headers_len : end - 4]
        new = change(payload)
        if new != payload:
            prelude = struct.pack("!II", total - len(payload) + len(new), headers_len)
            body = prelude + _U32.pack(zlib.crc32(prelude)) + data[head : head + headers_len]
            body += new
            out.append((pos, end, body + _U32.pack(zlib.crc32(body))))
        pos = end
    return out, pos


class EventStreamDecoder:
    """Feed bytes, get messages; ``problems`` says what was skipped and why.

    A message longer than ``max_message_bytes`` is skipped unread (counted), without
    holding more than the cap in memory.
    """

    __slots__ = ("_buf", "_known", "_lost", "_skip", "max_message_bytes", "problems")

    def __init__(self, max_message_bytes: int = 8 * 1024 * 1024) -> None:
        self._buf = bytearray()
        self._known: dict[bytes, Mapping[str, Any]] = {}  # header blocks already decoded
        self._skip = 0  # bytes of an oversized message still to drop
        self._lost = False  # a bad prelude: the framing is gone
        self.max_message_bytes = max_message_bytes
        self.problems: list[str] = []

    @property
    def pending(self) -> int:
        """Bytes held of a message not yet complete."""
        return len(self._buf)

    def feed(self, data: bytes) -> list[EventStreamMessage]:
        """Take the next chunk; return the messages it completes, in order."""
        if self._lost or not data:
            return []
        if self._skip:
            if len(data) <= self._skip:
                self._skip -= len(data)
                return []
            data = data[self._skip :]
            self._skip = 0
        buf = self._buf
        buf += data
        out: list[EventStreamMessage] = []
        pos = 0
        n = len(buf)
        while n - pos >= _PRELUDE:
            total, headers_len, crc = _PRELUDE_FORMAT.unpack_from(buf, pos)
            if zlib.crc32(buf[pos : pos + 8]) & 0xFFFFFFFF != crc or total < (
                _MIN_MESSAGE + headers_len
            ):
                self.problems.append("prelude checksum mismatch: framing lost")
                self._lost = True
                del buf[:]
                return out
            if total > self.max_message_bytes:
                self.problems.append(f"message of {total} bytes over the limit: skipped")
                held = n - pos
                if held >= total:
                    pos += total
                    continue
                self._skip = total - held
                pos = n
                break
            if n - pos < total:
                break
            end = pos + total
            (message_crc,) = _U32.unpack_from(buf, end - 4)
            if zlib.crc32(buf[pos : end - 4]) & 0xFFFFFFFF != message_crc:
                self.problems.append("message checksum mismatch: message skipped")
                pos = end
                continue
            head = pos + _PRELUDE
            block = bytes(buf[head : head + headers_len])
            headers = self._known.get(block)
            if headers is None:
                decoded = _headers(block)
                headers = None if decoded is None else MappingProxyType(decoded)
                if (
                    headers is not None
                    and len(block) <= _KEPT_HEADER_BYTES
                    and len(self._known) < _KEPT_HEADERS
                ):
                    self._known[block] = headers
            if headers is None:
                self.problems.append("message headers do not decode: message skipped")
            else:
                out.append(EventStreamMessage(headers, bytes(buf[head + headers_len : end - 4])))
            pos = end
        if pos:
            del buf[:pos]
        return out

    def close(self) -> int:
        """End of the body: how many bytes of an unfinished message were left (then reset)."""
        left = len(self._buf) + self._skip
        self._buf = bytearray()
        self._skip = 0
        return left


def _headers(data: bytes) -> dict[str, Any] | None:
    """Decode a headers block; None when it is malformed (or names a header twice)."""
    out: dict[str, Any] = {}
    pos, n = 0, len(data)
    try:
        while pos < n:
            size = data[pos]
            name = data[pos + 1 : pos + 1 + size].decode("utf-8")
            pos += 1 + size
            kind = data[pos]
            pos += 1
            value: Any
            if kind in (6, 7):
                (length,) = struct.unpack_from("!H", data, pos)
                raw = data[pos + 2 : pos + 2 + length]
                if len(raw) != length:
                    return None
                value = raw.decode("utf-8") if kind == 7 else raw
                pos += 2 + length
            elif kind in _FIXED:
                width = _FIXED[kind]
                if pos + width > n:
                    return None
                if kind in (0, 1):
                    value = kind == 0
                elif kind == 9:
                    value = data[pos : pos + 16]
                else:
                    (value,) = struct.unpack_from(_SIGNED[kind], data, pos)
                pos += width
            else:
                return None
            if name in out or len(name.encode("utf-8")) != size:
                return None
            out[name] = value
    except (IndexError, struct.error, UnicodeDecodeError):
        return None
    return out


def events(messages: list[EventStreamMessage]) -> list[SSEEvent]:
    """The messages as reducer events (see the module docstring)."""
    out: list[SSEEvent] = []
    for message in messages:
        headers = message.headers
        kind = headers.get(":message-type", "event")
        name = headers.get(":exception-type" if kind == "exception" else ":event-type")
        if not isinstance(name, str):
            name = str(headers.get(":error-code", kind))
        data = message.payload
        if name == "chunk":
            data = _chunk(data)
        out.append(SSEEvent(name, data))
    return out


def _chunk(payload: bytes) -> bytes:
    """A ``chunk`` event's ``bytes`` (base64), decoded; the payload itself if it has none."""
    try:
        wrapped = json.loads(payload)
        inner = wrapped.get("bytes") if isinstance(wrapped, dict) else None
        return base64.b64decode(inner, validate=True) if isinstance(inner, str) else payload
    except (ValueError, binascii.Error, RecursionError):
        return payload
