"""Bodies as servers really send them: encoded, mislabelled, padded, bombs, oversized deltas.

A loopback server replays fixed bytes (``ReplayServer``) to the real openai client (or to
httpx2 read the way the SDKs read, ``iter_bytes``):

* gzip, deflate, br and zstd bodies (all four: httpx2 decodes them once brotli and
  backports.zstd are installed): tooltap's calls are the SDK's, and no problem is recorded;
* ``x-gzip``, which httpx2 does not decode: the app gets gzip bytes and no call, and tooltap
  reports none;
* SSE served as ``application/octet-stream``: the calls are seen;
* a gzip body inflating to blank lines, plain blank-line padding, and a gzip bomb: reading
  takes at most 2x (+ 50 ms) the time it takes bare, and the traced peak at most the bare
  peak plus the hostile-input bound of ``Limits``;
* one argument delta over ``max_event_bytes``: no call, one problem under its id.
"""

from __future__ import annotations

import gzip
import json
import time
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import brotli
import httpx2
import openai
import pytest
import zstandard

from tests.reliability.support import Canned, Recorder, ReplayServer, attrs, size
from tests.reliability.wire import STREAMED
from tooltap.core import Limits

CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus" / "openai-chat"
SSE = (CORPUS / "stream_parallel_2calls_gpt35.body").read_bytes()
SMALL = Limits(max_event_bytes=64 * 1024, max_argument_bytes=64 * 1024)
#: What tooltap may hold above the app's own peak on hostile input (test_rel_hostile's bound).
BOUND = 4 * (SMALL.max_event_bytes + SMALL.max_argument_bytes + 64 * 1024) + 256 * 1024
MIB = 1024 * 1024
BLANK_MIB = size("TOOLTAP_BLANK_MIB", 16, 64)  # decoded size of the gzip blank-line body
PADDING_MIB = size("TOOLTAP_PADDING_MIB", 4, 16)  # plain blank-line padding
BOMB_MIB = size("TOOLTAP_BOMB_MIB", 64, 256)  # decoded size of the gzip bomb


def _encode(encoding: str, body: bytes) -> bytes:
    if encoding in ("gzip", "x-gzip"):
        return gzip.compress(body)
    if encoding == "deflate":
        return zlib.compress(body)
    if encoding == "br":
        return bytes(brotli.compress(body))
    return zstandard.ZstdCompressor().compress(body)


def _sdk_calls(replay: ReplayServer) -> list[tuple[str, str, str]]:
    """One streamed request through the openai client: the calls it assembled."""
    client = openai.OpenAI(base_url=replay.url + "/v1", api_key="sk-test", max_retries=0)
    calls: dict[int, list[str]] = {}
    with client:
        stream = client.chat.completions.create(
            model="gpt-3.5-turbo", messages=[{"role": "user", "content": "w?"}], stream=True
        )
        with stream:
            for chunk in stream:
                for choice in chunk.choices:
                    for call in choice.delta.tool_calls or ():
                        entry = calls.setdefault(call.index, ["", "", ""])
                        function = call.function
                        entry[0] += call.id or ""
                        entry[1] += (function.name or "") if function else ""
                        entry[2] += (function.arguments or "") if function else ""
    return [(i, n, a) for i, n, a in calls.values()]


def _problems(recorder: Recorder) -> list[str]:
    return [
        str(e.attributes["tooltap.problem.kind"])
        for s in recorder.inference()
        for e in s.events
        if e.attributes and "tooltap.problem.kind" in e.attributes
    ]


def _tooltap_calls(recorder: Recorder) -> list[tuple[str, str, str]]:
    return [(c.call_id or "", c.name, c.raw_arguments or "") for c in recorder.received()]


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "zstd"])
def test_encoded_stream_is_seen_as_the_sdk_sees_it(
    encoding: str, replay: ReplayServer, recorder: Recorder
) -> None:
    packed = _encode(encoding, SSE)
    headers = [("content-type", "text/event-stream"), ("content-encoding", encoding)]
    replay.canned = Canned(200, headers, [packed[i : i + 97] for i in range(0, len(packed), 97)])
    recorder.instrument()
    sdk = _sdk_calls(replay)
    assert len(sdk) == 2
    assert _tooltap_calls(recorder) == sdk
    assert _problems(recorder) == []


def test_encoding_the_client_does_not_decode_reports_nothing(
    replay: ReplayServer, recorder: Recorder
) -> None:
    headers = [("content-type", "text/event-stream"), ("content-encoding", "x-gzip")]
    replay.canned = Canned(200, headers, [_encode("x-gzip", SSE)])
    recorder.instrument()
    with pytest.raises(UnicodeDecodeError):  # the app got gzip bytes: its SDK fails on them
        _sdk_calls(replay)
    assert recorder.received() == []
    assert len(recorder.inference()) == 1


@pytest.mark.parametrize("content_type", ["application/octet-stream", ""])
def test_sse_under_another_content_type_is_parsed(
    content_type: str, replay: ReplayServer, recorder: Recorder
) -> None:
    headers = [("content-type", content_type)] if content_type else []
    replay.canned = Canned(200, headers, [SSE[i : i + 500] for i in range(0, len(SSE), 500)])
    recorder.instrument()
    sdk = _sdk_calls(replay)
    assert len(sdk) == 2 and _tooltap_calls(recorder) == sdk
    (span,) = recorder.inference()
    assert attrs(span).get("tooltap.stream.closed_early") is None


