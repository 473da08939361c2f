"""The state of one tapped response body: it parses what the app reads and settles once.

The tap settles its operation exactly once, on the first of: the body exhausted, closed
(``close``/``aclose``), broken by an exception, or its proxy garbage-collected unread
(``weakref.finalize``; the state it calls holds no reference to the proxy or the
response, so no cycle). ``settle_all`` detaches every body in flight (uninstrument); a
forked child forgets its parent's.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import AsyncGenerator, Callable, Generator, Mapping
from typing import Any, Final, Literal

from .._core._json import loads
from .._core.buffering import stream_buffered
from .._core.errors import classify_error
from .._core.model import ErrorClass, Problem, RequestInfo, ToolCall
from .._core.stream import Framing, StreamParser, parse_response
from .._core.stream_items import ItemParser, item_parser
from .._forks import in_child
from .._quietly import after_collection, quietly, report
from .._telemetry.content import streamed_body
from .._telemetry.flight import Recording
from .._telemetry.operation import Operation
from .._telemetry.settlement import Body, BodyAction, BodyEvent, Event, body_step
from .tap_decoder import TapDecoder

__all__ = ["End", "Mode", "TapState", "settle_all"]

Mode = Literal["sse", "body", "error"]
End = Literal["exhausted", "closed", "error", "cancelled", "collected", "detached"]
_ERROR_BODY_CAP: Final = 64 * 1024


#: How an SSE body starts (after any blank lines): a field, or a comment.
_SSE_HEADS: Final = (b"data:", b"event:", b"id:", b"retry:", b":")


def _none(chunk: bytes) -> None:
    """``hot`` while the client's decoder, not the raw stream, hands the tap its bytes."""


