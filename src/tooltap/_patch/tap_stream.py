"""The state of one tapped response body: it parses what the app reads and settles once.

How it settles, and the bodies in flight: ``tap_settle``.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import AsyncGenerator, Callable, Generator, Mapping
from typing import Any, Final

from .._core.buffering import bytes_burst, judged
from .._core.dialects._base import Reducer
from .._core.model import Problem, RequestInfo, ToolCall
from .._core.stream import Framing, StreamParser
from .._core.stream_items import ItemParser, item_parser
from .._quietly import after_collection, quietly, report
from .._telemetry.flight import Recording
from .._telemetry.operation import Operation
from .._telemetry.settlement import Body, BodyEvent
from .tap_decoder import TapDecoder
from .tap_settle import End, Mode, Settling, collected, live, settle_all

__all__ = ["End", "Mode", "TapState", "settle_all"]

_ERROR_BODY_CAP: Final = 64 * 1024
#: Bytes kept for an SDK's items past which those its loop has taken are let go
#: (``TapState.trim``).
TRIM_BYTES = 16 * 1024
#: A threshold no body reaches: the bytes kept are not trimmed.
UNTRIMMED: Final = 1 << 62


#: How an SSE body starts (after any blank lines): a field, or a comment.
_SSE_HEADS: Final = (b"data:", b"event:", b"id:", b"retry:", b":")


def _none(chunk: bytes) -> None:
    """``hot`` while the client's decoder, not the raw stream, hands the tap its bytes."""


