"""Cheap conversations on the wire: raw httpx2 requests in each dialect's JSON, no SDK.

For the long per-turn runs, where an SDK's model building would dominate: turn 1 asks
for the lookup tool (streamed), turn 2 sends the history plus one result per call
(``tooltap.core.result_messages``), as any harness on a bare HTTP client would.
"""

from __future__ import annotations

import json
from typing import Any, Final

import httpx2

import tooltap

TOOL = "lookup_demo_value"
SCHEMA = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}
QUESTION = "How tall am I, and how much do I weigh?"
PATHS = {
    "openai.chat": "/v1/chat/completions",
    "openai.responses": "/v1/responses",
    "anthropic.messages": "/v1/messages",
    "google.genai": "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
}


def first_body(dialect: str) -> dict[str, Any]:
    """Turn 1: the question, the tool declared, streamed."""
    if dialect == "openai.chat":
        tools = [{"type": "function", "function": {"name": TOOL, "parameters": SCHEMA}}]
        return {"model": "gpt-4o", "stream": True, "tools": tools,
                "messages": [{"role": "user", "content": QUESTION}]}  # fmt: skip
    if dialect == "openai.responses":
        tools = [{"type": "function", "name": TOOL, "parameters": SCHEMA}]
        return {"model": "gpt-4o", "stream": True, "tools": tools,
                "input": [{"role": "user", "content": QUESTION}]}  # fmt: skip
    if dialect == "anthropic.messages":
        tools = [{"name": TOOL, "input_schema": SCHEMA}]
        return {"model": "claude-sonnet-4-6", "max_tokens": 256, "stream": True, "tools": tools,
                "messages": [{"role": "user", "content": QUESTION}]}  # fmt: skip
    return {
        "contents": [{"role": "user", "parts": [{"text": QUESTION}]}],
        "tools": [{"functionDeclarations": [{"name": TOOL, "parameters": SCHEMA}]}],
    }


def second_body(dialect: str, first: dict[str, Any], calls: tuple[tooltap.ToolCall, ...]) -> Any:
    """Turn 2: turn 1's history, the model's calls, and one result per call."""
    body = json.loads(json.dumps(first))
    results = tooltap.core.result_messages((c, f"value of {c.args.get('key')}") for c in calls)
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
        body["messages"] += results
    elif dialect == "openai.responses":
        body["input"] += [{"type": "function_call", "call_id": c.call_id, "name": c.name,
                           "arguments": json.dumps(c.args)} for c in calls]  # fmt: skip
        body["input"] += results
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
        body["messages"] += results
    else:
        parts = [{"functionCall": {"name": c.name, "args": c.args, "id": c.call_id}} for c in calls]
        body["contents"].append({"role": "model", "parts": parts})
        body["contents"] += results
    return body


def post(client: httpx2.Client, base_url: str, dialect: str, body: Any) -> bytes:
    """One request; the whole body as the app read it, chunk by chunk."""
    request = client.build_request("POST", base_url + PATHS[dialect], json=body)
    response = client.send(request, stream=True)
    try:
        data = b"".join(response.iter_bytes())
    finally:
        response.close()
    if response.status_code != 200:
        raise AssertionError(f"{dialect}: HTTP {response.status_code}: {data[:300]!r}")
    return data


def conversation(client: httpx2.Client, base_url: str, dialect: str) -> int:
    """Turn 1 (two calls), turn 2 (their results, the final text); returns the call count."""
    first = first_body(dialect)
    calls = tooltap.core.parse_response(post(client, base_url, dialect, first), dialect).calls
    assert len(calls) == 2, calls
    post(client, base_url, dialect, second_body(dialect, first, calls))
    return len(calls)


#: A streamed request body that any dialect's API could take (the taps observe only bodies
#: that look like their API's), for tests about what comes back.
STREAMED: Final[dict[str, Any]] = {
    "model": "m", "stream": True, "messages": [], "input": [], "contents": []
}  # fmt: skip
