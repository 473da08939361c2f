"""The flight record format: one response's bytes and what tooltap made of them, as a file.

A record is UTF-8 text, one JSON object per line. The first line is the header
(``"format": "tooltap-flight"``, ``"version"``, the request and response metadata and
what tooltap reported); every further line is one chunk of the body as the app read
it: ``{"at": seconds after the response headers, "data": base64 of the bytes}``. The
writer and ``tooltap replay`` share this module; it does no I/O.

``masked`` removes what a record must never hold: credential headers, and credentials
in the body, the path and the reported arguments (masked with ``redacted``'s rules;
a chunk boundary inside a credential moves to its start, so the mask stays whole).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from .errors import MASK, mask_secrets, secret_spans
from .eventstream import reframed

__all__ = [
    "FORMAT",
    "VERSION",
    "Chunk",
    "FlightRecord",
    "FormatError",
    "Reported",
    "SeenCall",
    "SeenProblem",
    "decode",
    "encode",
    "masked",
    "safe_headers",
]

FORMAT: Final = "tooltap-flight"
#: The format's version: a reader refuses a record of a newer one.
VERSION: Final = 1

#: Headers never written, whatever their value (request or response credentials, cookies).
_CREDENTIAL_HEADERS: Final = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "x-goog-api-key",
        "api-key",
        "cookie",
        "set-cookie",
        "x-amz-security-token",
    }
)


class FormatError(ValueError):
    """Not a flight record this version of tooltap can read."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """One piece of the body as the app read it, ``at`` seconds after the headers."""

    at: float
    data: bytes


@dataclass(frozen=True, slots=True)
class SeenCall:
    """A tool call as reported: its id, name and arguments."""

    call_id: str | None
    name: str
    args: Any


@dataclass(frozen=True, slots=True)
class SeenProblem:
    """A problem as reported: its kind and the call it is about (None: the response)."""

    kind: str
    call_id: str | None = None


@dataclass(frozen=True, slots=True)
class Reported:
    """What tooltap made of one response: calls, problems, and the error it ended with."""

    calls: tuple[SeenCall, ...] = ()
    problems: tuple[SeenProblem, ...] = ()
    error: str | None = None

    def same_as(self, other: Reported) -> bool:
        """The same calls in order, the same problems in any order, the same error."""
        return (
            self.calls == other.calls
            and sorted(self.problems, key=_problem_key) == sorted(other.problems, key=_problem_key)
            and self.error == other.error
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": [dataclasses.asdict(c) for c in self.calls],
            "problems": [dataclasses.asdict(p) for p in self.problems],
            "error": self.error,
        }

    @classmethod
    def from_json(cls, value: Any) -> Reported:
        calls = tuple(
            SeenCall(_opt_str(c.get("call_id")), str(c.get("name", "")), c.get("args"))
            for c in _dicts(value.get("calls"))
        )
        problems = tuple(
            SeenProblem(str(p.get("kind", "")), _opt_str(p.get("call_id")))
            for p in _dicts(value.get("problems"))
        )
        return cls(calls, problems, _opt_str(value.get("error")))


@dataclass(frozen=True, slots=True)
class FlightRecord:
    """One recorded response; see the module docstring for the file layout.

    ``mode``: how the tap read the body (``sse``, ``body``: a whole JSON body, ``error``:
    a non-2xx body). ``framing``: how a streamed body's events are framed (``sse``,
    ``eventstream``: AWS event-stream, ``ndjson``), ``body`` for a body read whole; a
    record without one (written before it was kept) reads as before: ``sse`` for a
    stream. ``end``: how the body ended for the app (``exhausted``, ``closed``,
    ``collected``, ``error``...). ``cut``: the recorder kept only the first bytes.
    ``request``: what correlation read of the request (model, declared tools with their
    schemas, the tool results it carried). ``timing``: ``sent`` (request sent to headers,
    s), ``read`` (the app's first read, s after the headers, or None), ``settled``.
    ``settings``: the limits and thresholds the response was judged with.
    ``transport_error`` and ``sdk_error``: error types of what raised while the body was
    read (by the HTTP client, by the SDK); a replay cannot raise them again.
    """

    dialect: str
    method: str
    path: str
    status: int
    mode: str
    headers: tuple[tuple[str, str], ...]
    end: str
    chunks: tuple[Chunk, ...]
    reported: Reported | None
    tooltap: str = ""
    recorded_at: str = ""
    cut: bool = False
    request: Mapping[str, Any] = field(default_factory=dict)
    timing: Mapping[str, float | None] = field(default_factory=dict)
    settings: Mapping[str, float] = field(default_factory=dict)
    transport_error: str | None = None
    sdk_error: str | None = None
    framing: str = "sse"

    @property
    def body(self) -> bytes:
        """The body as recorded, whole."""
        return b"".join(c.data for c in self.chunks)


def encode(record: FlightRecord) -> bytes:
    """The record as the bytes of its file."""
    header = {
        "format": FORMAT,
        "version": VERSION,
        "tooltap": record.tooltap,
        "recorded_at": record.recorded_at,
        "dialect": record.dialect,
        "method": record.method,
        "path": record.path,
        "status": record.status,
        "mode": record.mode,
        "framing": record.framing,
        "headers": [list(h) for h in record.headers],
        "end": record.end,
        "cut": record.cut,
        "chunks": len(record.chunks),
        "bytes": sum(len(c.data) for c in record.chunks),
        "request": record.request,
        "timing": record.timing,
        "settings": record.settings,
        "transport_error": record.transport_error,
        "sdk_error": record.sdk_error,
        "reported": record.reported.to_json() if record.reported is not None else None,
    }
    lines = [_dumps(header)]
    lines += [
        _dumps({"at": round(c.at, 6), "data": base64.b64encode(c.data).decode("ascii")})
        for c in record.chunks
    ]
    return ("\n".join(lines) + "\n").encode("utf-8")


def decode(data: bytes) -> FlightRecord:
    """The record in a file's bytes (``FormatError`` when it is not one)."""
    try:
        lines = data.decode("utf-8").splitlines()
        header = json.loads(lines[0]) if lines else None
    except (UnicodeDecodeError, ValueError) as exc:
        raise FormatError(f"not a flight record: {exc}") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise FormatError("not a flight record (no tooltap-flight header line)")
    version = header.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise FormatError(f"flight record version {version!r}; this tooltap reads {VERSION}")
    try:
        chunks = tuple(_chunk(json.loads(line)) for line in lines[1:] if line.strip())
        reported = header.get("reported")
        mode = str(header["mode"])
        return FlightRecord(
            dialect=str(header["dialect"]),
            method=str(header.get("method", "POST")),
            path=str(header.get("path", "")),
            status=int(header["status"]),
            mode=mode,
            headers=tuple((str(k), str(v)) for k, v in header.get("headers", ())),
            end=str(header.get("end", "exhausted")),
            chunks=chunks,
            reported=Reported.from_json(reported) if isinstance(reported, dict) else None,
            tooltap=str(header.get("tooltap", "")),
            recorded_at=str(header.get("recorded_at", "")),
            cut=bool(header.get("cut", False)),
            request=_dict(header.get("request")),
            timing=_dict(header.get("timing")),
            settings=_dict(header.get("settings")),
            transport_error=_opt_str(header.get("transport_error")),
            sdk_error=_opt_str(header.get("sdk_error")),
            framing=str(header.get("framing") or ("sse" if mode == "sse" else "body")),
        )
    except (KeyError, TypeError, ValueError, binascii.Error) as exc:
        raise FormatError(f"malformed flight record: {exc!r}") from None


def _chunk(line: Any) -> Chunk:
    return Chunk(float(line["at"]), base64.b64decode(line["data"], validate=True))


def safe_headers(headers: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """``headers`` with lower-case names, without credential headers, values masked."""
    return tuple(
        (name.lower(), mask_secrets(value))
        for name, value in headers
        if name.lower() not in _CREDENTIAL_HEADERS
    )


def masked(record: FlightRecord) -> FlightRecord:
    """``record`` with every credential removed or masked (see the module docstring)."""
    reported = record.reported
    if reported is not None:
        calls = tuple(
            dataclasses.replace(c, args=_masked_json(c.args), name=mask_secrets(c.name))
            for c in reported.calls
        )
        reported = dataclasses.replace(reported, calls=calls)
    return dataclasses.replace(
        record,
        path=mask_secrets(record.path.partition("?")[0]),
        headers=safe_headers(record.headers),
        chunks=_masked_chunks(record.chunks, record.framing),
        reported=reported,
        request=_masked_json(record.request),
    )


def _masked_json(value: Any) -> Any:
    text = json.dumps(value, ensure_ascii=False, default=str)
    masked_text = mask_secrets(text)
    return value if masked_text == text else json.loads(masked_text)


def _masked_chunks(chunks: Sequence[Chunk], framing: str = "sse") -> tuple[Chunk, ...]:
    """The chunks with credentials masked across chunk boundaries (bytes as latin-1 text,
    so every byte maps to one character and back). An event-stream message is masked in
    its payload and framed anew, so it still decodes; bytes after the whole messages (a
    cut stream) are masked as text."""
    data = b"".join(c.data for c in chunks)
    text = data.decode("latin-1")
    edits: list[tuple[int, int, str]] = []
    rest = 0
    if framing == "eventstream":
        messages, rest = reframed(data, _masked_payload)
        edits = [(start, end, message.decode("latin-1")) for start, end, message in messages]
    edits += [(rest + start, rest + end, MASK) for start, end in secret_spans(text[rest:])]
    if not edits:
        return tuple(chunks)
    out: list[str] = []
    moved: list[tuple[int, int, int, int]] = []  # (start, end, start and end in the new text)
    pos = 0
    for start, end, replacement in edits:
        out.append(text[pos:start])
        at = sum(map(len, out))
        moved.append((start, end, at, at + len(replacement)))
        out.append(replacement)
        pos = end
    out.append(text[pos:])
    new = "".join(out)

    def where(offset: int) -> int:  # an offset of the original text in the masked one
        shift = 0
        for start, end, at, after in moved:
            if offset <= start:
                break
            if offset < end:
                return at
            shift = after - end
        return offset + shift

    result, begin, offset = [], 0, 0
    for chunk in chunks:
        offset += len(chunk.data)
        stop = where(offset)
        result.append(Chunk(chunk.at, new[begin:stop].encode("latin-1")))
        begin = stop
    return tuple(result)


def _masked_payload(payload: bytes) -> bytes:
    """An event-stream payload masked; a Bedrock ``chunk``'s base64 ``bytes`` inside too."""
    text = payload.decode("latin-1")
    wrapped: Any = None
    inner = None
    if payload.startswith(b'{"bytes"'):
        try:
            wrapped = json.loads(payload)
            inner = base64.b64decode(wrapped["bytes"], validate=True)
        except (ValueError, TypeError, KeyError, binascii.Error, RecursionError):
            inner = None
    if wrapped and inner is not None and (new := _masked_payload(inner)) != inner:
        text = json.dumps({**wrapped, "bytes": base64.b64encode(new).decode("ascii")})
    return mask_secrets(text).encode("latin-1")


def _problem_key(problem: SeenProblem) -> tuple[str, str]:
    return problem.kind, problem.call_id or ""


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)
