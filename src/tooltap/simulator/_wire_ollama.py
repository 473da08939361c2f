"""Ollama's native chat API on the wire (``POST /api/chat``): whole tool calls without ids,
one JSON object a line for a stream (``application/x-ndjson``)."""

from __future__ import annotations

import random
import time
from typing import Any

from ._render import Rendered, dumps, fragments, json_response
from ._scenario import PlannedCall, PriorCall, Reply, ToolResult, Turn, content_text, token

__all__ = ["OllamaWire"]

_ERRORS: dict[str, str] = {
    "invalid_request": "invalid request",
    "not_found": "model not found, try pulling it first",
    "rate_limit": "too many requests",
    "insufficient_balance": "insufficient balance",
    "server_error": "internal server error",
    "overloaded": "server busy, please try again. maximum pending requests exceeded",
}


def _function(call: PlannedCall) -> dict[str, Any]:
    """``function``: the arguments object (broken arguments: the text itself)."""
    return {"name": call.name, "arguments": call.args if call.valid else call.arguments}


class OllamaWire:
    """Ollama chat: no call ids on the wire, NDJSON streams, ``done`` ends a response."""

    dialect = "ollama.chat"

    def call_ids(self, rng: random.Random) -> tuple[str, str]:
        """Ollama sends no ids: these stay the simulator's own."""
        call_id = "call_" + token(rng, 8)
        return call_id, call_id

    def response_id(self, rng: random.Random) -> str:
        """Ollama bodies carry no response id."""
        return token(rng, 12)

    def read(self, body: Any, path: str, query: str) -> Turn:
        """Tools and the ``tool`` messages after the last assistant message (by position)."""
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            raise TypeError("messages: Field required")
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
            stream=body.get("stream", True) is not False,  # Ollama streams unless told not to
            tools=tuple(str(t) for t in tools if t),
            results=tuple(
                ToolResult(None, m.get("tool_name"), content_text(m.get("content", "")))
                for m in messages[last + 1 :]
                if m.get("role") == "tool"
            ),
            prior_calls=tuple(
                PriorCall(None, str((c.get("function") or {}).get("name")))
                for c in (prior if isinstance(prior, list) else [])
                if isinstance(c, dict)
            ),
        )

    def _line(self, reply: Reply, message: dict[str, Any], **rest: Any) -> dict[str, Any]:
        created = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(reply.created))
        return {"model": reply.model, "created_at": created, "message": message, **rest}

    def _done(self, reply: Reply) -> dict[str, Any]:
        return {
            "done": True,
            "done_reason": "stop",
            "total_duration": 1_000_000,
            "prompt_eval_count": reply.input_tokens,
            "eval_count": reply.output_tokens,
        }

    def render(self, reply: Reply, turn: Turn, *, fragment: int, no_ids: bool) -> Rendered:
        """A whole ``ChatResponse``, or one line per piece of text and per call."""
        calls = [{"function": _function(c)} for c in reply.calls]
        if not turn.stream:
            message: dict[str, Any] = {"role": "assistant", "content": reply.text}
            if calls:
                message["tool_calls"] = calls
            return json_response(200, self._line(reply, message, **self._done(reply)))
        lines: list[bytes] = []
        for piece in fragments(reply.text, fragment) if reply.text else []:
            lines.append(self._ndjson(self._line(reply, {"role": "assistant", "content": piece})))
        mark, cut = len(lines) + 1, None
        for n, call in enumerate(calls):
            line = self._ndjson(
                self._line(
                    reply, {"role": "assistant", "content": "", "tool_calls": [call]}, done=False
                )
            )
            if n == 1:  # inside the second call's arguments
                cut = sum(len(x) for x in lines) + line.index(b'"arguments"') + 14
            lines.append(line)
        final = self._line(reply, {"role": "assistant", "content": ""}, **self._done(reply))
        lines.append(self._ndjson(final))
        headers = [("content-type", "application/x-ndjson")]
        return Rendered(200, headers, lines, stream=True, mark=mark, cut=cut)

    def _ndjson(self, value: dict[str, Any]) -> bytes:
        return (dumps(value) + "\n").encode()

    def error(
        self, kind: str, status: int, message: str, retry_after: float | None = None
    ) -> Rendered:
        """``{"error": "..."}``."""
        return json_response(
            status, {"error": message or _ERRORS.get(kind, _ERRORS["server_error"])}
        )

    def stream_error(self, reply: Reply, sequence: int) -> bytes:
        """A line ``{"error": ...}`` ending the stream."""
        return self._ndjson({"error": "an error was encountered while running the model"})
