"""SDK stream loops: the SDK's own loop over a streamed body, registered with its tap.

:func:`reader_wrappers` wrap the SDK methods that return the generator reading a
streamed body: when that loop raises, the body settles with the SDK's failure and the
response's calls are not delivered (the body's ``awaiting step`` state).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Generator
from typing import Any

from .._quietly import quietly
from .sdk_call import Wrapper
from .tap_stream import TapState

__all__ = ["reader_wrappers", "tapped"]


def tapped(obj: object) -> TapState | None:
    """The tap of a body proxy (``response.stream``, aiohttp's ``response.content``)."""
    state = getattr(obj, "_self_state", None)
    return state if isinstance(state, TapState) else None


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
        outer = _reading(state, reader)
        state.read_by(outer)
        return outer

    def async_wrapper(
        wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        reader = wrapped(*args, **kwargs)
        state = quietly(_reader_state, body_of, instance, reader, "ag_running")
        if state is None:
            return reader
        outer = _areading(state, reader)
        state.read_by(outer)
        return outer

    return sync_wrapper, async_wrapper


def _reader_state(
    body_of: Callable[[Any], object], instance: Any, reader: object, flag: str
) -> TapState | None:
    if not hasattr(reader, flag):  # not the generator it should be: left alone
        return None
    return tapped(body_of(instance))
