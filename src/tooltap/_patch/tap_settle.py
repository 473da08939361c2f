"""How a tapped response body settles: once, recording what it told its operation.

The tap settles its operation exactly once, on the first of: the body exhausted, closed
(``close``/``aclose``), broken by an exception, or its proxy garbage-collected unread
(``weakref.finalize``; the state it calls holds no reference to the proxy or the
response, so no cycle). ``settle_all`` detaches every body in flight (uninstrument); a
forked child forgets its parent's.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Literal

from .._core._json import loads
from .._core.buffering import stream_buffered
from .._core.errors import classify_error
from .._core.model import ErrorClass, Problem, RequestInfo, ToolCall
from .._core.stream import StreamParser, parse_response
from .._core.stream_items import ItemParser
from .._forks import in_child
from .._quietly import quietly
from .._telemetry.content import streamed_body
from .._telemetry.flight import Recording
from .._telemetry.operation import Operation
from .._telemetry.settlement import Body, BodyAction, BodyEvent, Event, body_step

__all__ = ["End", "Mode", "Settling", "collected", "live", "settle_all"]

Mode = Literal["sse", "body", "error"]
End = Literal["exhausted", "closed", "error", "cancelled", "collected", "detached"]


class Settling:
    """How ``tap_stream.TapState`` settles: the body's stage (``settlement.BODY_TABLE``),
    an end awaiting an SDK step, and the response recorded once (the state holds the rest)."""

    __slots__ = ("_finalizer", "_kept", "items", "stage")

    stage: Body
    items: ItemParser | None
    op: Operation
    info: RequestInfo
    mode: Mode
    status: int
    headers: Mapping[str, str]
    capture: bool
    flight: Recording | None
    size: int
    _finalizer: weakref.finalize[Any, Any] | None
    _kept: tuple[End, BaseException | None] | None
    _streamed: bool
    _off: bool
    _oversized: bool
    _buf: bytearray
    _raw: bytearray
    _cap: int
    _returned: bool
    _at: float
    _read_at: float | None
    _first_at: float
    _first_events: int
    _first_bytes: int
    unclaim: Callable[[int], list[ToolCall]]
    _stream_parser: Callable[[], StreamParser]
    stop: Callable[[], None]
    forget: Callable[[], None]
    finish: Callable[[End], None]

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

    def _settle(self, end: End, exc: BaseException | None, sdk: Exception | None = None) -> None:
        """Record the response once (the state is settled already); ``sdk``: what the SDK
        raised on the body (its calls not delivered). Then the operation hears of it."""
        live.discard(self)
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
            flight = self.flight
            parser = self._stream_parser() if self._streamed and flight is not None else None
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
        elif self._streamed:
            items = self.items
            if items is not None and exc is None and self._items_whole(items):
                self.items = None
                parsed = items.close()
            else:
                if items is not None:
                    self.unclaim(0)
                parsed = self._stream_parser().close()
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
        should, the SDK's loop returned, the body ended at an event's end (an SDK drops
        an event the body cut, which the bytes still read), and no event was over
        ``max_event_bytes``."""
        if not (items.ended and self._returned):
            return False
        raw, step = self._raw, max(1, self._cap // 2)  # an event over the cap spans a step
        if not _ends_whole(raw):
            return False
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


def _ends_whole(raw: bytearray) -> bool:
    """Whether only blank space follows the last blank line of ``raw`` (an event's end)."""
    end = 0
    for blank in (b"\n\n", b"\r\n\r\n", b"\r\r"):
        at = raw.rfind(blank)
        if at >= 0:
            end = max(end, at + len(blank))
    return not raw[end:].strip()


def _json(body: bytes) -> Any:
    try:
        return loads(body)
    except ValueError:
        return None


#: Bodies being tapped now (a state leaves when it settles).
live: weakref.WeakSet[Settling] = weakref.WeakSet()


def settle_all() -> None:
    """Stop tapping every body still being read and settle it as ``detached`` (uninstrument):
    the rest of each body goes to the app untouched, nothing more is recorded for it."""
    for state in list(live):
        state.stop()
        quietly(state.finish, "detached")


@in_child
def _forget_parent_bodies() -> None:
    """A forked child never settles the bodies its parent was reading (the parent does)."""
    for state in list(live):
        state.stop()
        state.forget()
    live.clear()


def collected(state: Settling) -> None:
    quietly(state.finish, "collected")
