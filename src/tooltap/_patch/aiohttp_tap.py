"""The transport tap for aiohttp, which google-genai's async client uses when it is installed.

google-genai sends async requests through ``aiohttp.ClientSession`` (never httpx)
when aiohttp is importable and no httpx client or transport was configured
(``BaseApiClient._use_aiohttp``). This tap gives that traffic what the httpx tap
gives httpx: ``ClientSession._request`` is wrapped (a fast pass-through unless the
path is an LLM dialect's) and each LLM exchange is recorded through the httpx
tap's shared machinery (``exchange.begin`` / ``Exchange`` for the attempt, ``TapState`` for
the body), on the current SDK operation or a transport-owned one.

The body is tapped where it is read: ``response.content`` (the ``StreamReader``)
is replaced by a proxy whose read methods return the reader's bytes unchanged and
feed them to ``TapState``: the bytes the SDK gets, decoded there by aiohttp when it
decodes ``Content-Encoding``, as they are when it does not. The state settles once: at end
of body, when a read fails, when the response is closed or released before its
end (aiohttp then calls ``content.set_exception``, which the proxy sees), or when
the proxy is garbage-collected.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import wrapt
from opentelemetry.instrumentation.utils import is_instrumentation_enabled

from .._core.detect import detect_dialect, plausible_request
from .._core.stream import framing_of
from .._quietly import quietly
from .._telemetry.operation import current_operation
from .._telemetry.settlement import Event
from .._telemetry.telemetry import Telemetry, get_telemetry
from .exchange import Exchange, arg, begin, in_send
from .patchset import Patch, PatchSet
from .tap_stream import Mode, TapState

if TYPE_CHECKING:  # aiohttp and yarl are imported by the app, never by tooltap's import
    import aiohttp
    from aiohttp.streams import AsyncStreamIterator, ChunkTupleAsyncStreamIterator
    from yarl import URL

__all__ = ["PATCHES"]


class _Request(NamedTuple):
    """The request as ``exchange.begin`` reads it (``url``, ``content``, ``headers``)."""

    url: URL
    content: bytes
    headers: Mapping[str, str]


def _body(kwargs: Mapping[str, Any]) -> bytes:
    data = kwargs.get("data")
    if isinstance(data, (bytes, bytearray)):
        return bytes(data)
    if isinstance(data, str):
        return data.encode("utf-8")
    if kwargs.get("json") is not None:
        return json.dumps(kwargs["json"]).encode("utf-8")
    return b""


def _start(
    session: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Exchange, bool] | None:
    tel: Telemetry | None = get_telemetry()
    if tel is None or in_send.get():  # an httpx transport over aiohttp: httpx's tap records it
        return None
    method = str(arg(args, kwargs, 0, "method")).upper()
    if method != "POST" or not is_instrumentation_enabled():
        return None
    from yarl import URL  # aiohttp's own dependency, loaded: we are inside its request

    url = URL(arg(args, kwargs, 1, "str_or_url"))
    base = getattr(session, "_base_url", None)
    if not url.absolute and base is not None:
        url = base.join(url)
    dialect = detect_dialect(method, url.path)
    if dialect is None or not tel.config.observes(url.host, url.path):
        return None
    body = _body(kwargs)
    op = current_operation.get()
    if (op is None or op.ended) and not plausible_request(dialect, body, url.path):
        return None  # not an SDK's call, and not a body of that API
    headers = {str(k).lower(): str(v) for k, v in dict(kwargs.get("headers") or {}).items()}
    decompress = kwargs.get("auto_decompress")
    if decompress is None:
        decompress = getattr(session, "auto_decompress", True)
    return begin(tel, _Request(url, body, headers), dialect), bool(decompress)


def _responded(exchange: Exchange, response: aiohttp.ClientResponse, decoded: bool) -> None:
    """Tap the unread body; the response object itself is left as aiohttp made it."""
    exchange.detach()
    op = exchange.op
    status = int(response.status)
    headers: dict[str, str] = {k.lower(): v for k, v in response.headers.items()}
    if decoded:
        headers.pop("content-encoding", None)  # aiohttp hands on decoded bytes
    mode: Mode
    framing = framing_of(headers.get("content-type", ""))
    if not 200 <= status < 300:
        mode = "error"
    elif framing is not None:
        mode = "sse"
    else:
        mode = "body"
    state = TapState(
        op, exchange.info, mode=mode, status=status, headers=headers, framing=framing or "sse"
    )
    if op.tel.flight is not None:
        state.flight = quietly(op.tel.flight.begin, op, response.url.path, status, headers)
    if mode != "error":
        op.report(Event.BODY_UNREAD)
    response.content = cast("aiohttp.StreamReader", _TapReader(response.content, state))


async def _request(
    wrapped: Callable[..., Awaitable[Any]],
    instance: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    started = quietly(_start, instance, args, kwargs)
    if started is None:
        return await wrapped(*args, **kwargs)
    exchange, decoded = started
    try:
        response = await wrapped(*args, **kwargs)
    except BaseException as exc:
        quietly(exchange.failed, exc)
        raise
    quietly(_responded, exchange, response, decoded)
    return response


class _TapReader(wrapt.BaseObjectProxy["aiohttp.StreamReader"]):
    """``response.content`` as the SDK reads it: the same bytes, fed to the tap on the way."""

    def __init__(self, reader: aiohttp.StreamReader, state: TapState) -> None:
        super().__init__(reader)
        self._self_state = state
        state.watch(self)

    def _self_seen(self, data: bytes) -> None:
        state = self._self_state
        if data:
            try:
                calls = state.hot(data)
                if calls:
                    state.op.calls_received(calls)
            except Exception as exc:  # noqa: BLE001 - never into the app
                state.broken(exc)
        if self.__wrapped__.at_eof():
            quietly(state.finish, "exhausted")

    async def _self_pull(self, method: str, *args: Any, **kwargs: Any) -> Any:
        try:
            result = await getattr(self.__wrapped__, method)(*args, **kwargs)
        except asyncio.CancelledError:  # the app's task stopped reading: like a close
            quietly(self._self_state.finish, "closed")
            raise
        except BaseException as exc:
            quietly(self._self_state.finish, "error", exc)
            raise
        self._self_seen(result if isinstance(result, bytes) else result[0])
        return result

    # Each reader takes the reader's own arguments, passed on untouched.
    async def read(self, *args: Any, **kwargs: Any) -> bytes:
        data: bytes = await self._self_pull("read", *args, **kwargs)
        return data

    async def readany(self) -> bytes:
        data: bytes = await self._self_pull("readany")
        return data

    async def readline(self, *args: Any, **kwargs: Any) -> bytes:
        data: bytes = await self._self_pull("readline", *args, **kwargs)
        return data

    async def readuntil(self, *args: Any, **kwargs: Any) -> bytes:
        data: bytes = await self._self_pull("readuntil", *args, **kwargs)
        return data

    async def readexactly(self, *args: Any, **kwargs: Any) -> bytes:
        data: bytes = await self._self_pull("readexactly", *args, **kwargs)
        return data

    async def readchunk(self) -> tuple[bytes, bool]:
        chunk: tuple[bytes, bool] = await self._self_pull("readchunk")
        return chunk

    def read_nowait(self, *args: Any, **kwargs: Any) -> bytes:
        data: bytes = self.__wrapped__.read_nowait(*args, **kwargs)
        self._self_seen(data)
        return data

    # The iterators call back into this proxy's readers, as aiohttp's call the reader's.
    def __aiter__(self) -> AsyncStreamIterator[bytes]:
        return _iterator(self.readline)

    def iter_chunked(self, n: int) -> AsyncStreamIterator[bytes]:
        return _iterator(lambda: self.read(n))

    def iter_any(self) -> AsyncStreamIterator[bytes]:
        return _iterator(self.readany)

    def iter_chunks(self) -> ChunkTupleAsyncStreamIterator:
        from aiohttp.streams import ChunkTupleAsyncStreamIterator

        return ChunkTupleAsyncStreamIterator(cast("aiohttp.StreamReader", self))

    def set_exception(self, *args: Any, **kwargs: Any) -> None:
        """aiohttp closing or releasing the response before its end."""
        try:
            self.__wrapped__.set_exception(*args, **kwargs)
        finally:
            quietly(self._self_state.finish, "closed")


def _iterator(read: Callable[[], Awaitable[bytes]]) -> AsyncStreamIterator[bytes]:
    from aiohttp.streams import AsyncStreamIterator

    return AsyncStreamIterator(read)


PATCHES = PatchSet((Patch("aiohttp.client", "ClientSession._request", _request),))
