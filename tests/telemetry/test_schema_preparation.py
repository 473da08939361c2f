"""Declared schemas are prepared off the stream and bounded: a huge one never stalls it."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.reliability.support import Canned, ReplayServer
from tests.telemetry.support import Recorder
from tooltap import ToolCallReceived
from tooltap._core.validate import MAX_SCHEMA_CHARS, validate
from tooltap.core import RequestInfo, ToolCall

TOOL = "lookup"
CALLS = 12


def _huge_schema(chars: int) -> dict[str, object]:
    description = "d" * 200
    count = chars // (len(description) + 60)
    props = {f"p{i}": {"type": "string", "description": description} for i in range(count)}
    return {"type": "object", "properties": {"key": {"type": "string"}, **props}}


def _stream() -> list[bytes]:
    """One call per event, each completed by the next, then padding events and the end."""

    def event(delta: dict[str, object], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        chunk = {"id": "chatcmpl-s", "object": "chat.completion.chunk", "model": "gpt-4o",
                 "choices": [choice]}  # fmt: skip
        return b"data: " + json.dumps(chunk).encode() + b"\n\n"

    chunks = [event({"role": "assistant"})]
    for i in range(CALLS):
        call = {"index": i, "id": f"call_{i}", "type": "function",
                "function": {"name": TOOL, "arguments": '{"key": "a"}'}}  # fmt: skip
        chunks.append(event({"tool_calls": [call]}))
    chunks += [event({}) for _ in range(8)]
    chunks.append(event({}, "tool_calls"))
    return [*chunks, b"data: [DONE]\n\n"]


def _longest_gap(url: str, body: dict[str, object]) -> float:
    """The longest wait between two pieces of the stream as the app reads it."""
    with httpx.Client(timeout=60) as client:
        request = client.build_request("POST", f"{url}/v1/chat/completions", json=body)
        response = client.send(request, stream=True)
        try:
            last, longest = time.perf_counter(), 0.0
            for _ in response.iter_raw(256):
                now = time.perf_counter()
                longest, last = max(longest, now - last), now
        finally:
            response.close()
    return longest


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    server = ReplayServer().start()
    server.canned = Canned(200, [("content-type", "text/event-stream")], _stream())
    try:
        yield server
    finally:
        server.stop()


def test_a_5_mb_schema_does_not_stall_the_stream(replay: ReplayServer, recorder: Recorder) -> None:
    schema = _huge_schema(5 * 1024 * 1024)
    tools = [{"type": "function", "function": {"name": TOOL, "parameters": schema}}]
    body = {"model": "gpt-4o", "stream": True, "tools": tools,
            "messages": [{"role": "user", "content": "hi"}]}  # fmt: skip
    bare = min(_longest_gap(replay.url, body) for _ in range(3))  # not instrumented
    recorder.instrument()
    instrumented = _longest_gap(replay.url, body)  # the first sight of the schema
    assert instrumented <= 2 * bare + 0.05, (instrumented, bare)
    (span,) = recorder.inference()[:1]
    kinds = [e.attributes.get("tooltap.problem.kind") for e in span.events if e.attributes]
    assert kinds.count("schema_too_large") == CALLS  # one per call, nothing else validated
    assert len(recorder.of(ToolCallReceived)) == CALLS  # every call delivered


def test_a_schema_over_the_cap_is_one_problem_and_a_small_one_validates() -> None:
    big = _huge_schema(2 * MAX_SCHEMA_CHARS)
    call = ToolCall(TOOL, {"key": 1}, "openai", "c1", 0, dialect="openai.chat")
    info = RequestInfo("openai.chat", tools={TOOL: big})
    (problem,) = validate(call, info)
    assert problem.kind == "schema_too_large" and problem.call_id == "c1"
    small = RequestInfo("openai.chat", tools={TOOL: {"properties": {"key": {"type": "string"}}}})
    assert [p.kind for p in validate(call, small)] == ["schema_violation"]
