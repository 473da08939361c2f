"""AWS event-stream framing, written: what Bedrock's streams send (the simulator's side)."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from collections.abc import Mapping
from typing import Any

__all__ = ["chunk_message", "encode", "event_message", "exception_message"]

#: Header value type codes by Python value kind.
_BOOL_TRUE, _BOOL_FALSE, _BYTE, _SHORT, _INT, _LONG, _BYTES, _STRING, _TIME, _UUID = range(10)


def _header(name: str, value: Any) -> bytes:
    """One header; a ``(type code, value)`` pair picks a type, else bool/int/bytes/str."""
    raw = name.encode("utf-8")
    out = bytes([len(raw)]) + raw
    kind, value = value if isinstance(value, tuple) else (None, value)
    if kind is None:
        if isinstance(value, bool):
            kind = _BOOL_TRUE if value else _BOOL_FALSE
        elif isinstance(value, int):
            kind = _INT
        elif isinstance(value, bytes):
            kind = _BYTES
        else:
            kind = _STRING
    if kind in (_BOOL_TRUE, _BOOL_FALSE):
        return out + bytes([kind])
    if kind in (_BYTES, _STRING):
        data = value if isinstance(value, bytes) else str(value).encode("utf-8")
        return out + bytes([kind]) + struct.pack("!H", len(data)) + data
    if kind == _UUID:
        return out + bytes([kind]) + bytes(value)
    fmt = {_BYTE: "!b", _SHORT: "!h", _INT: "!i", _LONG: "!q", _TIME: "!q"}[kind]
    return out + bytes([kind]) + struct.pack(fmt, value)


def encode(headers: Mapping[str, Any], payload: bytes) -> bytes:
    """One whole message: prelude, headers, payload, both CRCs."""
    block = b"".join(_header(k, v) for k, v in headers.items())
    total = 12 + len(block) + len(payload) + 4
    head = struct.pack("!II", total, len(block))
    prelude = head + struct.pack("!I", zlib.crc32(head) & 0xFFFFFFFF)
    body = prelude + block + payload
    return body + struct.pack("!I", zlib.crc32(body) & 0xFFFFFFFF)


def event_message(event_type: str, payload: Mapping[str, Any]) -> bytes:
    """An ``event`` message of ``event_type`` carrying a JSON payload."""
    headers = {
        ":event-type": event_type,
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return encode(headers, json.dumps(payload, ensure_ascii=False).encode("utf-8"))


def exception_message(exception_type: str, message: str) -> bytes:
    """An ``exception`` message (``throttlingException``...), as Bedrock ends a stream."""
    headers = {
        ":exception-type": exception_type,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return encode(headers, json.dumps({"message": message}).encode("utf-8"))


def chunk_message(event: Mapping[str, Any]) -> bytes:
    """An ``InvokeModelWithResponseStream`` ``chunk``: the provider event, base64 inside."""
    inner = json.dumps(event, ensure_ascii=False).encode("utf-8")
    return event_message("chunk", {"bytes": base64.b64encode(inner).decode("ascii"), "p": "abc"})
