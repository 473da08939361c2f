"""Anthropic Messages on the wire (``POST /v1/messages``): tool_use blocks, named SSE events.

Claude on Bedrock (``/model/{id}/invoke``, ``/invoke-with-response-stream``: each event a
base64 ``chunk`` of an AWS event-stream) and on Vertex AI (``...:rawPredict``,
``:streamRawPredict``) too: the model is in the path.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any
from urllib.parse import unquote

from ._eventstream import chunk_message
from ._render import Rendered, args_cut, body_cut, dumps, fragments, json_response, sse
from ._scenario import PlannedCall, PriorCall, Reply, ToolResult, Turn, content_text, token

__all__ = ["AnthropicWire"]

_ERRORS: dict[str, tuple[str, str]] = {
    "invalid_request": ("invalid_request_error", "Invalid request."),
    "not_found": ("not_found_error", "Not found"),
    "rate_limit": (
        "rate_limit_error",
        (
            "This request would exceed the rate limit for your organization of 50 requests per "
            "minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. "
            "You can see the response headers for current usage. Please try again later."
        ),
    ),
    "insufficient_balance": (
        "billing_error",
        (
            "Your credit balance is too low to access the Anthropic API. "
            "Please go to Plans & Billing to upgrade or purchase credits."
        ),
    ),
    "server_error": ("api_error", "Internal server error"),
    "overloaded": ("overloaded_error", "Overloaded"),
}
_CHOICES = {"auto": "auto", "any": "any", "tool": "tool", "none": "none"}
_PATH_MODEL = re.compile(r"/model/([^/]+)/invoke|/models/([^/:]+):")
_EVENTSTREAM = "application/vnd.amazon.eventstream"


def _as_chunks(rendered: Rendered) -> Rendered:
    """An SSE stream as Bedrock sends it: each event's data a base64 ``chunk`` message."""
    old = rendered.chunks
    new = [chunk_message(json.loads(_data(event))) for event in old]
    if rendered.cut is not None:
        at, i = rendered.cut, 0
        while i < len(old) - 1 and at >= len(old[i]):
            at -= len(old[i])
            i += 1
        rendered.cut = sum(len(c) for c in new[:i]) + len(new[i]) // 2
    rendered.chunks = new
    rendered.headers = [
        (k, _EVENTSTREAM if k == "content-type" else v) for k, v in rendered.headers
    ]
    return rendered


def _data(event: bytes) -> bytes:
    return b"".join(line[5:].strip() for line in event.splitlines() if line.startswith(b"data:"))


def _blocks(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind]


def _input(call: PlannedCall) -> Any:
    """The ``input`` object; with broken arguments, the broken text itself (as a string)."""
    return call.args if call.valid else call.arguments