class TapState:
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
    a cut, the app stopping early): the bytes decide every case but the plain one.

    For ``stream_buffered`` it keeps three clock readings (headers, the first read
    started, the first chunk), the first chunk's events and bytes, and per chunk only
    the byte count (``size``, added by the proxies).
    """

    __slots__ = (
        "__weakref__",
        "_at",
        "_buf",
        "_cap",
        "_decoded",
        "_finalizer",
        "_first",
        "_first_at",
        "_first_bytes",
        "_first_events",
        "_framing",
        "_kept",
        "_loop",
        "_off",
        "_oversized",
        "_parser",
        "_raw",
        "_read_at",
        "_reader",
        "_returned",
        "_thread",
        "capture",
        "flight",
        "headers",
        "hot",
        "info",
        "items",
        "mode",
        "op",
        "size",
        "stage",
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
        self._parser = (
            StreamParser(info.dialect, limits=limits, framing=framing) if mode == "sse" else None
        )
        self._buf = bytearray()
        self.items: ItemParser | None = None
        self._raw = bytearray()
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
        self.flight: Recording | None = None  # the flight recorder's, set by the tap
        op.body = self

    def claim(self) -> ItemParser | None:
        """An SDK's loop is about to read this SSE body: a parser of its items, when its
        dialect has one and no chunk came yet (else None: the bytes are parsed)."""
        if (
            self._parser is None
            or self._framing != "sse"
            or not self._first
            or self._off
            or self.capture
            or self.flight is not None
        ):
            return None
        self.items = item_parser(self.info.dialect, self.op.tel.config.limits)
        return self.items

    def unclaim(self, emitted: int) -> list[ToolCall]:
        """Parse the bytes after all, from here on: the calls of those kept so far, but
        the first ``emitted`` (handed on already from the items)."""
        self.items = None
        raw, self._raw = self._raw, bytearray()
        if self._parser is None:
            return []
        if not self._first and not self._decoded and self.hot is not self.feed:
            self.hot = self._parser.feed
        return self._parser.feed(bytes(raw))[emitted:] if raw else []

    def oversized_raw(self) -> bool:
        """Whether the bytes kept for an SDK's items outgrew ``max_event_bytes``."""
        return len(self._raw) > self._cap

    def kept(self) -> tuple[bytearray, int]:
        """The bytes kept for an SDK's items (while claimed), and how many it may keep."""
        return self._raw, self._cap

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
        finalizer = weakref.finalize(proxy, _collected, self)
        finalizer.atexit = False
        self._finalizer = finalizer
        _live.add(self)

    def reading(self) -> None:
        """The app started reading the body (a time for ``stream_buffered``), in this thread."""
        if self._read_at is None:
            self._read_at = time.monotonic()
        self._thread = threading.current_thread()

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
        if isinstance(exc, Exception):
            self._report(BodyEvent.STEP_RAISED, None, exc)
        else:
            self._report(BodyEvent.STEP_RETURNED, None, None)

    def _report(self, event: BodyEvent, end: End | None, exc: BaseException | None) -> None:
        """Step the body's state (``settlement.BODY_TABLE``) and carry out its actions."""
        self.stage, actions = body_step(self.stage, event)
        for action in actions:
            if action is BodyAction.SETTLE and end is not None:
                self._settle(end, exc)
            elif action is BodyAction.DEFER and end is not None:
                self._kept = (end, exc)
            elif action is BodyAction.SETTLE_DEFERRED and self._kept is not None:
                self._settle(*self._kept)
            elif action is BodyAction.SDK_FAILED and isinstance(exc, Exception):
                kept, cause = self._kept or ("closed", None)
                if kept != "error":
                    cause = None  # the SDK's own failure, not the transport's
                self._settle(kept, cause, exc)
            elif (
                action is BodyAction.NOT_DELIVERED
                and isinstance(exc, Exception)
                and not self.op.ended
            ):
                self.op.not_delivered(exc)

    def feed(self, chunk: bytes) -> list[ToolCall] | None:
        """One raw chunk, as the transport delivered it; the calls it completed."""
        if self._off:
            return None
        if self._first:
            self._first = False
            self._first_at = time.monotonic()
            self.op.first_chunk()
            if self._decoded:
                self.hot = _none
                return None
            if self._parser is not None:
                if self._framing == "sse":  # (binary framing: no event count to judge by)
                    self._first_events = chunk.count(b"\n\n") + chunk.count(b"\r\n\r\n")
                self._first_bytes = len(chunk)
                if not self.capture and self.flight is None:
                    self.hot = self._raw.extend if self.items is not None else self._parser.feed
        if self._decoded:
            return None
        if self.flight is not None:
            self.flight.chunk(chunk)
        return self._take(chunk)

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
        parser = self._parser
        if self.items is not None:
            self._raw += data
            return None
        if parser is not None:
            if self.capture and len(self._buf) + len(data) <= self._cap:
                self._buf += data  # the text, recorded at the end under content capture
            return parser.feed(data)
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
        self._parser = StreamParser(self.info.dialect, limits=self.op.tel.config.limits)
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

    def _settle(self, end: End, exc: BaseException | None, sdk: Exception | None = None) -> None:
        """Record the response once (the state is settled already); ``sdk``: what the SDK
        raised on the body (its calls not delivered). Then the operation hears of it."""
        _live.discard(self)
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if end == "cancelled":  # the app's task was cancelled: it stopped reading
            self.op.cancelled()
            end, exc = "closed", None
        error: ErrorClass | None = None
        try:
            error = self._record(end, exc, by_sdk=sdk is not None)
            if sdk is not None:
                self.op.not_delivered(sdk)
            flight, parser = self.flight, self._parser
            if flight is not None and not self._off:
                quietly(flight.settled, self.mode, end, exc, sdk, error, parser, self._read_at)
        finally:  # a recording failure (a tooltap bug) must not leave the operation open
            self.items = None
            self.op.report(Event.BODY_ENDED, None if self.mode == "error" else exc, error)

    def _record(self, end: End, exc: BaseException | None, *, by_sdk: bool) -> ErrorClass | None:
        """Record the response on the operation; the error it ends with, for error bodies."""
        op = self.op
        if self.mode == "error":
            error = classify_error(self.status, self.headers, bytes(self._buf) or None)
            op.attempt_failed(error)
            return error
        if end == "detached":
            return None  # uninstrumented mid-body: what was received stays recorded
        early = end in ("closed", "collected")
        failure = classify_error(None, {}, None, exc) if exc is not None else None
        if self._off:
            if early and not self._oversized and not by_sdk:
                op.record_closed_early()
        elif self._parser is not None:
            items = self.items
            if items is not None and exc is None and self._items_whole(items):
                self.items = None
                parsed = items.close()
            else:
                if items is not None:
                    self.unclaim(0)
                parsed = self._parser.close()
            text = streamed_body(self.info.dialect, bytes(self._buf)) if self.capture else None
            op.record_parsed(
                parsed, self.info, body=text, closed_early=early, by_sdk=by_sdk, failure=failure
            )
            failure = None  # recorded with the response
            if parsed.complete and exc is None:  # whole (an SDK may close it after the end)
                self._check_buffered()
        elif end == "exhausted":
            body = bytes(self._buf)
            decoded = _json(body) if self.capture else None
            parsed = parse_response(body, self.info.dialect, limits=self.op.tel.config.limits)
            op.record_parsed(parsed, self.info, body=decoded)
        elif early and not by_sdk:
            op.record_closed_early()
        if failure is not None:
            op.attempt_failed(failure)
        return None

    def _items_whole(self, items: ItemParser) -> bool:
        """Whether the items tell the whole stream as its bytes would: it ended as it
        should, the SDK's loop returned, and no event was over ``max_event_bytes``."""
        if not (items.ended and self._returned):
            return False
        raw, step = self._raw, max(1, self._cap // 2)  # an event over the cap spans a step
        ends = range(0, len(raw) - step + 1, step)
        return all(raw.find(b"\n\n", at, at + step) >= 0 for at in ends)

    def _check_buffered(self) -> None:
        """A whole stream that arrived as a buffering proxy releases one: a problem."""
        reading, config = self._read_at, self.op.tel.config
        if reading is None or self._first_events == 0:
            return
        wait = (self._at - self.op.attempt_started) + (self._first_at - reading)
        spread = time.monotonic() - self._first_at
        events = self._first_events
        if stream_buffered(
            wait=wait,
            spread=spread,
            events=events,
            first_bytes=self._first_bytes,
            total_bytes=self.size,
            min_wait=config.stream_buffered_wait,
            min_events=config.stream_buffered_events,
        ):
            detail = f"{events} events at once after {wait:.2f}s"
            self.op.record_problem(Problem("stream_buffered", detail=detail))


def _running(generator: object) -> bool:
    """Whether a step of ``generator`` (sync or async) runs now."""
    return bool(getattr(generator, "gi_running", False) or getattr(generator, "ag_running", False))


def _json(body: bytes) -> Any:
    try:
        return loads(body)
    except ValueError:
        return None


#: Bodies being tapped now (a state leaves when it settles).
_live: weakref.WeakSet[TapState] = weakref.WeakSet()


def settle_all() -> None:
    """Stop tapping every body still being read and settle it as ``detached`` (uninstrument):
    the rest of each body goes to the app untouched, nothing more is recorded for it."""
    for state in list(_live):
        state.stop()
        quietly(state.finish, "detached")


@in_child
def _forget_parent_bodies() -> None:
    """A forked child never settles the bodies its parent was reading (the parent does)."""
    for state in list(_live):
        state.stop()
        state.forget()
    _live.clear()


def _collected(state: TapState) -> None:
    quietly(state.finish, "collected")
