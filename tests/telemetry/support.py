"""Shared helpers for the transport-tap and telemetry tests: wire bodies, raw clients, the
simulator (the recorder is ``tests.recorder``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import pytest

import tooltap
from tests.recorder import Recorder as Recorder  # the suite's recorder, re-exported
from tests.recorder import attrs as attrs
from tooltap import Parsed, Problem, ToolCall, ToolResultRef
from tooltap._telemetry.operation import Operation, get_telemetry
from tooltap.core import RequestInfo
from tooltap.simulator import Simulator

DIALECTS = ("openai.chat", "openai.responses", "anthropic.messages", "google.genai")
LIBS = {"httpx": httpx, "httpx2": httpx2}
TOOL = "lookup_demo_value"
SCHEMA = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}
GOOGLE_MODEL = "gemini-2.0-flash"


def url(sim: Any, dialect: str, stream: bool) -> str:
    if dialect == "openai.chat":
        return sim.openai_base_url + "/chat/completions"
    if dialect == "openai.responses":
        return sim.openai_base_url + "/responses"
    if dialect == "anthropic.messages":
        return sim.anthropic_base_url + "/v1/messages"
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    return f"{sim.google_base_url}/v1beta/models/{GOOGLE_MODEL}:{method}"


def first_body(dialect: str, stream: bool, **extra: Any) -> dict[str, Any]:
    """Turn 1: the user's question and the lookup tool declared."""
    question = "How tall am I, and how much do I weigh?"
    if dialect == "openai.chat":
        tools = [{"type": "function", "function": {"name": TOOL, "parameters": SCHEMA}}]
        body = {"model": "gpt-4o", "messages": [{"role": "user", "content": question}]}
    elif dialect == "openai.responses":
        tools = [{"type": "function", "name": TOOL, "parameters": SCHEMA}]
        body = {"model": "gpt-4o", "input": [{"role": "user", "content": question}]}
    elif dialect == "anthropic.messages":
        tools = [{"name": TOOL, "input_schema": SCHEMA}]
        body = {"model": "claude-sonnet-4-6", "max_tokens": 256,
                "messages": [{"role": "user", "content": question}]}  # fmt: skip
    else:
        body = {
            "contents": [{"role": "user", "parts": [{"text": question}]}],
            "tools": [{"functionDeclarations": [{"name": TOOL, "parameters": SCHEMA}]}],
        }
        return {**body, **extra}
    if stream:
        body["stream"] = True
        if dialect == "openai.chat":
            body["stream_options"] = {"include_usage": True}
    return {**body, "tools": tools, **extra}


def answer(call: tooltap.ToolCall) -> str:
    return {"height": "170 cm", "weight": "70 kg"}.get(str(call.args.get("key")), "unknown")


def second_body(
    dialect: str, first: dict[str, Any], calls: list[tooltap.ToolCall], raw_args: bool = False
) -> dict[str, Any]:
    """Turn 2: the history plus one result per call, in the provider's shape."""
    body = json.loads(json.dumps(first))
    if dialect == "openai.chat":
        body["messages"].append(
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": c.call_id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": json.dumps(c.args)},
                    }
                    for c in calls
                ],
            }
        )
        body["messages"] += [tooltap.core.result_message(c, answer(c)) for c in calls]
    elif dialect == "openai.responses":
        body["input"] += [{"type": "function_call", "call_id": c.call_id, "name": c.name,
                           "arguments": json.dumps(c.args)} for c in calls]  # fmt: skip
        body["input"] += [tooltap.core.result_message(c, answer(c)) for c in calls]
    elif dialect == "anthropic.messages":
        body["messages"].append(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": c.call_id, "name": c.name, "input": c.args}
                    for c in calls
                ],
            }
        )
        body["messages"].append(
            {"role": "user", "content": [tooltap.core.result_message(c, answer(c)) for c in calls]}
        )
    else:
        parts = [
            {
                "functionCall": {
                    "name": c.name,
                    "args": c.args,
                    **({"id": c.call_id} if c.call_id else {}),
                }
            }
            for c in calls
        ]
        body["contents"].append({"role": "model", "parts": parts})
        body["contents"].append(
            {"role": "user", "parts": [tooltap.core.result_message(c, answer(c)) for c in calls]}
        )
    return body


def post(lib: str, target: str, body: Any, *, stream: bool, headers: dict[str, str] | None = None,
         chunks: list[bytes] | None = None) -> tuple[int, bytes]:  # fmt: skip
    """One sync POST; the raw body chunks the app saw are appended to ``chunks``."""
    module = LIBS[lib]
    with module.Client(timeout=10) as client:
        request = client.build_request("POST", target, json=body, headers=headers)
        response = client.send(request, stream=stream)
        try:
            seen = list(response.iter_raw()) if stream else [response.content]
        finally:
            response.close()
    if chunks is not None:
        chunks += seen
    return response.status_code, b"".join(seen)


async def apost(lib: str, target: str, body: Any, *, stream: bool,
                headers: dict[str, str] | None = None,
                chunks: list[bytes] | None = None) -> tuple[int, bytes]:  # fmt: skip
    """One async POST, like ``post``."""
    module = LIBS[lib]
    async with module.AsyncClient(timeout=10) as client:
        request = client.build_request("POST", target, json=body, headers=headers)
        response = await client.send(request, stream=stream)
        try:
            seen = [c async for c in response.aiter_raw()] if stream else [response.content]
        finally:
            await response.aclose()
    if chunks is not None:
        chunks += seen
    return response.status_code, b"".join(seen)


async def exchange(
    is_async: bool, lib: str, target: str, body: Any, **kwargs: Any
) -> tuple[int, bytes]:
    """``post`` or ``apost``."""
    if is_async:
        return await apost(lib, target, body, **kwargs)
    return post(lib, target, body, **kwargs)


def sse_chunks(data: bytes, sizes: Iterator[int]) -> list[bytes]:
    """``data`` cut into chunks of the given sizes (cycled), for fixed-chunk transports."""
    out, i = [], 0
    for size in sizes:
        if i >= len(data):
            break
        out.append(data[i : i + size])
        i += size
    return out


@pytest.fixture(scope="module")
def sim() -> Iterator[Simulator]:
    """One simulator per test module."""
    with Simulator() as simulator:
        yield simulator


#: Tools the synthetic turns declare.
TURN_TOOLS: dict[str, Any] = {"lookup": {"type": "object"}}


def turn(
    calls: tuple[ToolCall, ...] = (),
    results: tuple[str | ToolResultRef, ...] = (),
    problems: tuple[Problem, ...] = (),
    *,
    tools: dict[str, Any] = TURN_TOOLS,
    response_id: str | None = None,
) -> Operation:
    """One synthetic openai.chat request through an Operation: ``results`` go out (a call
    id is an ok result of ``lookup``), ``calls`` (and ``problems``) come back."""
    tel = get_telemetry()
    assert tel is not None
    op = Operation(tel, dialect="openai.chat", request_model="m", server_address="h",
                   server_port=1, stream=False, owner="transport")  # fmt: skip
    refs = tuple(
        r if isinstance(r, ToolResultRef) else ToolResultRef(r, "lookup", False, i)
        for i, r in enumerate(results)
    )
    request = RequestInfo("openai.chat", model="m", tools=tools, tool_results=refs)
    op.begin_attempt(request, {})
    parsed = Parsed("openai.chat", calls, problems=problems, finish_reason="tool_calls",
                    response_id=response_id)  # fmt: skip
    op.record_parsed(parsed, request)
    op.end()
    return op
