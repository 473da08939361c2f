"""``gen_ai.client.operation.time_to_first_chunk`` times streamed responses only, however
the client reads a whole body: inside ``send`` (openai), after ``send`` returned it unread
(anthropic >= 2.17 sends every request with ``stream=True``), or through an app's own
``client.stream()``."""

from __future__ import annotations

import json

import httpx2
import pytest

from tests.recorder import Recorder
from tests.sdk.drivers import DRIVERS
from tooltap._telemetry import semconv as sc
from tooltap.simulator import Simulator


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("name", ["openai.chat", "openai.responses", "anthropic", "google"])
async def test_the_first_chunk_of_a_stream_is_timed_and_no_whole_body(
    rec: Recorder, sim: Simulator, name: str, stream: bool
) -> None:
    driver = DRIVERS[name]
    client = driver.client(sim, sync=True, **({} if name == "google" else {"max_retries": 0}))
    await driver.raw(client, stream)
    assert rec.total(sc.OPERATION_DURATION) == 1
    assert rec.total(sc.TIME_TO_FIRST_CHUNK) == (1 if stream else 0)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_a_body_the_app_reads_in_chunks_is_timed_if_it_streams(
    rec: Recorder, sim: Simulator, stream: bool
) -> None:
    body = {"model": "gpt-x", "messages": [{"role": "user", "content": "hi"}], "stream": stream}
    with (
        httpx2.Client(base_url=sim.openai_base_url) as client,
        client.stream("POST", "/chat/completions", json=body) as response,
    ):
        assert b"".join(response.iter_bytes())
    assert rec.total(sc.OPERATION_DURATION) == 1
    assert rec.total(sc.TIME_TO_FIRST_CHUNK) == (1 if stream else 0)


def test_a_body_taken_for_a_stream_by_its_start_is_timed(rec: Recorder) -> None:
    """A response to a request that asked for no stream, not marked as SSE, but that starts
    like one (a proxy dropping the content type): parsed as a stream, so timed as one."""
    chunk = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "gpt-x",
        "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}],
    }
    sse = b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n"

    def handler(request: httpx2.Request) -> httpx2.Response:
        headers = {"content-type": "application/octet-stream"}
        return httpx2.Response(200, headers=headers, content=iter([sse]))  # sent as it comes

    body = {"model": "gpt-x", "messages": [{"role": "user", "content": "hi"}]}
    with (
        httpx2.Client(transport=httpx2.MockTransport(handler), base_url="http://llm") as client,
        client.stream("POST", "/v1/chat/completions", json=body) as response,
    ):
        assert b"".join(response.iter_bytes()) == sse
    assert rec.total(sc.OPERATION_DURATION) == 1
    assert rec.total(sc.TIME_TO_FIRST_CHUNK) == 1
