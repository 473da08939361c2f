"""Anthropic declarations keyed as the dialect keys them: a toolset member by its toolset
and name (``toolset_name`` on the call), beside a function tool of the same name; a
``tool_removal`` withdraws a tool from there on."""

from __future__ import annotations

import json
from typing import Any

from tooltap.core import StreamParser, parse_request, parse_response, validate

PATH = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def _message(block: dict[str, Any]) -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
            "content": [block], "stop_reason": "tool_use"}  # fmt: skip


def _request() -> dict[str, Any]:
    return {"model": "claude", "max_tokens": 10,
            "tools": [{"name": "navigate", "input_schema": PATH},
                      {"type": "browser_toolset_20260801"}],
            "messages": [{"role": "user", "content": "open the docs"}]}  # fmt: skip


def test_a_toolset_member_is_not_checked_against_a_function_tool_of_its_name() -> None:
    info = parse_request(_request(), "anthropic.messages")
    assert info.tools["navigate"] == PATH
    assert "navigate" in info.toolsets["browser"]
    member = {"type": "tool_use", "id": "t1", "name": "navigate", "toolset_name": "browser",
              "input": {"url": "https://example.com"}}  # fmt: skip
    (call,) = parse_response(json.dumps(_message(member)).encode(), "anthropic.messages").calls
    assert call.toolset == "browser"
    assert validate(call, info) == []
    function = {"type": "tool_use", "id": "t2", "name": "navigate",
                "input": {"url": "https://example.com"}}  # fmt: skip
    (call,) = parse_response(json.dumps(_message(function)).encode(), "anthropic.messages").calls
    assert [p.kind for p in validate(call, info)] == ["schema_violation"]
    other = {**member, "toolset_name": "computer"}
    (call,) = parse_response(json.dumps(_message(other)).encode(), "anthropic.messages").calls
    assert [p.kind for p in validate(call, info)] == ["undeclared_tool"]


def test_a_streamed_member_carries_its_toolset() -> None:
    events = [
        {"type": "message_start", "message": {**_message({}), "content": []}},
        {"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": "t1", "name": "navigate", "toolset_name": "browser",
            "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {
            "type": "input_json_delta", "partial_json": '{"url": "https://example.com"}'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_stop"},
    ]  # fmt: skip
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
    parser = StreamParser("anthropic.messages")
    fed = parser.feed(body)
    assert [(c.name, c.toolset) for c in fed] == [("navigate", "browser")]
    assert parser.close().calls == tuple(fed)


def test_a_removed_tool_is_no_longer_declared() -> None:
    body = _request()
    removal = {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "navigate"}}
    body["messages"] = [{"role": "user", "content": [{"type": "text", "text": "hi"}, removal]}]
    info = parse_request(body, "anthropic.messages")
    assert "navigate" not in info.tools
    assert "navigate" in info.toolsets["browser"]  # the member is another tool
