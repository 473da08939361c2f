"""OpenAI Chat Completions on the wire (``POST /v1/chat/completions``), plus OpenAI errors."""

from __future__ import annotations

import random
from typing import Any

from ._render import Rendered, args_cut, body_cut, dumps, fragments, json_response
from ._scenario import PriorCall, Reply, ToolResult, Turn, content_text, token

__all__ = ["ChatWire", "openai_choice", "openai_error", "openai_error_body"]

_FINGERPRINT = "fp_7e1a5c0d9b"
_ERRORS: dict[str, tuple[str, str | None, str]] = {
    "invalid_request": ("invalid_request_error", None, "Invalid request."),
    "not_found": ("invalid_request_error", "unknown_url", "Unknown request URL."),
    "rate_limit": (
        "requests",
        "rate_limit_exceeded",
        (
            "Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1. "
            "Please try again in 1s."
        ),
    ),
    "insufficient_balance": (
        "insufficient_quota",
        "insufficient_quota",
        (
            "You exceeded your current quota, please check your plan and billing details. "
            "For more information on this error, read the docs: "
            "https://platform.openai.com/docs/guides/error-codes/api-errors."
        ),
    ),
    "server_error": (
        "server_error",
        None,
        "The server had an error while processing your request. Sorry about that!",
    ),
    "overloaded": (
        "server_error",
        None,
        "The engine is currently overloaded, please try again later.",
    ),
}


def openai_error_body(kind: str, message: str = "", param: str | None = None) -> dict[str, Any]:
    """OpenAI's ``{"error": {...}}`` body."""
    err_type, code, default = _ERRORS.get(kind, _ERRORS["server_error"])
    return {
        "error": {"message": message or default, "type": err_type, "param": param, "code": code}
    }


def openai_error(kind: str, status: int, message: str, rng: random.Random) -> Rendered:
    """A non-streamed OpenAI error response."""
    param = "messages" if kind == "invalid_request" and message else None
    body = openai_error_body(kind, message, param)
    return json_response(
        status, body, [("x-request-id", "req_" + token(rng, 32, "0123456789abcdef"))]
    )


def openai_choice(value: Any) -> tuple[str, str | None]:
    """(choice, forced tool name) from an OpenAI ``tool_choice`` (chat or responses shape)."""
    if value in (None, "auto"):
        return "auto", None
    if value == "none":
        return "none", None
    if value == "required":
        return "any", None
    if isinstance(value, dict):
        function = value.get("function")
        name = function.get("name") if isinstance(function, dict) else value.get("name")
        if isinstance(name, str):
            return "tool", name
        return "any", None
    return "auto", None


