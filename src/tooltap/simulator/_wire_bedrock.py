"""Bedrock Converse on the wire (``POST /model/{modelId}/converse`` and ``/converse-stream``):
toolUse blocks, and AWS event-stream messages for a stream."""

from __future__ import annotations

import json
import random
import re
from typing import Any
from urllib.parse import unquote

from ._eventstream import event_message, exception_message
from ._render import Rendered, args_cut, body_cut, dumps, fragments, json_response
from ._scenario import PlannedCall, PriorCall, Reply, ToolResult, Turn, content_text, token

__all__ = ["ConverseWire"]

#: kind -> (``x-amzn-errortype`` code, default message).
_ERRORS: dict[str, tuple[str, str]] = {
    "invalid_request": ("ValidationException", "Malformed input request."),
    "not_found": ("ResourceNotFoundException", "Model not found."),
    "rate_limit": ("ThrottlingException", "Too many requests, please wait before trying again."),
    "insufficient_balance": (
        "ServiceQuotaExceededException",
        "Your request exceeds the service quota for your account.",
    ),
    "server_error": ("InternalServerException", "An internal server error occurred."),
    "overloaded": ("ServiceUnavailableException", "Service is temporarily unavailable."),
}
_PATH = re.compile(r"/model/([^/]+)/converse(-stream)?/?$")


def _blocks(message: dict[str, Any], key: str) -> list[dict[str, Any]]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [b[key] for b in content if isinstance(b, dict) and isinstance(b.get(key), dict)]


def _result_text(content: Any) -> str:
    if not isinstance(content, list):
        return content_text(content)
    pieces = []
    for block in content:
        if isinstance(block, dict) and "text" in block:
            pieces.append(str(block["text"]))
        elif isinstance(block, dict) and "json" in block:
            pieces.append(json.dumps(block["json"], ensure_ascii=False))
    return "".join(pieces)