def test_json_body_over_the_limit_says_why_it_was_not_parsed(
    replay: ReplayServer, recorder: Recorder
) -> None:
    message = {"role": "assistant", "content": "x" * (2 * SMALL.max_event_bytes)}
    body = json.dumps({"id": "c1", "choices": [{"index": 0, "message": message}]}).encode()
    replay.canned = Canned(200, [("content-type", "application/json")], [body])
    recorder.instrument(limits=SMALL)
    client = openai.OpenAI(base_url=replay.url + "/v1", api_key="sk-test", max_retries=0)
    with (
        client,
        client.chat.completions.with_streaming_response.create(
            model="gpt-3.5-turbo", messages=[{"role": "user", "content": "w?"}]
        ) as response,
    ):
        completion = response.parse()
    assert completion.choices[0].message.content == message["content"]
    (span,) = recorder.inference()
    assert _problems(recorder) == ["oversized_event"]
    assert attrs(span).get("tooltap.stream.closed_early") is None


# --- padding and bombs ------------------------------------------------------------------


def _padded() -> list[bytes]:
    return [b"\n" * MIB] * PADDING_MIB + [SSE]


def _blank_gzip() -> list[bytes]:
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    packed = b"".join(z.compress(b"\n" * MIB) for _ in range(BLANK_MIB))
    return [packed + z.compress(SSE) + z.flush()]


def _bomb() -> list[bytes]:
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return [b"".join(z.compress(b"\0" * MIB) for _ in range(BOMB_MIB)) + z.flush()]


HOSTILE: dict[str, tuple[Callable[[], list[bytes]], str | None]] = {
    "gzip_blank_lines": (_blank_gzip, "gzip"),
    "blank_line_padding": (_padded, None),
    "gzip_bomb": (_bomb, "gzip"),
}


def _read(url: str) -> int:
    """The body as the SDKs read it (the client's decoded bytes); how many bytes."""
    with httpx2.Client(timeout=120) as client:
        request = client.build_request("POST", url + "/v1/chat/completions", json=STREAMED)
        response = client.send(request, stream=True)
        try:
            return sum(len(piece) for piece in response.iter_bytes())
        finally:
            response.close()


def _timed(url: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        _read(url)
        best = min(best, time.perf_counter() - start)
    return best


def _peak(url: str) -> int:
    tracemalloc.start()
    try:
        _read(url)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.long
@pytest.mark.parametrize("kind", list(HOSTILE))
def test_padding_and_bombs_cost_a_small_factor_of_the_apps_own_read(
    kind: str, replay: ReplayServer, recorder: Recorder
) -> None:
    make, encoding = HOSTILE[kind]
    headers = [("content-type", "text/event-stream")]
    if encoding:
        headers.append(("content-encoding", encoding))
    replay.canned = Canned(200, headers, make())
    _read(replay.url)
    bare_time, bare_peak = _timed(replay.url), _peak(replay.url)
    recorder.instrument(limits=SMALL)
    _read(replay.url)
    tapped_time, tapped_peak = _timed(replay.url), _peak(replay.url)
    assert tapped_time <= 2 * bare_time + 0.05, (kind, bare_time, tapped_time)
    assert tapped_peak <= bare_peak + BOUND, (kind, bare_peak, tapped_peak)
    problems = _problems(recorder)
    if kind == "gzip_bomb":
        assert "oversized_event" in problems
    else:  # the padding hides nothing: the calls after it are seen
        assert len(recorder.received()) == 2 * 5 and "oversized_event" not in problems


# --- an argument delta over the event limit ---------------------------------------------


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return b"data: " + json.dumps({"id": "c1", "choices": [choice]}).encode() + b"\n\n"


def test_argument_delta_over_the_event_limit_is_no_call(
    replay: ReplayServer, recorder: Recorder
) -> None:
    start = {"index": 0, "id": "call_big", "type": "function"}
    start["function"] = {"name": "lookup", "arguments": '{"text":"'}
    huge = {"index": 0, "function": {"arguments": "a" * (SMALL.max_event_bytes + 1)}}
    end = {"index": 0, "function": {"arguments": '"}'}}
    body = [
        _chunk({"tool_calls": [start]}),
        _chunk({"tool_calls": [huge]}),
        _chunk({"tool_calls": [end]}),
        _chunk({}, "tool_calls") + b"data: [DONE]\n\n",
    ]
    replay.canned = Canned(200, [("content-type", "text/event-stream")], body)
    recorder.instrument(limits=SMALL)
    _sdk_calls(replay)
    assert recorder.received() == []
    problems = [
        dict(e.attributes or {})
        for s in recorder.inference()
        for e in s.events
        if "tooltap.problem.kind" in (e.attributes or {})
    ]
    assert [p["tooltap.problem.kind"] for p in problems] == ["oversized_event"]
    assert problems[0].get("gen_ai.tool.call.id") == "call_big"
