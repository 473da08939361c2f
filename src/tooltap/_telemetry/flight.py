"""The flight recorder: one file per response that ended badly, with the bytes the app read.

Opt-in (``Config(flight_recorder=DIR)`` or ``$TOOLTAP_FLIGHT_RECORDER``): a record
holds response content. The tap opens a ``Recording`` per tapped response
(``FlightRecorder.begin``), hands it every piece the parser takes (``chunk``: the piece
itself, never copied, and a clock reading, up to ``flight_recorder_bytes``), and
settles it with the body (``settled``); a body the client read whole is recorded in one
step (``whole``). A settled response that has a problem, an error status, or an
exception (the HTTP client's or the SDK's) while it was read, or any response with
``flight_recorder_all``, becomes a ``FlightRecord``: its file name goes on the
inference span (``tooltap.flight_record``) at once, and the writer thread masks,
encodes and writes it later (``flight_writer``).
"""

from __future__ import annotations

import datetime
import itertools
import os
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, Protocol

from .._core.errors import classify_error
from .._core.flight import Chunk, FlightRecord, Reported
from .._core.model import ErrorClass, Limits, Parsed, RequestInfo
from .._core.replay import judge, request_of
from .._core.stream import StreamParser, framing_of, parse_response
from .._forks import new_lock
from . import semconv as sc
from .config import Config
from .flight_writer import PREFIX, SUFFIX, FlightWriter

__all__ = ["FlightRecorder", "FlightSettings", "Recording", "flight_settings"]

_DEFAULTS: Final = {
    "flight_recorder_bytes": 4 * 1024 * 1024,
    "flight_recorder_files": 200,
    "flight_recorder_total_bytes": 256 * 1024 * 1024,
}
_clock: Final = time.monotonic


@dataclass(frozen=True, slots=True)
class FlightSettings:
    """The recorder's resolved options."""

    directory: Path
    max_bytes: int
    every: bool
    files: int
    total_bytes: int


def flight_settings(config: Config) -> FlightSettings | None:
    """The recorder's options from ``config`` (checked there), or None: off."""
    if config.flight_recorder is None:
        return None
    sizes = {name: getattr(config, name) or default for name, default in _DEFAULTS.items()}
    return FlightSettings(
        Path(os.fspath(config.flight_recorder)).expanduser(),
        sizes["flight_recorder_bytes"],
        bool(config.flight_recorder_all),
        sizes["flight_recorder_files"],
        sizes["flight_recorder_total_bytes"],
    )


class _Op(Protocol):
    """What a recording reads of its operation (``operation.Operation``)."""

    dialect: str
    request_info: RequestInfo | None
    span: Any

    @property
    def attempt_started(self) -> float: ...


class FlightRecorder:
    """Turns settled responses into records and hands them to the writer."""

    def __init__(
        self, settings: FlightSettings, config: Config, version: str, on_drop: Callable[[], None]
    ) -> None:
        self.settings = settings
        self.version = version
        self.writer = FlightWriter(
            settings.directory,
            files=settings.files,
            total_bytes=settings.total_bytes,
            on_drop=on_drop,
        )
        limits: Limits = config.limits
        self.limits = limits
        self.judged_with: dict[str, float] = {
            "max_event_bytes": limits.max_event_bytes,
            "max_argument_bytes": limits.max_argument_bytes,
            "stream_buffered_wait": config.stream_buffered_wait,
            "stream_buffered_events": config.stream_buffered_events,
        }
        self._seq = itertools.count(1)
        self._lock = new_lock()
        self._names: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()

    def begin(self, op: _Op, path: str, status: int, headers: Any) -> Recording:
        """A tapped response's recording, from its headers on."""
        return Recording(self, op, path, status, _headers(headers))

    def whole(
        self,
        op: _Op,
        path: str,
        status: int,
        headers: Any,
        body: bytes,
        parsed: Parsed | None = None,
        error: ErrorClass | None = None,
    ) -> None:
        """A response the client read whole: recorded, if it ended badly, in one step."""
        recording = Recording(self, op, path, status, _headers(headers))
        recording.chunk(body)
        timing = recording.timing(None)
        if error is not None:
            reported: Reported | None = Reported(error=error.error_type)
        else:
            reported = recording.judged(parsed, timing, end="exhausted", first=None, exc=None)
        mode = "body" if error is None else "error"
        recording.finish(mode, "exhausted", reported, timing, None, None)

    def record(self, op: _Op, record: FlightRecord, chunks: Callable[[], Sequence[Chunk]]) -> None:
        """Name ``record``, put the name on ``op``'s span, queue it for the writer (which
        adds its ``chunks``: built off the app's path)."""
        now = datetime.datetime.now(datetime.UTC)
        stamp = now.strftime("%Y%m%dT%H%M%S.%fZ")
        name = f"{PREFIX}{stamp}-{os.getpid()}-{next(self._seq):06d}{SUFFIX}"
        record = replace(
            record, tooltap=self.version, recorded_at=now.isoformat(timespec="milliseconds")
        )
        if not self.writer.submit(name, lambda: replace(record, chunks=tuple(chunks()))):
            return
        with self._lock:
            names = self._names.get(op)
            names = self._names[op] = f"{names},{name}" if names else name
        span = op.span
        if span.is_recording():
            span.set_attribute(sc.TOOLTAP_FLIGHT_RECORD, names)