def _usage(reply: Reply) -> dict[str, Any]:
    return {
        "prompt_tokens": reply.input_tokens,
        "completion_tokens": reply.output_tokens,
        "total_tokens": reply.input_tokens + reply.output_tokens,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


class ChatWire:
    """Chat Completions: ``call_`` ids, string arguments, ``data:``-only SSE ending in [DONE]."""

    dialect = "openai.chat"

    def __init__(self) -> None:
        self._rng = random.Random()

    def call_ids(self, rng: random.Random) -> tuple[str, str]:
        """``call_`` + 24 characters, used as both ids."""
        call_id = "call_" + token(rng, 24)
        return call_id, call_id

    def response_id(self, rng: random.Random) -> str:
        """``chatcmpl-`` + 29 characters."""
        return "chatcmpl-" + token(rng, 29)

    def read(self, body: Any, path: str, query: str) -> Turn:
        """Tools, tool_choice and the tool messages after the last assistant message."""
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            raise TypeError("'messages' is a required property")
        messages = [m for m in body["messages"] if isinstance(m, dict)]
        tools = [t.get("function", {}).get("name") for t in body.get("tools") or []]
        tools += [f.get("name") for f in body.get("functions") or []]
        choice, forced = openai_choice(body.get("tool_choice", body.get("function_call")))
        last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
        prior = messages[last].get("tool_calls") or [] if last >= 0 else []
        options = body.get("stream_options")
        return Turn(
            model=str(body.get("model") or ""),
            stream=bool(body.get("stream")),
            tools=tuple(str(t) for t in tools if t),
            choice=choice,
            forced_name=forced,
            results=tuple(
                ToolResult(m.get("tool_call_id"), m.get("name"), content_text(m.get("content")))
                for m in messages[last + 1 :]
                if m.get("role") in ("tool", "function")
            ),
            prior_calls=tuple(
                PriorCall(c.get("id"), str(c.get("function", {}).get("name")))
                for c in prior
                if isinstance(c, dict)
            ),
            include_usage=isinstance(options, dict) and bool(options.get("include_usage")),
        )

    def render(self, reply: Reply, turn: Turn, *, fragment: int, no_ids: bool) -> Rendered:
        """A ``chat.completion`` body, or its chunk stream."""
        if turn.stream:
            return self._stream(reply, turn, fragment)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": reply.text or None,
            "refusal": None,
            "annotations": [],
        }
        if reply.calls:
            message["tool_calls"] = [
                {
                    "id": c.call_id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in reply.calls
            ]
        body = {
            "id": reply.response_id,
            "object": "chat.completion",
            "created": reply.created,
            "model": reply.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if reply.calls else "stop",
                }
            ],
            "usage": _usage(reply),
            "service_tier": "default",
            "system_fingerprint": _FINGERPRINT,
        }
        rendered = json_response(200, body)
        if len(reply.calls) > 1:
            second = reply.calls[1]
            rendered.cut = body_cut(
                rendered.body, second.call_id.encode(), 0, dumps(second.arguments).encode()
            )
        return rendered

    def _stream(self, reply: Reply, turn: Turn, fragment: int) -> Rendered:
        head = (
            f'data: {{"id":{dumps(reply.response_id)},"object":"chat.completion.chunk",'
            f'"created":{reply.created},"model":{dumps(reply.model)},"service_tier":"default",'
            f'"system_fingerprint":"{_FINGERPRINT}","choices":[{{"index":0,"delta":'
        )
        tail = ',"logprobs":null,"finish_reason":null}]'
        tail += ',"usage":null}\n\n' if turn.include_usage else "}\n\n"

        def chunk(delta: dict[str, Any]) -> bytes:
            return (head + dumps(delta) + tail).encode()

        events = [
            chunk({"role": "assistant", "content": None if reply.calls else "", "refusal": None})
        ]
        mark, cut = 2, None
        for index, call in enumerate(reply.calls):
            start = {"index": index, "id": call.call_id, "type": "function"}
            events.append(
                chunk({"tool_calls": [{**start, "function": {"name": call.name, "arguments": ""}}]})
            )
            pieces = fragments(call.arguments, fragment)
            for piece in pieces:
                events.append(
                    chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                )
            if index == 1:
                cut = args_cut(events, len(events) - len(pieces), len(pieces))
            mark = 3 if index == 0 else mark
        if reply.text:
            events += [chunk({"content": piece}) for piece in fragments(reply.text, fragment)]
        finish = "tool_calls" if reply.calls else "stop"
        final = head + "{}" + tail.replace('"finish_reason":null', f'"finish_reason":"{finish}"')
        events.append(final.encode())
        if turn.include_usage:
            usage = (
                head.split('"choices":')[0] + f'"choices":[],"usage":{dumps(_usage(reply))}}}\n\n'
            )
            events.append(usage.encode())
        events.append(b"data: [DONE]\n\n")
        headers = [("content-type", "text/event-stream; charset=utf-8")]
        return Rendered(200, headers, events, stream=True, mark=mark, cut=cut)

    def error(
        self, kind: str, status: int, message: str, retry_after: float | None = None
    ) -> Rendered:
        """OpenAI's error body."""
        return openai_error(kind, status, message, self._rng)

    def stream_error(self, reply: Reply, sequence: int) -> bytes:
        """``data: {"error": ...}``: the OpenAI SDK raises APIError on it."""
        return f"data: {dumps(openai_error_body('server_error'))}\n\n".encode()
