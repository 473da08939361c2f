"""Hostile input for the parsers: Hypothesis strategies and byte generators.

``events(dialect)`` draws streams that look like the dialect (its event names and field
names, in the providers' compact JSON, so the reducers' fast paths are reached too) with
any value replaced, at any depth, by arbitrary JSON or removed. The generators below
build inputs far larger than the configured limits, lazily, from one reused chunk.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

from tooltap.simulator._eventstream import encode

# --- arbitrary JSON, and templates that degrade into it --------------------------------

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_NAMES = st.sampled_from(["lookup", "get_weather", "", "a" * 70, "bad name!", "ñandú"])
_IDS = st.sampled_from(["call_1", "call_2", "toolu_1", "fc_1", "", "x" * 300]) | st.text(max_size=6)
_SMALL_INT = st.integers(min_value=-2, max_value=5)
_FRAGMENT = st.sampled_from(
    ['{"key', '":"', "height", '"}', "{", "}", "[", "\\u00", '\\"', ""]
) | st.text(max_size=12)


def _tpl(value: Any) -> st.SearchStrategy[Any]:
    """A strategy from a template: dicts and lists recurse; any node may become junk."""
    if isinstance(value, st.SearchStrategy):
        exact = value
    elif isinstance(value, dict):
        exact = st.fixed_dictionaries(
            {},
            optional={k: _tpl(v) for k, v in value.items()},
        ) | st.fixed_dictionaries({k: _tpl(v) for k, v in value.items()})
    elif isinstance(value, list):
        exact = st.lists(_tpl(value[0]), max_size=3)
    else:
        exact = st.just(value)
    return st.one_of(exact, exact, exact, JSON)


_CHAT = {
    "id": _IDS,
    "model": st.just("gpt"),
    "choices": [
        {
            "index": _SMALL_INT,
            "delta": {
                "role": st.just("assistant"),
                "content": st.text(max_size=8) | st.none(),
                "tool_calls": [
                    {
                        "index": _SMALL_INT,
                        "id": _IDS,
                        "type": st.sampled_from(["function", "custom"]),
                        "function": {"name": _NAMES, "arguments": _FRAGMENT | st.none()},
                    }
                ],
                "function_call": {"name": _NAMES, "arguments": _FRAGMENT},
            },
            "finish_reason": st.sampled_from(["tool_calls", "stop", "length", None]),
        }
    ],
    "usage": {"prompt_tokens": _SMALL_INT, "completion_tokens": _SMALL_INT},
    "error": {"message": st.text(max_size=8), "code": _SMALL_INT},
}
_RESPONSES_ITEM = {
    "type": st.sampled_from(["function_call", "custom_tool_call", "message"]),
    "id": _IDS,
    "call_id": _IDS,
    "name": _NAMES,
    "arguments": _FRAGMENT,
    "status": st.sampled_from(["completed", "incomplete", "in_progress"]),
}
_RESPONSES = {
    "type": st.sampled_from(
        [
            "response.created",
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.completed",
            "response.incomplete",
            "response.failed",
            "error",
        ]
    ),
    "output_index": _SMALL_INT,
    "item_id": _IDS,
    "item": _RESPONSES_ITEM,
    "delta": _FRAGMENT,
    "arguments": _FRAGMENT,
    "response": {
        "id": _IDS,
        "status": st.sampled_from(["completed", "incomplete", "failed"]),
        "output": [_RESPONSES_ITEM],
        "usage": {"input_tokens": _SMALL_INT, "output_tokens": _SMALL_INT},
    },
}
_ANTHROPIC = {
    "type": st.sampled_from(
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
            "ping",
            "error",
        ]
    ),
    "index": _SMALL_INT,
    "delta": {
        "type": st.sampled_from(["input_json_delta", "text_delta", "thinking_delta"]),
        "partial_json": _FRAGMENT,
        "stop_reason": st.sampled_from(["tool_use", "end_turn", "max_tokens"]),
    },
    "content_block": {
        "type": st.sampled_from(["tool_use", "server_tool_use", "text"]),
        "id": _IDS,
        "name": _NAMES,
        "input": JSON,
    },
    "message": {"id": _IDS, "model": st.just("claude"), "usage": {"input_tokens": _SMALL_INT}},
    "error": {
        "type": st.sampled_from(["overloaded_error", "api_error"]),
        "message": st.text(max_size=8),
    },
}
_GOOGLE = {
    "candidates": [
        {
            "content": {
                "role": st.just("model"),
                "parts": [
                    {
                        "text": st.text(max_size=8),
                        "thought": st.booleans(),
                        "functionCall": {
                            "name": _NAMES,
                            "id": _IDS,
                            "args": JSON,
                            "partialArgs": [
                                {
                                    "jsonPath": st.sampled_from(
                                        ["$.key", "$.a[0].b", "$", "$.x[99999]"]
                                    ),
                                    "stringValue": _FRAGMENT,
                                    "numberValue": _SMALL_INT,
                                    "willContinue": st.booleans(),
                                }
                            ],
                            "willContinue": st.booleans(),
                        },
                    }
                ],
            },
            "finishReason": st.sampled_from(["STOP", "MAX_TOKENS", "MALFORMED_FUNCTION_CALL"]),
        }
    ],
    "usageMetadata": {"promptTokenCount": _SMALL_INT},
    "responseId": _IDS,
    "modelVersion": st.just("gemini"),
    "error": {"code": _SMALL_INT, "message": st.text(max_size=8)},
}
_CONVERSE_TOOL = {"toolUseId": _IDS, "name": _NAMES, "input": _FRAGMENT | JSON}
_CONVERSE = st.one_of(
    _tpl({"messageStart": {"role": st.just("assistant")}}),
    _tpl(
        {
            "contentBlockStart": {
                "contentBlockIndex": _SMALL_INT,
                "start": {"toolUse": _CONVERSE_TOOL},
            }
        }
    ),
    _tpl(
        {
            "contentBlockDelta": {
                "contentBlockIndex": _SMALL_INT,
                "delta": {"toolUse": {"input": _FRAGMENT}, "text": st.text(max_size=8)},
            }
        }
    ),
    _tpl({"contentBlockStop": {"contentBlockIndex": _SMALL_INT}}),
    _tpl({"messageStop": {"stopReason": st.sampled_from(["tool_use", "end_turn", "max_tokens"])}}),
    _tpl({"metadata": {"usage": {"inputTokens": _SMALL_INT, "outputTokens": _SMALL_INT}}}),
    _tpl({"throttlingException": {"message": st.text(max_size=8)}}),
)
_OLLAMA = {
    "model": st.just("llama"),
    "message": {
        "role": st.just("assistant"),
        "content": st.text(max_size=8),
        "tool_calls": [{"function": {"name": _NAMES, "arguments": JSON | _FRAGMENT}}],
    },
    "done": st.booleans(),
    "done_reason": st.sampled_from(["stop", "length"]),
    "eval_count": _SMALL_INT,
    "error": st.text(max_size=8),
}
_COHERE_CALL = {
    "id": _IDS,
    "type": st.just("function"),
    "function": {"name": _NAMES, "arguments": _FRAGMENT},
}
_COHERE = {
    "type": st.sampled_from(
        ["message-start", "tool-call-start", "tool-call-delta", "tool-call-end", "content-delta",
         "message-end", "error"]
    ),
    "index": _SMALL_INT,
    "id": _IDS,
    "delta": {
        "message": {"tool_calls": _COHERE_CALL, "content": {"text": st.text(max_size=8)}},
        "finish_reason": st.sampled_from(["TOOL_CALL", "COMPLETE", "ERROR", "MAX_TOKENS"]),
    },
    "message": st.text(max_size=8),
}  # fmt: skip
_PAYLOADS = {
    "openai.chat": _tpl(_CHAT),
    "openai.responses": _tpl(_RESPONSES),
    "anthropic.messages": _tpl(_ANTHROPIC),
    "google.genai": _tpl(_GOOGLE),
    "bedrock.converse": _CONVERSE,
    "ollama.chat": _tpl(_OLLAMA),
    "cohere.chat": _tpl(_COHERE),
}
#: The dialects whose streams are not SSE, and their framing.
FRAMING = {"bedrock.converse": "eventstream", "ollama.chat": "ndjson"}


def _render(dialect: str, payload: Any, name: str | None) -> bytes:
    if dialect == "bedrock.converse":  # one message; a one-key object names its event
        if isinstance(payload, dict) and len(payload) == 1:
            name, payload = next(iter(payload.items()))
        kind = "exception" if str(name).endswith("Exception") else "event"
        key = ":exception-type" if kind == "exception" else ":event-type"
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8", "surrogatepass")
        return encode({key: str(name), ":message-type": kind}, body)
    data = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    if dialect == "ollama.chat":
        return (data.replace("\n", "\\n") + "\n").encode("utf-8", "surrogatepass")
    if (
        name is None
        and isinstance(payload, dict)
        and dialect in ("anthropic.messages", "openai.responses", "cohere.chat")
    ):
        kind = payload.get("type")
        name = kind if isinstance(kind, str) else None
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {data}\n\n".encode("utf-8", "surrogatepass")


@st.composite
def events(draw: st.DrawFn, dialect: str) -> bytes:
    """A whole SSE body of ``dialect``-shaped events (plus the odd raw line)."""
    out: list[bytes] = []
    for _ in range(draw(st.integers(min_value=0, max_value=8))):
        choice = draw(st.integers(min_value=0, max_value=9))
        if choice == 0:
            out.append(
                draw(st.sampled_from([b"data: [DONE]\n\n", b": ping\n\n", b"\n", b"data:\n\n"]))
            )
        elif choice == 1:
            out.append(draw(st.binary(max_size=40)))
        else:
            name = draw(st.none() | st.sampled_from(["error", "message", "content_block_delta"]))
            out.append(_render(dialect, draw(_PAYLOADS[dialect]), name if choice == 2 else None))
    return b"".join(out)


def cuts(body: bytes) -> st.SearchStrategy[list[bytes]]:
    """``body`` split at random points."""
    points = st.lists(st.integers(min_value=0, max_value=len(body)), max_size=8)
    return points.map(lambda ps: _split(body, sorted(set(ps))))


def _split(body: bytes, points: list[int]) -> list[bytes]:
    edges = [0, *points, len(body)]
    return [body[a:b] for a, b in itertools.pairwise(edges)]


# --- oversized input, generated lazily ---------------------------------------------------


def repeat(head: bytes, piece: bytes, total: int) -> Iterator[bytes]:
    """``head`` then ``piece`` again and again (the same object) until ``total`` bytes."""
    yield head
    sent = len(head)
    while sent < total:
        yield piece
        sent += len(piece)


def _delta(dialect: str, fragment: str) -> bytes:
    """One event that appends ``fragment`` to the arguments of call 0."""
    if dialect == "openai.chat":
        call = {"index": 0, "function": {"arguments": fragment}}
        return _render(dialect, {"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}, None)
    if dialect == "openai.responses":
        payload = {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "output_index": 0,
            "delta": fragment,
        }
        return _render(dialect, payload, None)
    if dialect == "anthropic.messages":
        payload = {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": fragment},
        }
        return _render(dialect, payload, None)
    if dialect == "cohere.chat":
        piece = {"function": {"arguments": fragment}}
        payload = {
            "type": "tool-call-delta",
            "index": 0,
            "delta": {"message": {"tool_calls": piece}},
        }
        return _render(dialect, payload, None)
    piece = {"jsonPath": "$.text", "stringValue": fragment, "willContinue": True}
    call = {"partialArgs": [piece], "willContinue": True}  # Vertex: later pieces are unnamed
    return _google(call)


def _google(call: dict[str, Any], **candidate: Any) -> bytes:
    parts = [{"functionCall": call}]
    return _render(
        "google.genai", {"candidates": [{"content": {"parts": parts}, **candidate}]}, None
    )


def call_start(dialect: str) -> bytes:
    """The events that open call 0 (``lookup``) of a response."""
    if dialect == "openai.chat":
        call = {
            "index": 0,
            "id": "call_1",
            "type": "function",
            "function": {"name": "lookup", "arguments": ""},
        }
        return _render(
            dialect, {"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}, None
        )
    if dialect == "openai.responses":
        item = {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "lookup",
            "arguments": "",
        }
        return _render(
            dialect, {"type": "response.output_item.added", "output_index": 0, "item": item}, None
        )
    if dialect == "anthropic.messages":
        start = {"type": "message_start", "message": {"id": "msg_1", "model": "claude"}}
        block = {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}
        open_block = {"type": "content_block_start", "index": 0, "content_block": block}
        return _render(dialect, start, None) + _render(dialect, open_block, None)
    if dialect == "cohere.chat":
        call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": ""}}
        payload = {
            "type": "tool-call-start",
            "index": 0,
            "delta": {"message": {"tool_calls": call}},
        }
        return _render(dialect, {"type": "message-start", "id": "r"}, None) + _render(
            dialect, payload, None
        )
    return _google({"name": "lookup", "id": "call_1", "willContinue": True})


def call_end(dialect: str) -> bytes:
    """The events that finish call 0 and the response."""
    if dialect == "openai.chat":
        return (
            _render(
                dialect,
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
                None,
            )
            + b"data: [DONE]\n\n"
        )
    if dialect == "openai.responses":
        item = {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "lookup",
            "status": "completed",
        }
        done = {"type": "response.output_item.done", "output_index": 0, "item": item}
        completed = {
            "type": "response.completed",
            "response": {"id": "r", "status": "completed", "output": []},
        }
        return _render(dialect, done, None) + _render(dialect, completed, None)
    if dialect == "anthropic.messages":
        stop = {"type": "content_block_stop", "index": 0}
        delta = {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}
        return (
            _render(dialect, stop, None)
            + _render(dialect, delta, None)
            + _render(dialect, {"type": "message_stop"}, None)
        )
    if dialect == "cohere.chat":
        end = {"type": "message-end", "delta": {"finish_reason": "TOOL_CALL"}}
        return _render(dialect, {"type": "tool-call-end", "index": 0}, None) + _render(
            dialect, end, None
        )
    piece = {"jsonPath": "$.text", "stringValue": "", "willContinue": False}
    return _google({"partialArgs": [piece], "willContinue": False}, finishReason="STOP")


def huge_arguments(dialect: str, total: int) -> Iterator[bytes]:
    """A call whose argument text grows to ``total`` bytes, one 8 KiB fragment per event."""
    yield from repeat(
        call_start(dialect) + _delta(dialect, '{"text":"'), _delta(dialect, "a" * 8192), total
    )
    yield call_end(dialect)


def deep_json(dialect: str, depth: int) -> bytes:
    """An event nested ``depth`` deep, and a call whose arguments are nested ``depth`` deep."""
    deep_event = b"data: " + b"[" * depth + b"]" * depth + b"\n\n"
    deep_args = '{"a":' + "[" * depth + "]" * depth + "}"
    return call_start(dialect) + deep_event + _delta(dialect, deep_args)