class ConverseWire:
    """Converse: ``tooluse_`` ids, object inputs, string input fragments in a stream."""

    dialect = "bedrock.converse"

    def __init__(self) -> None:
        self._rng = random.Random()

    def call_ids(self, rng: random.Random) -> tuple[str, str]:
        """``tooluse_`` + 22 characters, used as both ids."""
        call_id = "tooluse_" + token(rng, 22)
        return call_id, call_id

    def response_id(self, rng: random.Random) -> str:
        """A request id (Converse bodies carry none of their own)."""
        return token(rng, 8) + "-" + token(rng, 4)

    def read(self, body: Any, path: str, query: str) -> Turn:
        """Tools, toolChoice and the toolResult blocks after the last assistant message."""
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            raise TypeError("1 validation error detected: messages: Member must not be null")
        match = _PATH.search(path)
        messages = [m for m in body["messages"] if isinstance(m, dict)]
        last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
        raw_config = body.get("toolConfig")
        config: dict[str, Any] = raw_config if isinstance(raw_config, dict) else {}
        tools = [
            t["toolSpec"].get("name")
            for t in config.get("tools") or []
            if isinstance(t, dict) and isinstance(t.get("toolSpec"), dict)
        ]
        raw_choice = config.get("toolChoice")
        choice: dict[str, Any] = raw_choice if isinstance(raw_choice, dict) else {}
        forced = choice.get("tool") if isinstance(choice.get("tool"), dict) else None
        return Turn(
            model=unquote(match.group(1)) if match else "",
            stream=bool(match and match.group(2)),
            tools=tuple(str(t) for t in tools if t),
            choice="tool" if forced else ("any" if "any" in choice else "auto"),
            forced_name=forced.get("name") if forced else None,
            results=tuple(
                ToolResult(r.get("toolUseId"), None, _result_text(r.get("content")))
                for m in messages[last + 1 :]
                for r in _blocks(m, "toolResult")
            ),
            prior_calls=tuple(
                PriorCall(u.get("toolUseId"), str(u.get("name")))
                for u in (_blocks(messages[last], "toolUse") if last >= 0 else [])
            ),
        )

    def _usage(self, reply: Reply) -> dict[str, Any]:
        total = reply.input_tokens + reply.output_tokens
        return {
            "inputTokens": reply.input_tokens,
            "outputTokens": reply.output_tokens,
            "totalTokens": total,
        }

    def _headers(self, content_type: str) -> list[tuple[str, str]]:
        request_id = token(self._rng, 8) + "-" + token(self._rng, 4)
        return [("content-type", content_type), ("x-amzn-requestid", request_id)]

    def render(self, reply: Reply, turn: Turn, *, fragment: int, no_ids: bool) -> Rendered:
        """A Converse body, or a ConverseStream event stream."""
        if turn.stream:
            return self._stream(reply, fragment)
        content: list[dict[str, Any]] = []
        if reply.text:
            content.append({"text": reply.text})
        content += [
            {"toolUse": {"toolUseId": c.call_id, "name": c.name, "input": _input(c)}}
            for c in reply.calls
        ]
        body = {
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": "tool_use" if reply.calls else "end_turn",
            "usage": self._usage(reply),
            "metrics": {"latencyMs": 120},
        }
        rendered = json_response(200, body)
        rendered.headers = self._headers("application/json")
        if len(reply.calls) > 1:
            second = reply.calls[1]
            needle = dumps(_input(second)).encode()
            rendered.cut = body_cut(rendered.body, second.call_id.encode(), 0, needle)
        return rendered

    def _stream(self, reply: Reply, fragment: int) -> Rendered:
        events = [event_message("messageStart", {"role": "assistant"})]
        index = 0
        if reply.text:
            for piece in fragments(reply.text, fragment):
                delta = {"contentBlockIndex": 0, "delta": {"text": piece}}
                events.append(event_message("contentBlockDelta", delta))
            events.append(event_message("contentBlockStop", {"contentBlockIndex": 0}))
            index = 1
        mark, cut = 2, None
        for n, call in enumerate(reply.calls):
            start = {"toolUse": {"toolUseId": call.call_id, "name": call.name}}
            events.append(
                event_message("contentBlockStart", {"contentBlockIndex": index, "start": start})
            )
            pieces = fragments(call.arguments, fragment) if call.arguments not in ("", "{}") else []
            for piece in pieces:
                delta = {"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}}
                events.append(event_message("contentBlockDelta", delta))
            if n == 0:
                mark = len(events)
            if n == 1 and pieces:
                cut = args_cut(events, len(events) - len(pieces), len(pieces))
            events.append(event_message("contentBlockStop", {"contentBlockIndex": index}))
            index += 1
        stop = "tool_use" if reply.calls else "end_turn"
        events.append(event_message("messageStop", {"stopReason": stop}))
        metadata = {"usage": self._usage(reply), "metrics": {"latencyMs": 120}}
        events.append(event_message("metadata", metadata))
        headers = self._headers("application/vnd.amazon.eventstream")
        return Rendered(200, headers, events, stream=True, mark=mark, cut=cut)

    def error(
        self, kind: str, status: int, message: str, retry_after: float | None = None
    ) -> Rendered:
        """``{"message": ...}`` with the error code in ``x-amzn-errortype``."""
        code, default = _ERRORS.get(kind, _ERRORS["server_error"])
        rendered = json_response(status, {"message": message or default})
        rendered.headers = [*self._headers("application/json"), ("x-amzn-errortype", code)]
        return rendered

    def stream_error(self, reply: Reply, sequence: int) -> bytes:
        """A ``modelStreamErrorException`` message ending the stream."""
        return exception_message("modelStreamErrorException", "The model stream failed.")


def _input(call: PlannedCall) -> Any:
    """The ``input`` object; with broken arguments, the broken text itself (as a string)."""
    return call.args if call.valid else call.arguments
