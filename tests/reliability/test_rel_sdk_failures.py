"""Bodies tooltap parses but the SDK fails on: what the app did not get is not received.

Real SDKs read hostile bodies from the replay server (``ReplayServer``):

* google-genai, sync and async, on a JSON body with a leading UTF-8 BOM (it decodes the
  text and ``json.loads`` refuses the BOM): no call is received, none gets a span, each is
  counted ``not_delivered``, and the inference span ends with the SDK's error;
* google-genai's async client (aiohttp) on an SSE body with CR-only line ends (it splits
  at LF only, so the events run together and the JSON does not parse): the call the tap
  opened on completion is ended ``not_delivered``; the span ends with the SDK's error and
  is not ``closed_early``;
* openai on an ``x-gzip`` stream (httpx2 does not decode it; the SDK fails decoding the
  gzip bytes as UTF-8): the span ends with the SDK's ``UnicodeDecodeError``, not as the app
  stopping early;
* anthropic on a leading BOM, JSON and SSE: the SDK hands the calls on (it decodes JSON
  bytes, and its SSE decoder only loses the first event's name), and tooltap receives them.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import types
from opentelemetry.trace import StatusCode

from tests.reliability.support import Canned, Recorder, ReplayServer, attrs

CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"
BOM = b"\xef\xbb\xbf"
NO_AFC = types.GenerateContentConfig(
    automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)
)


def _google(replay: ReplayServer) -> genai.Client:
    return genai.Client(api_key="k", http_options=types.HttpOptions(base_url=replay.url))


def _inference(recorder: Recorder) -> dict[str, Any]:
    (span,) = recorder.inference()
    assert span.status.status_code is StatusCode.ERROR
    return attrs(span)


def _outcomes(recorder: Recorder, metric: str, key: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for attributes, value in recorder.points(metric):
        out[attributes[key]] = out.get(attributes[key], 0) + value
    return {k: v for k, v in out.items() if v}


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
async def test_google_json_with_a_bom_delivers_no_call(
    sync: bool, replay: ReplayServer, recorder: Recorder
) -> None:
    body = BOM + (CORPUS / "google" / "json_parallel_3calls.body").read_bytes()
    replay.canned = Canned(200, [("content-type", "application/json")], [body])
    recorder.instrument()
    client = _google(replay)
    with pytest.raises(ValueError, match="BOM"):
        if sync:
            client.models.generate_content(model="gemini-2.0-flash", contents="x", config=NO_AFC)
        else:
            await client.aio.models.generate_content(
                model="gemini-2.0-flash", contents="x", config=NO_AFC
            )
    assert recorder.received() == []
    assert recorder.tools() == [] and recorder.ledger.open_spans() == []
    assert _inference(recorder)["error.type"] == "_OTHER"
    assert _outcomes(recorder, "tooltap.tool_calls", "tooltap.outcome") == {"not_delivered": 3}


async def test_google_async_stream_with_cr_line_ends_is_the_sdks_failure(
    replay: ReplayServer, recorder: Recorder
) -> None:
    lf = (CORPUS / "google" / "stream_call_thought_signature.body").read_bytes()
    body = lf.replace(b"\r\n", b"\n").replace(b"\n", b"\r")
    replay.canned = Canned(200, [("content-type", "text/event-stream")], [body])
    recorder.instrument()
    got: list[Any] = []
    with pytest.raises(genai.errors.UnknownApiResponseError):
        stream = await _google(replay).aio.models.generate_content_stream(
            model="gemini-2.0-flash", contents="x", config=NO_AFC
        )
        async for response in stream:
            got += response.function_calls or ()
    assert got == []  # the app got no call
    span = _inference(recorder)
    assert span["error.type"] == "_OTHER"
    assert "tooltap.stream.closed_early" not in span
    (tool,) = recorder.tools()  # opened when the tap completed it, before the SDK failed
    assert attrs(tool)["tooltap.result"] == "not_delivered"
    assert tool.status.status_code is StatusCode.ERROR
    assert _outcomes(recorder, "tooltap.tool_calls", "tooltap.outcome") == {"not_delivered": 1}
    assert _outcomes(recorder, "tooltap.tool_results", "tooltap.result") == {"not_delivered": 1}


def test_x_gzip_stream_ends_with_the_sdks_error(replay: ReplayServer, recorder: Recorder) -> None:
    sse = (CORPUS / "openai-chat" / "stream_parallel_2calls_gpt35.body").read_bytes()
    headers = [("content-type", "text/event-stream"), ("content-encoding", "x-gzip")]
    replay.canned = Canned(200, headers, [gzip.compress(sse)])
    recorder.instrument()
    client = openai.OpenAI(base_url=replay.url + "/v1", api_key="sk-test", max_retries=0)
    with client, pytest.raises(UnicodeDecodeError):
        stream = client.chat.completions.create(
            model="gpt-3.5-turbo", messages=[{"role": "user", "content": "w?"}], stream=True
        )
        with stream:
            for _ in stream:
                pass
    span = _inference(recorder)
    assert span["error.type"] == "_OTHER"
    assert "tooltap.stream.closed_early" not in span
    assert recorder.received() == [] and recorder.ledger.open_spans() == []


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_anthropic_hands_on_the_calls_of_a_body_with_a_bom(
    stream: bool, replay: ReplayServer, recorder: Recorder
) -> None:
    name = "stream_text_plus_2_tool_use" if stream else "json_text_plus_4_parallel_tool_use"
    body = BOM + (CORPUS / "anthropic" / f"{name}.body").read_bytes()
    kind = "text/event-stream" if stream else "application/json"
    replay.canned = Canned(
        200, [("content-type", kind)], [body[i : i + 200] for i in range(0, len(body), 200)]
    )
    recorder.instrument()
    client = anthropic.Anthropic(base_url=replay.url, api_key="k", max_retries=0)
    request: dict[str, Any] = {
        "model": "claude",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "x"}],
    }
    with client:
        if stream:
            with client.messages.create(**request, stream=True) as events:
                got = [
                    e.content_block.id
                    for e in events
                    if e.type == "content_block_start" and e.content_block.type == "tool_use"
                ]
        else:
            message = client.messages.create(**request)
            got = [b.id for b in message.content if b.type == "tool_use"]
    assert got and [c.call_id for c in recorder.received()] == got
    (span,) = recorder.inference()
    assert span.status.status_code is not StatusCode.ERROR
    assert _outcomes(recorder, "tooltap.tool_calls", "tooltap.outcome").get("not_delivered") is None
