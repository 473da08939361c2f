"""aiohttp traffic: google-genai's own async path, and httpx transports that send through aiohttp.

An httpx transport backed by aiohttp (as ``httpx_aiohttp`` / openai's
``DefaultAioHttpClient`` do) passes each request through both taps; only the httpx
tap records it, so attempts, calls and spans are not doubled.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import httpx2
from sdk_drivers import DRIVERS

from tooltap.simulator import Simulator


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


async def test_httpx_over_aiohttp_is_recorded_once(otel: Any, sim: Simulator) -> None:
    transport = _AiohttpTransport()
    driver = DRIVERS["openai.chat"]
    client = driver.client(sim, sync=False, http_client=httpx2.AsyncClient(transport=transport))
    try:
        for stream in (False, True):
            turn = await driver.turn1(client, stream)
            assert otel.received()[-2:] == turn.calls
    finally:
        await transport.aclose()

    spans = otel.inference_spans()
    assert len(spans) == 2
    assert all("http.request.resend_count" not in s.attributes for s in spans)
    assert len(otel.received()) == 4
    assert otel.total("tooltap.retries") == 0


async def test_google_async_uses_aiohttp_and_is_tapped(otel: Any, sim: Simulator) -> None:
    models = DRIVERS["google"].client(sim, sync=False)
    sessions = models.client._api_client._aiohttp_sessions  # filled only on the aiohttp path
    turn = await DRIVERS["google"].turn1(models, True)

    assert sessions  # google-genai did send through aiohttp
    assert otel.received() == turn.calls
    (span,) = otel.inference_spans()
    assert span.attributes["gen_ai.request.stream"] is True
    assert otel.total("gen_ai.client.operation.time_to_first_chunk") == 1
