"""``gen_ai.client.operation.time_to_first_chunk`` times streamed responses only, however
the client reads a whole body: inside ``send`` (openai), after ``send`` returned it unread
(anthropic >= 2.17 sends every request with ``stream=True``), or through an app's own
``client.stream()``."""

from __future__ import annotations

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
