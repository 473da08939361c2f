"""aiohttp traffic: google-genai's own async path, and httpx transports that send through aiohttp.

An httpx transport backed by aiohttp (as ``httpx_aiohttp`` / openai's
``DefaultAioHttpClient`` do) passes each request through both taps; only the httpx
tap records it, so attempts, calls and spans are not doubled.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import httpx2
import pytest

import tooltap
from tests.sdk.drivers import DRIVERS, USER
from tooltap._core.dialects import google
from tooltap._core.stream import StreamParser
from tooltap.simulator import Simulator

CLOCK = re.compile(rb'"created":\s*\d+')


class _AiohttpTransport(httpx2.AsyncBaseTransport):
    """A minimal httpx2 transport that sends with ``aiohttp.ClientSession``."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        response = await self._session.request(
            request.method,
            str(request.url),
            headers=dict(request.headers),
            data=await request.aread(),
        )

        async def body() -> AsyncIterator[bytes]:
            async for chunk in response.content.iter_any():
                yield chunk
            response.release()

        return httpx2.Response(
            response.status, headers=list(response.headers.items()), stream=_Body(body())
        )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


class _Body(httpx2.AsyncByteStream):
    def __init__(self, chunks: AsyncIterator[bytes]) -> None:
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._chunks:
            yield chunk


async def test_httpx_over_aiohttp_is_recorded_once(rec: Any, sim: Simulator) -> None:
    transport = _AiohttpTransport()
    driver = DRIVERS["openai.chat"]
    client = driver.client(sim, sync=False, http_client=httpx2.AsyncClient(transport=transport))
    try:
        for stream in (False, True):
            turn = await driver.turn1(client, stream)
            assert rec.calls()[-2:] == turn.calls
    finally:
        await transport.aclose()

    spans = rec.inference()
    assert len(spans) == 2
    assert all("http.request.resend_count" not in s.attributes for s in spans)
    assert len(rec.calls()) == 4
    assert rec.total("tooltap.retries") == 0


async def test_google_async_uses_aiohttp_and_is_tapped(rec: Any, sim: Simulator) -> None:
    models = DRIVERS["google"].client(sim, sync=False)
    sessions = models.client._api_client._aiohttp_sessions  # filled only on the aiohttp path
    turn = await DRIVERS["google"].turn1(models, True)

    assert sessions  # google-genai did send through aiohttp
    assert rec.calls() == turn.calls
    (span,) = rec.inference()
    assert span.attributes["gen_ai.request.stream"] is True
    assert rec.total("gen_ai.client.operation.time_to_first_chunk") == 1


async def _read_with(reader: Any, how: str) -> bytes:
    """The whole body through one of the ``StreamReader`` APIs."""
    if how == "read":
        return bytes(await reader.read())
    if how in ("readany", "readline"):
        parts = []
        while part := await getattr(reader, how)():
            parts.append(part)
        return b"".join(parts)
    if how == "readuntil":
        parts = []
        while not reader.at_eof():
            parts.append(await reader.readuntil(b"\n\n"))
        return b"".join(parts)
    if how == "readexactly":
        parts = []
        while True:
            try:
                parts.append(await reader.readexactly(10))
            except asyncio.IncompleteReadError as exc:
                return b"".join(parts) + exc.partial
    if how == "readchunk":
        parts = []
        while (chunk := await reader.readchunk()) != (b"", False):
            parts.append(chunk[0])
        return b"".join(parts)
    iterators = {
        "lines": lambda: reader,
        "iter_any": reader.iter_any,
        "iter_chunked": lambda: reader.iter_chunked(7),
        "iter_chunks": reader.iter_chunks,
    }
    items = [item async for item in iterators[how]()]
    return b"".join(i if isinstance(i, bytes) else i[0] for i in items)


READERS = [
    "read", "readany", "readline", "readuntil", "readexactly", "readchunk",
    "lines", "iter_any", "iter_chunked", "iter_chunks",
]  # fmt: skip


@pytest.mark.parametrize("how", READERS)
async def test_every_reader_sees_the_same_bytes(rec: Any, how: str) -> None:
    request = DRIVERS["openai.chat"]._request([{"role": "user", "content": USER}])

    async def run(sim: Simulator) -> bytes:
        async with (
            aiohttp.ClientSession() as session,
            session.post(
                f"{sim.openai_base_url}/chat/completions", json={**request, "stream": True}
            ) as response,
        ):
            return CLOCK.sub(b"", await _read_with(response.content, how))

    tooltap.uninstrument()
    try:
        with Simulator(seed=0) as sim:
            plain = await run(sim)
    finally:
        rec.instrument()
    with Simulator(seed=0) as sim:
        tapped = await run(sim)

    assert tapped == plain and plain.endswith(b"data: [DONE]\n\n")
    (span,) = rec.inference()  # a transport-owned operation: no SDK above it
    assert span.attributes["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert "tooltap.stream.closed_early" not in span.attributes
    assert [name for _, name, _ in rec.calls()] == ["lookup_demo_value"] * 2


async def test_internal_failure_in_the_reader_never_reaches_the_app(
    rec: Any, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: Any, chunk: bytes) -> None:
        raise RuntimeError("tooltap bug")

    monkeypatch.setattr(StreamParser, "feed", broken)  # inside TapState.feed, per chunk
    monkeypatch.setattr(google.Reducer, "take", broken)  # inside the SDK's loop, per item
    turn = await DRIVERS["google"].turn1(DRIVERS["google"].client(sim, sync=False), True)

    assert [args["key"] for _, _, args in turn.calls] == ["height", "weight"]
    # Reported once; the tap then stops parsing that body, which still reaches the app.
    assert rec.total("tooltap.internal_errors", tooltap__component="tap_stream") == 1
    (span,) = rec.inference()
    assert span.end_time is not None
