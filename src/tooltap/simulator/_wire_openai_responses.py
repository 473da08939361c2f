"""OpenAI Responses on the wire (``POST /v1/responses``): output items and typed SSE events.

A request with ``background: true`` is answered ``queued`` (or, streamed, with its events)
and stored: ``GET /v1/responses/{id}`` reads it back (``_stored``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from ._render import Rendered, args_cut, body_cut, dumps, fragments, json_response, sse
from ._scenario import PriorCall, Reply, ToolResult, Turn, content_text, token
from ._stored import StoredResponses
from ._wire_openai import openai_choice, openai_error

__all__ = ["ResponsesWire"]

_HEX = "0123456789abcdef"
_MODEL_ITEMS = ("function_call", "reasoning", "custom_tool_call")


def _usage(reply: Reply) -> dict[str, Any]:
    return {
        "input_tokens": reply.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": reply.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": reply.input_tokens + reply.output_tokens,
    }


def _is_model_item(item: dict[str, Any]) -> bool:
    return item.get("type") in _MODEL_ITEMS or item.get("role") == "assistant"


class ResponsesWire:
    """Responses: ``fc_`` items carrying ``call_`` ids, ``event:`` + ``data:`` SSE."""

    dialect = "openai.responses"

    def __init__(self) -> None:
        self._rng = random.Random()
        self._stored = StoredResponses()

    def call_ids(self, rng: random.Random) -> tuple[str, str]:
        """(``call_`` + 24 characters, ``fc_`` + 48 hex digits)."""
        return "call_" + token(rng, 24), "fc_" + token(rng, 48, _HEX)

    def response_id(self, rng: random.Random) -> str:
        """``resp_`` + 48 hex digits."""
        return "resp_" + token(rng, 48, _HEX)

    def read(self, body: Any, path: str, query: str) -> Turn:
        """Tools, tool_choice and the ``function_call_output`` items after the last model item."""
        if not isinstance(body, dict) or "input" not in body:
            raise TypeError("Missing required parameter: 'input'.")
        raw = body["input"]
        items = [i for i in raw if isinstance(i, dict)] if isinstance(raw, list) else []
        last = max((n for n, i in enumerate(items) if _is_model_item(i)), default=-1)
        first = last
        while first > 0 and _is_model_item(items[first - 1]):
            first -= 1
        tools = body.get("tools") or []
        choice, forced = openai_choice(body.get("tool_choice"))
        return Turn(
            model=str(body.get("model") or ""),
            stream=bool(body.get("stream")),
            tools=tuple(str(t.get("name")) for t in tools if isinstance(t, dict) and t.get("name")),
            choice=choice,
            forced_name=forced,
            results=tuple(
                ToolResult(i.get("call_id"), None, content_text(i.get("output")))
                for i in items[last + 1 :]
                if i.get("type") == "function_call_output"
            ),
            prior_calls=tuple(
                PriorCall(i.get("call_id"), str(i.get("name")))
                for i in items[max(first, 0) : last + 1]
                if i.get("type") == "function_call"
            ),
            echo={
                "tools": tools,
                "tool_choice": body.get("tool_choice", "auto"),
                "previous_response_id": body.get("previous_response_id"),
                "instructions": body.get("instructions"),
                "background": body.get("background") is True,
            },
        )

    def _response(
        self, reply: Reply, turn: Turn, status: str, output: list[dict[str, Any]]
    ) -> dict[str, Any]:
        return {
            "id": reply.response_id,
            "object": "response",
            "created_at": reply.created,
            "status": status,
            "background": bool(turn.echo.get("background")),
            "error": None,
            "incomplete_details": None,
            "instructions": turn.echo.get("instructions"),
            "max_output_tokens": None,
            "model": reply.model,
            "output": output,
            "parallel_tool_calls": True,
            "previous_response_id": turn.echo.get("previous_response_id"),
            "reasoning": {"effort": None, "summary": None},
            "service_tier": "default",
            "store": True,
            "temperature": 1.0,
            "text": {"format": {"type": "text"}},
            "tool_choice": turn.echo.get("tool_choice", "auto"),
            "tools": turn.echo.get("tools", []),
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": _usage(reply) if status == "completed" else None,
            "user": None,
            "metadata": {},
        }

    def _message_id(self, reply: Reply) -> str:
        return "msg_" + reply.response_id.removeprefix("resp_")

    def _output(self, reply: Reply) -> list[dict[str, Any]]:
        output: list[dict[str, Any]] = [
            {
                "type": "function_call",
                "id": c.item_id,
                "call_id": c.call_id,
                "name": c.name,
                "arguments": c.arguments,
                "status": "completed",
            }
            for c in reply.calls
        ]
        if reply.text:
            part = {"type": "output_text", "annotations": [], "logprobs": [], "text": reply.text}
            output.append(
                {
                    "type": "message",
                    "id": self._message_id(reply),
                    "status": "completed",
                    "role": "assistant",
                    "content": [part],
                }
            )
        return output

    def render(self, reply: Reply, turn: Turn, *, fragment: int, no_ids: bool) -> Rendered:
        """A ``response`` object, or its event stream."""
        if turn.echo.get("background"):
            return self._background(reply, turn, fragment)
        if turn.stream:
            return self._stream(reply, turn, fragment)
        rendered = json_response(200, self._response(reply, turn, "completed", self._output(reply)))
        if len(reply.calls) > 1:
            second = reply.calls[1]
            rendered.cut = body_cut(
                rendered.body, second.item_id.encode(), 0, dumps(second.arguments).encode()
            )
        return rendered

    def _background(self, reply: Reply, turn: Turn, fragment: int) -> Rendered:
        """Store the whole answer; return it streamed, or the response ``queued``."""
        stream = self._stream(reply, turn, fragment)
        output = self._output(reply)
        self._stored.put(
            reply.response_id,
            stream.chunks,
            self._response(reply, turn, "in_progress", []),
            self._response(reply, turn, "completed", output),
        )
        if turn.stream:
            return stream
        return json_response(200, self._response(reply, turn, "queued", []))

    def retrieve(self, response_id: str, query: str) -> Rendered:
        """``GET /v1/responses/{id}``: a stored response polled, or its stream resumed."""
        rendered = self._stored.read(response_id, query)
        if rendered is None:
            return self.error("not_found", 404, f"No response found with id '{response_id}'.")
        return rendered

    def _stream(self, reply: Reply, turn: Turn, fragment: int) -> Rendered:
        events: list[bytes] = []

        def emit(kind: str, **fields: Any) -> None:
            events.append(sse({"type": kind, "sequence_number": len(events), **fields}, kind))

        emit("response.created", response=self._response(reply, turn, "in_progress", []))
        emit("response.in_progress", response=self._response(reply, turn, "in_progress", []))
        mark, cut = 2, None
        output = self._output(reply)
        for index, call in enumerate(reply.calls):
            item = output[index]
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "arguments": "", "status": "in_progress"},
            )
            pieces = fragments(call.arguments, fragment)
            for piece in pieces:
                emit(
                    "response.function_call_arguments.delta",
                    item_id=call.item_id,
                    output_index=index,
                    delta=piece,
                )
            first = len(events) - len(pieces)
            if index == 1:
                cut = args_cut(events, first, len(pieces))
            mark = first + 1 if index == 0 else mark
            emit(
                "response.function_call_arguments.done",
                item_id=call.item_id,
                output_index=index,
                arguments=call.arguments,
            )
            emit("response.output_item.done", output_index=index, item=item)
        if reply.text:
            self._text_events(reply, len(reply.calls), fragment, emit)
            mark = 5 if not reply.calls else mark
        emit("response.completed", response=self._response(reply, turn, "completed", output))
        headers = [("content-type", "text/event-stream; charset=utf-8")]
        return Rendered(200, headers, events, stream=True, mark=mark, cut=cut)

    def _text_events(
        self, reply: Reply, index: int, fragment: int, emit: Callable[..., None]
    ) -> None:
        item_id = self._message_id(reply)
        part: dict[str, Any] = {
            "type": "output_text",
            "annotations": [],
            "logprobs": [],
            "text": "",
        }
        item = {"type": "message", "id": item_id, "status": "in_progress", "role": "assistant"}
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        emit("response.output_item.added", output_index=index, item={**item, "content": []})
        emit("response.content_part.added", **where, part=part)
        for piece in fragments(reply.text, fragment):
            emit("response.output_text.delta", **where, delta=piece, logprobs=[])
        emit("response.output_text.done", **where, text=reply.text, logprobs=[])
        done_part = {**part, "text": reply.text}
        emit("response.content_part.done", **where, part=done_part)
        emit(
            "response.output_item.done",
            output_index=index,
            item={**item, "status": "completed", "content": [done_part]},
        )

    def error(
        self, kind: str, status: int, message: str, retry_after: float | None = None
    ) -> Rendered:
        """OpenAI's error body."""
        return openai_error(kind, status, message, self._rng)

    def stream_error(self, reply: Reply, sequence: int) -> bytes:
        """``response.failed`` with a server_error."""
        turn = Turn(model=reply.model)
        response = self._response(reply, turn, "failed", [])
        response["error"] = {
            "code": "server_error",
            "message": "The server had an error while processing your request. Sorry about that!",
        }
        data = {"type": "response.failed", "sequence_number": sequence, "response": response}
        return sse(data, "response.failed")