class Recording:
    """One response being recorded: its chunks with their arrival times, then its record."""

    __slots__ = (
        "_at",
        "_max",
        "_op",
        "_path",
        "_pieces",
        "_recorder",
        "_status",
        "cut",
        "headers",
        "size",
    )

    def __init__(
        self,
        recorder: FlightRecorder,
        op: _Op,
        path: str,
        status: int,
        headers: tuple[tuple[str, str], ...],
    ) -> None:
        self._at = time.monotonic()
        self._recorder = recorder
        self._op = op
        self._path = path
        self._status = status
        self.headers = headers
        self._max = recorder.settings.max_bytes
        self._pieces: list[tuple[float, bytes]] = []
        self.size = 0
        self.cut = False

    def chunk(self, data: bytes) -> None:
        """One piece of the body, as the parser takes it (kept up to the byte cap): the
        reference and a clock reading, nothing more on the chunk path."""
        self.size += len(data)
        if self.size > self._max or self.cut:
            self.cut = True
            return
        self._pieces.append((_clock(), data))

    @property
    def chunks(self) -> list[Chunk]:
        """The pieces so far, with their arrival times after the headers."""
        at = self._at
        return [Chunk(t - at, bytes(data)) for t, data in self._pieces]

    def settled(
        self,
        mode: str,
        end: str,
        exc: BaseException | None,
        sdk: BaseException | None,
        error: ErrorClass | None,
        parser: StreamParser | None,
        read_at: float | None,
    ) -> None:
        """The tapped body settled (``TapState``): record it if it ended badly.

        ``parser``: the body's ``StreamParser`` (its ``close`` returns what the tap
        recorded); ``error``: the class of an error body; ``read_at``: when the app's
        first read started (``time.monotonic``)."""
        timing = self.timing(read_at)
        reported: Reported | None
        if mode == "error":
            reported = Reported(error=error.error_type if error else None)
        elif parser is not None:
            binary = self._framing(mode) != "sse"  # (no event count to judge buffering by)
            first = self._pieces[0][1] if self._pieces and not binary else None
            reported = self.judged(parser.close(), timing, end=end, first=first, exc=exc)
        elif end == "exhausted" and not self.cut:
            body = b"".join(data for _, data in self._pieces)
            parsed = parse_response(body, self._op.dialect, limits=self._recorder.limits)
            reported = self.judged(parsed, timing, end=end, first=None, exc=exc)
        else:
            reported = None if self.cut else Reported(error=_error_type(exc))
        self.finish(mode, end, reported, timing, exc, sdk)

    def judged(
        self,
        parsed: Parsed | None,
        timing: Mapping[str, float | None],
        *,
        end: str,
        first: bytes | None,
        exc: BaseException | None,
    ) -> Reported | None:
        """What tooltap reported for a 2xx body parsed as ``parsed`` (None: unknown)."""
        if parsed is None:
            return None
        return judge(
            parsed,
            self._op.request_info,
            end=end,
            first=first,
            total=self.size,
            timing=timing,
            settings=self._recorder.judged_with,
            transport_error=_error_type(exc),
        )

    def _framing(self, mode: str) -> str:
        """How the body's events are framed, as the tap read them (``body``: whole)."""
        if mode != "sse":
            return "body"
        content_type = next((v for k, v in self.headers if k == "content-type"), "")
        return framing_of(content_type) or "sse"

    def timing(self, read_at: float | None) -> dict[str, float | None]:
        """Seconds from the request sent to the headers, and after the headers: the app's
        first read, the first piece, now (the body settled)."""
        return {
            "sent": self._at - self._op.attempt_started,
            "read": None if read_at is None else read_at - self._at,
            "first": self._pieces[0][0] - self._at if self._pieces else None,
            "settled": time.monotonic() - self._at,
        }

    def finish(
        self,
        mode: str,
        end: str,
        reported: Reported | None,
        timing: Mapping[str, float | None],
        exc: BaseException | None,
        sdk: BaseException | None,
    ) -> None:
        """Make the record if the response ended badly (or the recorder keeps every one)."""
        recorder = self._recorder
        sdk_error = _error_type(sdk)
        bad = (
            reported is None
            or bool(reported.problems)
            or reported.error is not None
            or sdk_error is not None
            or exc is not None
            or not 200 <= self._status < 300
        )
        if not (bad or recorder.settings.every):
            return
        op = self._op
        info = op.request_info
        record = FlightRecord(
            dialect=op.dialect,
            method="POST",
            path=self._path,
            status=self._status,
            mode=mode,
            framing=self._framing(mode),
            headers=self.headers,
            end=end,
            chunks=(),
            reported=reported,
            cut=self.cut,
            request=request_of(info) if info is not None else {},
            timing=timing,
            settings=recorder.judged_with,
            transport_error=_error_type(exc),
            sdk_error=sdk_error,
        )
        recorder.record(op, record, lambda: self.chunks)


def _headers(headers: Any) -> tuple[tuple[str, str], ...]:
    items = headers.multi_items() if hasattr(headers, "multi_items") else headers.items()
    return tuple((str(k).lower(), str(v)) for k, v in items)


def _error_type(exc: BaseException | None) -> str | None:
    return None if exc is None else classify_error(None, {}, None, exc).error_type
