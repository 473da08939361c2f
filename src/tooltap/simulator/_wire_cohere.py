"""Cohere v2 Chat on the wire (``POST /v2/chat``): tool calls with ids and JSON-text
arguments, streamed as ``tool-call-start`` / ``tool-call-delta`` / ``tool-call-end``."""

from __future__ import annotations

import random
from typing import Any

from ._render import Rendered, args_cut, body_cut, dumps, fragments, json_response, sse
from ._scenario import PlannedCall, PriorCall, Reply, ToolResult, Turn, content_text, token

__all__ = ["CohereWire"]

_ERRORS: dict[str, str] = {
    "invalid_request": "invalid request",
    "not_found": "model not found",
    "rate_limit": "You are using a Trial key, which is limited to 10 API calls / minute.",
    "insufficient_balance": "Please add a payment method to continue.",
    "server_error": "internal server error, this has been reported to our developers",
    "overloaded": "the service is overloaded, please try again later",
}
_CHOICES = {"REQUIRED": "any", "NONE": "none"}


def _result_text(content: Any) -> str:
    if not isinstance(content, list):
        return content_text(content)
    pieces = []
    for block in content:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            pieces.append(block["text"])
        elif isinstance(block, dict) and isinstance(block.get("document"), dict):
            pieces.append(content_text(block["document"].get("data", "")))
    return "".join(pieces)


class CohereWire:
    """v2 Chat: 32-character call ids, JSON-text arguments, typed SSE events."""

    dialect = "cohere.chat"

    def call_ids(self, rng: random.Random) -> tuple[str, str]:
        """``<name-like prefix>`` + 16 characters, used as both ids."""
        call_id = "lookup_" + token(rng, 16, "abcdefghijklmnopqrstuvwxyz0123456789")
        return call_id, call_id

    def response_id(self, rng: random.Random) -> str:
        """A UUID-shaped id."""
        hexa = "0123456789abcdef"
        return "-".join(token(rng, n, hexa) for n in (8, 4, 4, 4, 12))

    def read(self, body: Any, path: str, query: str) -> Turn:
        """Tools, tool_choice and the tool messages after the last assistant message."""
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            raise TypeError("invalid request: messages must be a list")
        messages = [m for m in body["messages"] if isinstance(m, dict)]
        last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
        tools = [
            t["function"].get("name")
            for t in body.get("tools") or []
            if isinstance(t, dict) and isinstance(t.get("function"), dict)
        ]
        prior = messages[last].get("tool_calls") if last >= 0 else None
        return Turn(
            model=str(body.get("model") or ""),
            stream=bool(body.get("stream")),
            tools=tuple(str(t) for t in tools if t),
            choice=_CHOICES.get(str(body.get("tool_choice")), "auto"),
            results=tuple(
                ToolResult(m.get("tool_call_id"), None, _result_text(m.get("content")))
                for m in messages[last + 1 :]
                if m.get("role") == "tool"
            ),
            prior_calls=tuple(
                PriorCall(c.get("id"), str((c.get("function") or {}).get("name")))
                for c in (prior if isinstance(prior, list) else [])
                if isinstance(c, dict)
            ),
        )

    def _usage(self, reply: Reply) -> dict[str, Any]:
        tokens = {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens}
        return {"billed_units": tokens, "tokens": tokens}

    def render(self, reply: Reply, turn: Turn, *, fragment: int, no_ids: bool) -> Rendered:
        """A chat response, or its SSE stream."""
        finish = "TOOL_CALL" if reply.calls else "COMPLETE"
        if turn.stream:
            return self._stream(reply, fragment, finish)
        message: dict[str, Any] = {"role": "assistant"}
        if reply.calls:
            message["tool_plan"] = "I will look the values up."
            message["tool_calls"] = [_call(c, c.arguments) for c in reply.calls]
        if reply.text:
            message["content"] = [{"type": "text", "text": reply.text}]
        body = {
            "id": reply.response_id,
            "message": message,
            "finish_reason": finish,
            "usage": self._usage(reply),
        }
        rendered = json_response(200, body)
        if len(reply.calls) > 1:
            second = reply.calls[1]
            rendered.cut = body_cut(
                rendered.body, second.call_id.encode(), 0, dumps(second.arguments).encode()
            )
        return rendered

    def _stream(self, reply: Reply, fragment: int, finish: str) -> Rendered:
        start = {
            "id": reply.response_id,
            "type": "message-start",
            "delta": {
                "message": {
                    "role": "assistant",
                    "content": [],
                    "tool_plan": "",
                    "tool_calls": [],
                    "citations": [],
                }
            },
        }
        events = [_event(start)]
        mark, cut = 2, None
        if reply.calls:
            plan = {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "Looking up."}}}
            events.append(_event(plan))
        for index, call in enumerate(reply.calls):
            begin = {
                "type": "tool-call-start",
                "index": index,
                "delta": {"message": {"tool_calls": _call(call, "")}},
            }
            events.append(_event(begin))
            pieces = fragments(call.arguments, fragment)
            for piece in pieces:
                delta = {
                    "type": "tool-call-delta",
                    "index": index,
                    "delta": {"message": {"tool_calls": {"function": {"arguments": piece}}}},
                }
                events.append(_event(delta))
            if index == 0:
                mark = len(events)
            if index == 1:
                cut = args_cut(events, len(events) - len(pieces), len(pieces))
            events.append(_event({"type": "tool-call-end", "index": index}))
        if reply.text:
            text_index = 0
            events.append(
                _event(
                    {
                        "type": "content-start",
                        "index": text_index,
                        "delta": {"message": {"content": {"type": "text", "text": ""}}},
                    }
                )
            )
            for piece in fragments(reply.text, fragment):
                delta = {
                    "type": "content-delta",
                    "index": text_index,
                    "delta": {"message": {"content": {"text": piece}}},
                }
                events.append(_event(delta))
            events.append(_event({"type": "content-end", "index": text_index}))
        end = {
            "type": "message-end",
            "delta": {"finish_reason": finish, "usage": self._usage(reply)},
        }
        events.append(_event(end))
        headers = [("content-type", "text/event-stream")]
        return Rendered(200, headers, events, stream=True, mark=mark, cut=cut)

    def error(
        self, kind: str, status: int, message: str, retry_after: float | None = None
    ) -> Rendered:
        """``{"message": "..."}``."""
        return json_response(
            status, {"message": message or _ERRORS.get(kind, _ERRORS["server_error"])}
        )

    def stream_error(self, reply: Reply, sequence: int) -> bytes:
        """``message-end`` with ``finish_reason: ERROR``: how v2 ends a failed generation."""
        return _event({"type": "message-end", "delta": {"finish_reason": "ERROR"}})


def _call(call: PlannedCall, arguments: str) -> dict[str, Any]:
    return {
        "id": call.call_id,
        "type": "function",
        "function": {"name": call.name, "arguments": arguments},
    }


def _event(data: dict[str, Any]) -> bytes:
    return sse(data, str(data["type"]))
