"""Arguments ``json.loads`` accepts are never ``invalid_json``, however deep; the content
path (capture, the follow-up request carrying the result) handles them too."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import httpx
import pytest

from tests.reliability.support import Canned, ReplayServer
from tests.telemetry.support import Recorder, attrs
from tooltap import ToolCallProblem, ToolCallReceived
from tooltap._core._json import loads, loads_str
from tooltap._telemetry import semconv as sc

#: The depth of the report, and the deepest ``json.loads`` takes at the top of a stack.
DEPTHS = (980, sys.getrecursionlimit() - 5)


def _arguments(depth: int) -> str:
    return '{"a":' + "[" * depth + "]" * depth + "}"


def _response(arguments: str, stream: bool) -> list[bytes]:
    call = {"id": "call_deep", "type": "function",
            "function": {"name": "lookup", "arguments": arguments}}  # fmt: skip
    if not stream:
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        body = {
            "id": "chatcmpl-d",
            "object": "chat.completion",
            "model": "gpt-4o",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        }
        return [json.dumps(body).encode()]
    events = [
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, **call}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    chunks = [
        b"data: "
        + json.dumps(
            {"id": "chatcmpl-d", "object": "chat.completion.chunk", "model": "gpt-4o", **e}
        ).encode()
        + b"\n\n"
        for e in events
    ]
    return [*chunks, b"data: [DONE]\n\n"]  # fmt: skip


def _depth(value: list[object]) -> int:
    """How deep ``value`` nests, one list in each (walked, not recursed)."""
    depth = 1
    while value:
        (inner,) = value
        assert isinstance(inner, list)
        value, depth = inner, depth + 1
    return depth


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    server = ReplayServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("depth", DEPTHS)
def test_deep_arguments_are_a_call_and_their_result_is_recorded(
    depth: int, stream: bool, replay: ReplayServer, recorder: Recorder
) -> None:
    arguments = _arguments(depth)
    kind = "text/event-stream" if stream else "application/json"
    replay.canned = Canned(200, [("content-type", kind)], _response(arguments, stream))
    recorder.instrument(capture_content="SPAN_ONLY")
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]
    first = {"model": "gpt-4o", "stream": stream, "tools": tools,
             "messages": [{"role": "user", "content": "hi"}]}  # fmt: skip
    call = {"id": "call_deep", "type": "function",
            "function": {"name": "lookup", "arguments": arguments}}  # fmt: skip
    second = {**first, "messages": [
        *first["messages"],
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_deep", "content": arguments},
    ]}  # fmt: skip
    with httpx.Client(timeout=30) as client:
        for body in (first, second):
            client.post(f"{replay.url}/v1/chat/completions", json=body).read()
    assert recorder.of(ToolCallProblem) == []
    received = recorder.of(ToolCallReceived)[0]
    assert received.call.call_id == "call_deep"
    assert _depth(received.call.args["a"]) == depth
    answered = next(s for s in recorder.tools() if attrs(s).get(sc.GEN_AI_TOOL_CALL_ID))
    got = attrs(answered)
    assert got[sc.GEN_AI_TOOL_CALL_ARGUMENTS] == arguments
    assert got[sc.TOOLTAP_RESULT] == sc.RESULT_OK and sc.ERROR_TYPE not in got
    followup = recorder.inference()[1]
    assert sc.GEN_AI_INPUT_MESSAGES in attrs(followup)  # the follow-up request is recorded
    assert recorder.total(sc.INTERNAL_ERRORS) == 0


@pytest.mark.parametrize("depth", DEPTHS)
def test_the_decoders_return_what_json_loads_returns(depth: int) -> None:
    text = _arguments(depth)
    assert _depth(loads_str(text)["a"]) == depth
    assert _depth(loads(text.encode())["a"]) == depth


def test_nesting_past_the_recursion_limit_is_invalid_json_not_a_recursion_error() -> None:
    text = _arguments(2 * sys.getrecursionlimit())
    with pytest.raises(json.JSONDecodeError, match="nested deeper than"):
        loads_str(text)