class TapState(Settling):
    """What one tapped body has seen.

    The proxies call ``hot(chunk)`` for every chunk and hand the calls it returns to
    ``op.calls_received``: ``hot`` is ``feed`` for the first chunk, then the parser's own
    ``feed`` when nothing else is left to do per chunk (an SSE body, not compressed),
    which saves a Python call on every event.

    A body the client decodes (``Content-Encoding``) is parsed from the client's own
    decoded pieces instead (``decoding``): never decoded twice, never other than the app
    gets it. A body not marked as SSE is taken as SSE when it starts like one. A body that
    is not parsed (too big to keep) says so in one problem.

    A body an SDK's loop reads (``claim``) is parsed from the items that loop decodes
    (``items``) instead of its bytes, which the tap keeps (``raw``) to parse after all
    (``unclaim``) when an item is not what the reader expects, when they outgrow
    ``max_event_bytes``, or when the stream does not end as it should (an error event,
    a cut, the app stopping early): the bytes decide every case but the plain one. The
    SDK's loop checks the bytes kept against the cap per item; chunks no step of it reads
    (the app reading the body itself, past it) check them per chunk (``_keep``). Past
    ``TRIM_BYTES`` the bytes of the events the items have told are let go, and a copy of
    the reducer they left is kept instead (``trim``): the bytes parsed after all then
    start there.

    For ``stream_buffered`` it keeps three clock readings (headers, the first read
    started, the first chunk), the first chunk's events and bytes, and the body's byte
    count (``size``): ``feed`` counts what it takes; past the first chunk, the bytes
    that take a faster ``hot`` are counted only while the first read may yet hold
    ``BURST_SHARE`` of them (``_counting``, ``buffering.bytes_burst``): with fewer events
    than a burst (``buffering.judged``), not at all.
    """

    __slots__ = (
        "__weakref__",
        "_at",
        "_base",
        "_based",
        "_buf",
        "_cap",
        "_decoded",
        "_first",
        "_first_at",
        "_first_bytes",
        "_first_events",
        "_framing",
        "_loop",
        "_next",
        "_off",
        "_oversized",
        "_parser",
        "_raw",
        "_read_at",
        "_reader",
        "_returned",
        "_streamed",
        "_thread",
        "capture",
        "emitted",
        "flight",
        "headers",
        "hot",
        "info",
        "mode",
        "op",
        "size",
        "status",
    )

    def __init__(
        self,
        op: Operation,
        info: RequestInfo,
        *,
        mode: Mode,
        status: int,
        headers: Mapping[str, str],
        framing: Framing = "sse",
    ) -> None:
        """``framing``: how a stream's events are framed (``sse``, ``eventstream``, ``ndjson``)."""
        self._at = time.monotonic()
        self._read_at: float | None = None
        self._first_at = 0.0
        self._first_events = 0
        self._first_bytes = 0
        self.size = 0
        self.op = op
        self.info = info
        self.mode = mode
        self.status = status
        self.headers = headers
        self.capture = op.tel.config.capture_any
        limits = op.tel.config.limits
        self._framing: Framing = framing
        self._streamed = mode == "sse"  # parsed as a stream (``_stream_parser``)
        self._parser: StreamParser | None = None
        self._buf = bytearray()
        self.items: ItemParser | None = None
        self._raw = bytearray()
        self._base: Reducer | None = None  # the reducer as the items left it where raw starts
        self._based = 0  # calls handed on from the items by then
        self.emitted = 0  # calls handed on from the SDK's items
        self._cap = _ERROR_BODY_CAP if mode == "error" else limits.max_event_bytes
        self._decoded = False
        self._first = mode != "error"
        self._off = False
        self._oversized = False
        self.stage = Body.READING
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._reader: weakref.ref[Any] | None = None
        self._returned = False  # the SDK's loop returned (read the stream to its end)
        self._loop: weakref.ref[Any] | None = None
        self._thread: threading.Thread | None = None
        self._kept: tuple[End, BaseException | None] | None = None  # an end awaiting a step
        self.hot: Callable[[bytes], list[ToolCall] | None] = self.feed
        self._next: Callable[[bytes], list[ToolCall] | None] = self.feed  # ``_counting``'s step
        self.flight: Recording | None = None  # the flight recorder's, set by the tap
        op.body = self

    def claim(self) -> ItemParser | None:
        """An SDK's loop is about to read this SSE body: a parser of its items, when its
        dialect has one and no chunk came yet (else None: the bytes are parsed)."""
        if (
            not self._streamed
            or self._framing != "sse"
            or not self._first
            or self._off
            or self.capture
            or self.flight is not None
        ):
            return None
        self.items = item_parser(self.info.dialect, self.op.tel.config.limits, self._raw)
        return self.items

    def unclaim(self, emitted: int) -> list[ToolCall]:
        """Parse the bytes after all, from here on: the calls of those kept so far, but
        the first ``emitted`` (handed on already from the items). Bytes trimmed are
        parsed on from the reducer the items had left there."""
        self.items = None
        raw, self._raw = self._raw, bytearray()
        base, self._base = self._base, None
        if not self._streamed:
            return []
        if base is not None:
            limits = self.op.tel.config.limits
            self._parser = StreamParser(self.info.dialect, limits=limits, reducer=base)
        parser = self._stream_parser()
        if not self._first and not self._decoded and self.hot != self.feed:
            self._go(parser.feed)
        return parser.feed(bytes(raw))[max(emitted - self._based, 0) :] if raw else []

    def _stream_parser(self) -> StreamParser:
        """The parser of this body's bytes as a stream, made when first needed (a body an
        SDK's loop reads from its items may never need one)."""
        parser = self._parser
        if parser is None:
            limits = self.op.tel.config.limits
            parser = StreamParser(self.info.dialect, limits=limits, framing=self._framing)
            self._parser = parser
        return parser

    def trim(self, last: int, emitted: int) -> int:
        """Let go of the bytes of the events the items have told, keeping a copy of the
        reducer they left (``ItemParser.fork``), before the SDK's loop takes its next item;
        ``last``: the bytes kept when it took the one before; ``emitted``: the calls handed
        on. The next threshold of the bytes kept.

        The SDK reads the body only when its decoder holds no whole event: when more bytes
        came than ``last``, every event that ended within ``last`` was decoded and taken
        (or skipped by the SDK, as the items path skips it), and none after. Only bodies
        the SDK's loop reads itself, in LF line ends (a CR may end an event later for one
        decoder than for another), of a dialect whose reducer can be copied."""
        raw = self._raw
        size = len(raw)
        if size == last or size > self._cap:  # no read since / parsed after all: later
            return size
        if self.items is None or self._step() != raw.extend:
            return UNTRIMMED
        end = raw.rfind(b"\n\n", 0, last)
        if end < 0:  # one event so far: try again once as many bytes more came
            return size + TRIM_BYTES
        if raw.find(b"\r", 0, end) >= 0:
            return UNTRIMMED
        base = self.items.fork()
        if base is None:
            return UNTRIMMED
        del raw[: end + 2]
        self._base, self._based = base, emitted
        return TRIM_BYTES

    def _keep(self, chunk: bytes) -> list[ToolCall] | None:
        """``hot`` while an SDK's loop has claimed the body but may not be the one reading
        it (the app reads the body itself, or the loop ended): the bytes kept are checked
        against the cap here, and past it parsed instead (``unclaim``)."""
        self._raw += chunk
        return self.unclaim(self.emitted) if len(self._raw) > self._cap else None

    def _unwatched(self) -> None:
        """Chunks may come with no step of the SDK's loop to check the bytes kept: from
        now on each raw chunk kept checks them (``_keep``)."""
        if self.items is not None and not self._first and not self._decoded:
            self._go(self._keep)

    def oversized_raw(self) -> bool:
        """Whether the bytes kept for an SDK's items outgrew ``max_event_bytes``."""
        return len(self._raw) > self._cap

    def kept(self) -> tuple[bytearray, int, int]:
        """The bytes kept for an SDK's items (while claimed), how many it may keep, and
        how many before it ``trim``s them."""
        return self._raw, self._cap, TRIM_BYTES

    def decoding(self, decoder: Any) -> TapDecoder:
        """The client's decoder for this body, wrapped to hand the tap what it decodes."""
        self._decoded = True
        return TapDecoder(decoder, self)

    def stop(self) -> None:
        """Tap no more of this body (the chunks still go to the app)."""
        self._off = True
        self.items = None
        self.hot = self.feed

    def forget(self) -> None:
        """Never settle: a forked child's copy of a body its parent is reading."""
        self._report(BodyEvent.FORGOTTEN, None, None)
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None

    def watch(self, proxy: object) -> None:
        """Settle as ``collected`` if ``proxy`` is garbage-collected before the body ends."""
        finalizer = weakref.finalize(proxy, collected, self)
        finalizer.atexit = False
        self._finalizer = finalizer
        live.add(self)

    def reading(self) -> None:
        """The app started reading the body (a time for ``stream_buffered``), in this thread."""
        if self._read_at is None:
            self._read_at = time.monotonic()
        self._thread = threading.current_thread()
        if self.items is not None and not self._sdk_stepping():
            self._unwatched()  # the app reads a claimed body itself

    def looped(self, loop: object) -> None:
        """``loop`` is the proxy's own generator: its steps tell ``dropped`` that a read runs."""
        self._loop = weakref.ref(loop)

    def dropped(self, caller: threading.Thread) -> bool:
        """Not settled, and nobody reads it now: no step of the tap's loop or of the SDK's
        runs (a thread waiting for a chunk, a listener inside one), and the thread that reads
        it is ``caller`` itself or gone."""
        if self.stage is Body.SETTLED:
            return False
        loop = self._loop() if self._loop is not None else None
        if loop is not None and _running(loop):
            return False
        if self._sdk_stepping():
            return False
        thread = self._thread
        reader_elsewhere = thread is not None and thread is not caller and thread.is_alive()
        return not (reader_elsewhere and loop is not None)

    def read_by(self, reader: Generator[Any] | AsyncGenerator[Any]) -> None:
        """``reader`` is the SDK's own loop over this body: a body that ends during one of its
        steps settles once that step is over, with what the SDK raised (``read_done``)."""
        self._reader = weakref.ref(reader)

    def _sdk_stepping(self) -> bool:
        reader = self._reader() if self._reader is not None else None
        return reader is not None and _running(reader)

    def read_done(self, exc: BaseException | None) -> None:
        """The SDK's loop over this body ended: returned, closed, or raised ``exc``.

        When the SDK raised (not a cancellation), it never handed the response on: the
        body settles with that failure (a close the SDK made on its way out is not the
        app stopping early), and the response's calls are not delivered."""
        if after_collection(self.read_done, exc):
            return
        self._reader = None
        self._returned = exc is None
        self._unwatched()
        if isinstance(exc, Exception):
            self._report(BodyEvent.STEP_RAISED, None, exc)
        else:
            self._report(BodyEvent.STEP_RETURNED, None, None)

    def feed(self, chunk: bytes) -> list[ToolCall] | None:
        """One raw chunk, as the transport delivered it; the calls it completed."""
        if self._off:
            return None
        self.size += len(chunk)
        if self._first:
            self._first = False
            self._first_at = time.monotonic()
            if self.mode == "sse" or self.info.stream:  # not a whole body read in chunks
                self.op.first_chunk()
            if self._decoded:
                self.hot = _none
                return None
            if self._streamed:
                if self._framing == "sse":  # (binary framing: no event count to judge by)
                    self._first_events = chunk.count(b"\n\n") + chunk.count(b"\r\n\r\n")
                self._first_bytes = len(chunk)
                if not self.capture and self.flight is None:
                    if self._burst_possible():
                        self.hot = self._counting
                    if self.items is None:
                        self._go(self._stream_parser().feed)
                    else:  # the SDK's loop checks the bytes kept, when it is the reader
                        self._go(self._raw.extend if self._sdk_stepping() else self._keep)
        if self._decoded:
            return None
        if self.flight is not None:
            self.flight.chunk(chunk)
        return self._take(chunk)

    def _burst_possible(self) -> bool:
        """Whether the first chunk holds enough events for ``stream_buffered`` to judge."""
        config, events = self.op.tel.config, self._first_events
        return events > 0 and judged(
            events=events,
            min_wait=config.stream_buffered_wait,
            min_events=config.stream_buffered_events,
        )

    def _counting(self, chunk: bytes) -> list[ToolCall] | None:
        """``hot`` while the first chunk may yet hold ``BURST_SHARE`` of the body's bytes:
        counts them, then hands the chunk on (and, once it cannot, ``hot`` too)."""
        self.size += len(chunk)
        step = self._next
        if not bytes_burst(self._first_bytes, self.size):
            self.hot = step
        return step(chunk)

    def _go(self, step: Callable[[bytes], list[ToolCall] | None]) -> None:
        """Make ``step`` what each chunk goes to (after ``_counting``, while it counts)."""
        if self.hot == self._counting:
            self._next = step
        else:
            self.hot = step

    def _step(self) -> Callable[[bytes], list[ToolCall] | None]:
        """What each chunk goes to (past ``_counting``)."""
        return self._next if self.hot == self._counting else self.hot

    def decoded(self, data: bytes) -> None:
        """One piece the client's decoder produced for the app."""
        if self._off or not data:
            return
        try:
            if self.flight is not None:
                self.flight.chunk(data)
            calls = self._take(data)
            if calls:
                self.op.calls_received(calls)
        except Exception as exc:  # noqa: BLE001 - never into the app
            self.broken(exc)

    def flushed(self) -> None:
        """The client's decoder is flushed: a raw end that waited for it settles now."""
        self._decoded = False
        if self.stage is Body.AWAITING_FLUSH:
            quietly(self.finish, "exhausted")

    def _take(self, data: bytes) -> list[ToolCall] | None:
        if self.items is not None:
            self._raw += data
            return self.unclaim(self.emitted) if len(self._raw) > self._cap else None
        if self._streamed:
            if self.capture and len(self._buf) + len(data) <= self._cap:
                self._buf += data  # the text, recorded at the end under content capture
            return (self._parser or self._stream_parser()).feed(data)
        if self.mode == "body" and not self._buf and self._sse_start(data):
            return self._take(data)
        if len(self._buf) + len(data) <= self._cap:
            self._buf += data
        else:
            self.stop()  # too big to keep: settle without a parse (saying so, unless an error)
            self._buf = bytearray()
            if self.mode == "body":
                self._oversized = True
                detail = f"body over {self._cap} bytes: not parsed"
                self.op.record_problem(Problem("oversized_event", detail=detail))
        return None

    def _sse_start(self, data: bytes) -> bool:
        """Whether a body not marked as SSE starts like an SSE stream (or, for a streamed
        request, not like JSON); if so the SSE parser takes it from here."""
        head = data.lstrip()[:6]
        if not head:
            return False
        if not head.startswith(_SSE_HEADS) and (head[:1] in b"{[" or not self.info.stream):
            return False
        self.mode = "sse"
        self._streamed = True
        self.op.first_chunk()  # a stream after all: timed as one (once per operation)
        return True

    def broken(self, exc: Exception) -> None:
        """Tapping failed (a tooltap bug): report it once and stop tapping this body."""
        self._off = True
        self.items = None
        self.hot = self.feed
        report(exc, "tap_stream")

    def finish(self, end: End, exc: BaseException | None = None) -> None:
        """Settle the operation for this body; runs once, whatever calls it."""
        if self.stage is Body.SETTLED or after_collection(self.finish, end, exc):
            return
        if end == "exhausted" and self._decoded:  # the client's decoder may hand on a tail
            self._report(BodyEvent.EXHAUSTED_UNFLUSHED, end, exc)
            return
        if self.stage is Body.AWAITING_FLUSH and end in ("closed", "cancelled", "collected"):
            end = "exhausted"  # the raw body was read to its end
        event = BodyEvent.ENDED_IN_STEP if self._sdk_stepping() else BodyEvent.ENDED
        self._report(event, end, exc)


def _running(generator: object) -> bool:
    """Whether a step of ``generator`` (sync or async) runs now."""
    return bool(getattr(generator, "gi_running", False) or getattr(generator, "ag_running", False))
