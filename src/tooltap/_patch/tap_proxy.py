"""Response-body taps: proxies for httpx/httpx2 ``response.stream`` that see every chunk.

Each chunk goes to the app unchanged, right after one cheap ``hot`` of the body's
``TapState`` (the chunk is never copied, buffered or delayed beyond that); the state
settles the operation once, however the body ends.

The loops are a generator and an async generator: misuse from two threads or tasks
(a second reader, a close while a read is running) gets the interpreter's own
"already executing" / "already running" error, as the bare body's generator gives it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

import wrapt

from .._quietly import quietly
from .tap_stream import TapState

__all__ = ["TapAsyncStream", "TapSyncStream", "tap_sync"]


class _Observed(wrapt.ObjectProxy[Any]):
    """anthropic's ``Stream`` reads ``response.stream.stream_observer`` (default None) for
    every event. Forwarded by the proxy, a missing attribute costs two formatted
    AttributeErrors, and a property a Python call: the proxies keep it as a plain
    attribute, read in C. wrapt sets an attribute its type has on the proxy itself; setting
    it also sets the wrapped stream's, as forwarding would."""

    stream_observer: Any = None

    def __init__(self, wrapped: Any) -> None:
        super().__init__(wrapped)
        observer = getattr(wrapped, "stream_observer", None)
        if observer is not None:
            self.stream_observer = observer

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "stream_observer":
            setattr(self.__wrapped__, name, value)
        super().__setattr__(name, value)


class TapSyncStream(_Observed):
    """Proxy for a sync ``response.stream`` (httpx or httpx2 ``SyncByteStream``)."""

    def __init__(self, wrapped: Any, state: TapState) -> None:
        super().__init__(wrapped)
        self._self_state = state
        state.watch(self)

    def __iter__(self) -> Iterator[bytes]:
        state = self._self_state
        loop = tap_sync(self.__wrapped__, state)
        state.looped(loop)
        return loop

    def close(self) -> None:
        try:
            self.__wrapped__.close()
        finally:
            quietly(self._self_state.finish, "closed")


def tap_sync(chunks: Iterable[bytes], state: TapState) -> Iterator[bytes]:
    """Every chunk of ``chunks`` to the app, after tooltap's step; settles ``state`` once
    however it ends. Every sync body tap reads through it (httpx's, botocore's)."""
    state.reading()
    try:
        for chunk in chunks:
            try:
                calls = state.hot(chunk)
                if calls:
                    state.op.calls_received(calls)
            except Exception as exc:  # noqa: BLE001 - never into the app
                state.broken(exc)
            yield chunk
    except GeneratorExit:
        quietly(state.finish, "closed")
        raise
    except BaseException as exc:
        quietly(state.finish, "error" if isinstance(exc, Exception) else "cancelled", exc)
        raise
    quietly(state.finish, "exhausted")


class TapAsyncStream(_Observed):
    """Proxy for an async ``response.stream`` (httpx or httpx2 ``AsyncByteStream``)."""

    def __init__(self, wrapped: Any, state: TapState) -> None:
        super().__init__(wrapped)
        self._self_state = state
        state.watch(self)

    def __aiter__(self) -> AsyncIterator[bytes]:
        state = self._self_state
        loop = self._loop(state)
        state.looped(loop)
        return loop

    async def _loop(self, state: TapState) -> AsyncIterator[bytes]:
        """Every chunk to the app, after tooltap's step; settles once however it ends."""
        inner = self.__wrapped__.__aiter__()
        state.reading()
        try:
            async for chunk in inner:
                try:
                    calls = state.hot(chunk)
                    if calls:
                        state.op.calls_received(calls)
                except Exception as exc:  # noqa: BLE001 - never into the app
                    state.broken(exc)
                yield chunk
        except GeneratorExit:
            quietly(state.finish, "closed")
            raise
        except BaseException as exc:  # not an Exception: the app's task was cancelled
            quietly(state.finish, "error" if isinstance(exc, Exception) else "cancelled", exc)
            raise
        finally:
            aclose = getattr(inner, "aclose", None)
            if aclose is not None:
                await aclose()
        quietly(state.finish, "exhausted")

    async def aclose(self) -> None:
        try:
            await self.__wrapped__.aclose()
        finally:
            quietly(self._self_state.finish, "closed")