class AnthropicWire:
    """Messages: ``toolu_`` ids, object inputs, ``input_json_delta`` fragments."""

    dialect = "anthropic.messages"

    def __init__(self) -> None:
        self._rng = random.Random()

    def call_ids(self, rng: random.Random) -> tuple[str, str]:
        """``toolu_01`` + 22 characters, used as both ids."""
        call_id = "toolu_01" + token(rng, 22)
        return call_id, call_id

    def response_id(self, rng: random.Random) -> str:
        """``msg_01`` + 22 characters."""
        return "msg_01" + token(rng, 22)

    def read(self, body: Any, path: str, query: str) -> Turn:
        """Tools, tool_choice and the tool_result blocks after the last assistant message."""
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            raise TypeError("messages: Field required")
        messages = [m for m in body["messages"] if isinstance(m, dict)]
        last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
        tools = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
        raw_choice = body.get("tool_choice")
        choice: dict[str, Any] = raw_choice if isinstance(raw_choice, dict) else {}
        in_path = _PATH_MODEL.search(path)
        model = body.get("model") or (unquote(in_path[1] or in_path[2]) if in_path else "")
        bedrock_stream = path.rstrip("/").endswith("/invoke-with-response-stream")
        return Turn(
            model=str(model),
            stream=bool(body.get("stream")) or bedrock_stream,
            echo={"eventstream": bedrock_stream},
            tools=tuple(str(t) for t in tools if t),
            choice=_CHOICES.get(str(choice.get("type", "auto")), "auto"),
            forced_name=choice.get("name"),
            results=tuple(
                ToolResult(b.get("tool_use_id"), None, content_text(b.get("content", "")))
                for m in messages[last + 1 :]
                for b in _blocks(m, "tool_result")
            ),
            prior_calls=tuple(
                PriorCall(b.get("id"), str(b.get("name")))
                for b in (_blocks(messages[last], "tool_use") if last >= 0 else [])
            ),
        )

    def _usage(self, reply: Reply, output_tokens: int) -> dict[str, Any]:
        return {
            "input_tokens": reply.input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
            "service_tier": "standard",
        }

    def render(self, reply: Reply, turn: Turn, *, fragment: int, no_ids: bool) -> Rendered:
        """A ``message`` body, or its event stream."""
        if turn.stream:
            rendered = self._stream(reply, fragment)
            return _as_chunks(rendered) if turn.echo.get("eventstream") else rendered
        content: list[dict[str, Any]] = [
            {"type": "tool_use", "id": c.call_id, "name": c.name, "input": _input(c)}
            for c in reply.calls
        ]
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        body = {
            "id": reply.response_id,
            "type": "message",
            "role": "assistant",
            "model": reply.model,
            "content": content,
            "stop_reason": "tool_use" if reply.calls else "end_turn",
            "stop_sequence": None,
            "usage": self._usage(reply, reply.output_tokens),
        }
        rendered = json_response(200, body, [("request-id", self._request_id())])
        if len(reply.calls) > 1:
            second = reply.calls[1]
            needle = dumps(_input(second)).encode()
            rendered.cut = body_cut(rendered.body, second.call_id.encode(), 0, needle)
        return rendered

    def _stream(self, reply: Reply, fragment: int) -> Rendered:
        message: dict[str, Any] = {
            "id": reply.response_id,
            "type": "message",
            "role": "assistant",
            "model": reply.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": self._usage(reply, 1),
        }
        events = [sse({"type": "message_start", "message": message}, "message_start")]
        mark, cut = 4, None
        for index, call in enumerate(reply.calls):
            block = {"type": "tool_use", "id": call.call_id, "name": call.name, "input": {}}
            pieces = ["", *fragments(call.arguments, fragment)]
            self._block(events, index, block, "input_json_delta", "partial_json", pieces)
            if index == 0:
                mark = 5
            if index == 1:
                count = len(pieces) - 1
                cut = args_cut(events, len(events) - 1 - count, count)
        if reply.text:
            pieces = fragments(reply.text, fragment)
            block = {"type": "text", "text": ""}
            self._block(events, len(reply.calls), block, "text_delta", "text", pieces)
        delta = {"stop_reason": "tool_use" if reply.calls else "end_turn", "stop_sequence": None}
        usage = {"output_tokens": reply.output_tokens}
        events.append(
            sse({"type": "message_delta", "delta": delta, "usage": usage}, "message_delta")
        )
        events.append(sse({"type": "message_stop"}, "message_stop"))
        headers = [("content-type", "text/event-stream; charset=utf-8")]
        headers.append(("request-id", self._request_id()))
        return Rendered(200, headers, events, stream=True, mark=mark, cut=cut)

    def _block(
        self,
        events: list[bytes],
        index: int,
        block: dict[str, Any],
        delta_type: str,
        field: str,
        pieces: list[str],
    ) -> None:
        start = {"type": "content_block_start", "index": index, "content_block": block}
        events.append(sse(start, "content_block_start"))
        if index == 0:
            events.append(sse({"type": "ping"}, "ping"))
        for piece in pieces:
            delta = {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": delta_type, field: piece},
            }
            events.append(sse(delta, "content_block_delta"))
        events.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))

    def _request_id(self) -> str:
        return "req_011C" + token(self._rng, 20)

    def error(
        self, kind: str, status: int, message: str, retry_after: float | None = None
    ) -> Rendered:
        """Anthropic's ``{"type": "error", "error": {...}}`` body."""
        err_type, default = _ERRORS.get(kind, _ERRORS["server_error"])
        request_id = self._request_id()
        body = {
            "type": "error",
            "error": {"type": err_type, "message": message or default},
            "request_id": request_id,
        }
        return json_response(status, body, [("request-id", request_id)])

    def stream_error(self, reply: Reply, sequence: int) -> bytes:
        """``event: error`` carrying an ``overloaded_error``."""
        error = {"type": "overloaded_error", "message": "Overloaded"}
        return sse(json.dumps({"type": "error", "error": error}), "error")
