"""SDK stream loops: the SDK's own loop over a streamed body, registered with its tap.

:func:`reader_wrappers` wrap the SDK methods that return the generator reading a
streamed body: when that loop raises, the body settles with the SDK's failure and the
response's calls are not delivered (the body's ``awaiting step`` state).

When the body's dialect has an item reader (``TapState.claim``), each item the loop
yields is folded before the app gets it (the same object), and the tap parses no byte
of that body. An item the reader does not expect (an SDK version whose objects differ)
is reported (``tooltap.internal_errors``), logs one WARNING per dialect, and the body's
bytes are parsed from then on; an item the reader ``Declined`` (valid, but only the
bytes tell all) hands the body to its bytes silently. Before each item, once the bytes
kept pass a threshold and more came since the item before, those of the events already
told are let go (``TapState.trim``).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable, Generator
from typing import Any

from .._core.model import ToolCall
from .._core.stream_items import Declined, ItemParser
from .._quietly import quietly, report
from .sdk_call import Wrapper
from .tap_stream import UNTRIMMED, TapState

__all__ = ["reader_wrappers", "tapped"]

_log = logging.getLogger("tooltap")
#: Dialects whose SDK items were not what their reader expects (warned once).
_warned: set[str] = set()


def tapped(obj: object) -> TapState | None:
    """The tap of a body proxy (``response.stream``, aiohttp's ``response.content``)."""
    state = getattr(obj, "_self_state", None)
    return state if isinstance(state, TapState) else None


def _took(state: TapState, emitted: int, calls: list[ToolCall]) -> int:
    """Hand the calls an item completed to the operation (after parsing the bytes instead,
    if those kept outgrew the cap); the count of calls handed on so far."""
    try:
        if state.oversized_raw():
            calls = calls + state.unclaim(emitted + len(calls))
        if calls:
            state.op.calls_received(calls)
    except Exception as exc:  # noqa: BLE001 - never into the app
        state.broken(exc)
        return emitted
    state.emitted = emitted + len(calls)
    return state.emitted


def _trim(state: TapState, last: int, emitted: int) -> int:
    """``TapState.trim``, never into the app (a failure stops tapping the body)."""
    try:
        return state.trim(last, emitted)
    except Exception as exc:  # noqa: BLE001 - never into the app
        state.broken(exc)
        return UNTRIMMED


def _fallen(state: TapState, emitted: int, exc: Exception) -> int:
    """The reader raised on an item: the bytes decide from here on (``Declined``: quietly;
    anything else is reported, with one WARNING per dialect)."""
    if not isinstance(exc, Declined):
        report(exc, "sdk_stream")
        _unexpected(state.info.dialect, exc)
    try:
        return _took(state, emitted, state.unclaim(emitted))
    except Exception as failure:  # noqa: BLE001 - never into the app
        state.broken(failure)
        return emitted


def _unexpected(dialect: str, exc: Exception) -> None:
    """One WARNING per dialect: its SDK's items are not what the reader expects."""
    if dialect not in _warned:
        _warned.add(dialect)
        _log.warning(
            "tooltap: %s stream items are not what tooltap reads (%r): parsing the bytes instead",
            dialect,
            exc,
        )


def _taking(
    state: TapState, items: ItemParser, reader: Generator[Any, Any, Any]
) -> Generator[Any, Any, Any]:
    emitted, take, last = 0, items.item, 0
    kept, cap, limit = state.kept()
    try:
        for item in reader:
            if state.items is items:  # (inline: this runs for every event)
                size = len(kept)
                if size > limit:
                    limit = _trim(state, last, emitted)
                    size = len(kept)
                last = size
                try:
                    calls = take(item)
                except Exception as exc:  # noqa: BLE001 - the bytes take over
                    emitted = _fallen(state, emitted, exc)
                else:
                    if calls or size > cap:
                        emitted = _took(state, emitted, calls)
            try:
                yield item
            except GeneratorExit:  # closed: close the SDK's loop, as ``yield from`` would
                reader.close()
                raise
    except BaseException as exc:
        quietly(state.read_done, exc)
        raise
    quietly(state.read_done, None)


async def _ataking(
    state: TapState, items: ItemParser, reader: AsyncGenerator[Any]
) -> AsyncGenerator[Any]:
    emitted, take, last = 0, items.item, 0
    kept, cap, limit = state.kept()
    try:
        async for item in reader:
            if state.items is items:
                size = len(kept)
                if size > limit:
                    limit = _trim(state, last, emitted)
                    size = len(kept)
                last = size
                try:
                    calls = take(item)
                except Exception as exc:  # noqa: BLE001 - the bytes take over
                    emitted = _fallen(state, emitted, exc)
                else:
                    if calls or size > cap:
                        emitted = _took(state, emitted, calls)
            yield item
    except BaseException as exc:
        if isinstance(exc, GeneratorExit):  # closed: close the SDK's loop, as it would be
            await reader.aclose()
        quietly(state.read_done, exc)
        raise
    quietly(state.read_done, None)


def _reading(state: TapState, reader: Generator[Any, Any, Any]) -> Generator[Any, Any, Any]:
    try:
        result = yield from reader
    except BaseException as exc:
        quietly(state.read_done, exc)
        raise
    quietly(state.read_done, None)
    return result


async def _areading(state: TapState, reader: AsyncGenerator[Any]) -> AsyncGenerator[Any]:
    try:
        async for item in reader:
            yield item
    except BaseException as exc:
        if isinstance(exc, GeneratorExit):  # closed: close the SDK's loop, as it would be
            await reader.aclose()
        quietly(state.read_done, exc)
        raise
    quietly(state.read_done, None)


def reader_wrappers(body_of: Callable[[Any], object]) -> tuple[Wrapper, Wrapper]:
    """Wrappers for SDK methods that return the generator (sync) or async generator that
    reads a streamed body: ``body_of(instance)`` is the tapped body proxy, if any.

    The generator is handed back wrapped (``yield from``: no step is delayed) and
    registered with the tap (``TapState.read_by``), so that a body ending inside one
    of its steps settles with what that step raised."""

    def sync_wrapper(
        wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        reader = wrapped(*args, **kwargs)
        state = quietly(_reader_state, body_of, instance, reader, "gi_running")
        if state is None:
            return reader
        items = quietly(state.claim)
        outer = _reading(state, reader) if items is None else _taking(state, items, reader)
        state.read_by(outer)
        return outer

    def async_wrapper(
        wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        reader = wrapped(*args, **kwargs)
        state = quietly(_reader_state, body_of, instance, reader, "ag_running")
        if state is None:
            return reader
        items = quietly(state.claim)
        outer = _areading(state, reader) if items is None else _ataking(state, items, reader)
        state.read_by(outer)
        return outer

    return sync_wrapper, async_wrapper


def _reader_state(
    body_of: Callable[[Any], object], instance: Any, reader: object, flag: str
) -> TapState | None:
    if not hasattr(reader, flag):  # not the generator it should be: left alone
        return None
    return tapped(body_of(instance))
