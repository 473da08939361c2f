"""Cohere v2 Chat: ``message.tool_calls`` from an SSE stream or a whole ``/v2/chat`` body.

A call has an ``id`` and ``function.arguments`` as JSON text. Streamed, it opens with a
``tool-call-start`` event (``delta.message.tool_calls``: id, name, maybe a first
fragment), grows with ``tool-call-delta`` fragments and completes at ``tool-call-end``
(each names its call by ``index``). ``message-end`` carries ``finish_reason`` and usage;
a stream without it is truncated. ``finish_reason`` ``ERROR``/``TIMEOUT`` and an
``error`` event are error events (the response is not complete).
"""

from __future__ import annotations

import json
from typing import Any, Final

from .._json import loads
from ..args import decode_arguments, may_exceed
from ..model import Limits, Parsed, Problem, ToolCall
from ..sse import SSEEvent
from ._base import PREVIEW, cut_call, parsed
from ._fragments import Fragments

__all__ = ["DIALECT", "PROVIDER", "Reducer", "parse_body"]

DIALECT: Final = "cohere.chat"
PROVIDER: Final = "cohere"
INCOMPLETE_STOPS: Final = frozenset({"MAX_TOKENS"})
FAILED_STOPS: Final = frozenset({"ERROR", "TIMEOUT"})


class _Open:
    __slots__ = ("big", "call_id", "fragments", "name", "ordinal")

    def __init__(self, call_id: str | None, name: Any, ordinal: int) -> None:
        self.call_id = call_id
        self.name = name
        self.ordinal = ordinal
        self.fragments = Fragments()
        self.big = False

    def add(self, fragment: str, limit: int) -> None:
        if not self.big:
            self.fragments.add(fragment)
            self.big = self.fragments.size > limit


def _message(data: dict[str, Any]) -> dict[str, Any]:
    delta = data.get("delta")
    message = delta.get("message") if isinstance(delta, dict) else None
    return message if isinstance(message, dict) else {}


class Reducer:
    """Folds one v2 chat stream's events; a call is emitted at its ``tool-call-end``."""

    __slots__ = (
        "_calls",
        "_ended",
        "_failed",
        "_finish",
        "_id",
        "_limits",
        "_measure",
        "_open",
        "_ordinals",
        "_problems",
        "_usage",
    )

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._measure = True
        self._calls: list[ToolCall] = []
        self._problems: list[Problem] = []
        self._open: dict[int, _Open] = {}
        self._ordinals = 0
        self._usage: dict[str, int] = {}
        self._finish: str | None = None
        self._id: str | None = None
        self._ended = False
        self._failed = False

    def event(self, ev: SSEEvent) -> list[ToolCall]:
        """Take one SSE event; return the call it completes (at most one)."""
        if self._ended or ev.data == b"[DONE]":
            return []
        try:
            data = loads(ev.data)
        except (ValueError, RecursionError) as exc:
            if ev.terminated:
                self._shape(f"{ev.event}: data is not JSON ({exc})")
            return []
        if not isinstance(data, dict):
            self._shape(f"{ev.event}: data is {type(data).__name__}, not an object")
            return []
        kind = data.get("type")
        kind = kind if isinstance(kind, str) else ev.event
        if kind == "tool-call-delta":
            block = self._at(data)
            call = _message(data).get("tool_calls")
            fragment = _function(call).get("arguments") if isinstance(call, dict) else None
            if block is not None and isinstance(fragment, str):
                block.add(fragment, self._limits.max_argument_bytes)
        elif kind == "tool-call-end":
            index = data.get("index")
            block = self._open.pop(index, None) if isinstance(index, int) else None
            if block is not None:
                return self._close(block)
        elif kind == "tool-call-start":
            self._start(data)
        elif kind == "message-start":
            msg_id = data.get("id")
            if isinstance(msg_id, str):
                self._id = msg_id
        elif kind == "message-end":
            delta = data.get("delta")
            delta = delta if isinstance(delta, dict) else {}
            self._end(delta.get("finish_reason"), delta.get("usage"))
            calls: list[ToolCall] = []
            for block in self._open.values():
                calls += self._close(block)
            self._open.clear()
            return calls
        elif kind == "error":
            message = data.get("message")
            self._error("error", message if isinstance(message, str) else None)
        return []

    def finish(self) -> Parsed:
        """Everything learnt; a stream cut before ``message-end`` adds its problems."""
        problems = list(self._problems)
        if not self._ended:
            problems += [self._cut(b) for b in self._open.values()]
            problems.append(Problem("truncated_stream", detail="stream ended before message-end"))
        return self._parsed(problems, complete=self._ended and not self._failed)

    def _at(self, data: dict[str, Any]) -> _Open | None:
        index = data.get("index")
        block = self._open.get(index) if isinstance(index, int) else None
        if block is None:
            self._shape(f"{data.get('type')}: no open tool call at index {index!r}")
        return block

    def _start(self, data: dict[str, Any]) -> None:
        index = data.get("index")
        if not isinstance(index, int):
            self._shape(f"tool-call-start: index is {type(index).__name__}")
            return
        call = _message(data).get("tool_calls")
        call = call if isinstance(call, dict) else {}
        fn = _function(call)
        call_id = call.get("id")
        block = _Open(call_id if isinstance(call_id, str) else None, fn.get("name"), self._ordinals)
        self._ordinals += 1
        first = fn.get("arguments")
        if isinstance(first, str) and first:
            block.add(first, self._limits.max_argument_bytes)
        self._open[index] = block

    def _end(self, reason: Any, usage: Any) -> None:
        self._ended = True
        if isinstance(reason, str):
            self._finish = reason
            if reason in FAILED_STOPS:
                self._error(reason, None)
        tokens = usage.get("tokens") if isinstance(usage, dict) else None
        if not isinstance(tokens, dict) and isinstance(usage, dict):
            tokens = usage.get("billed_units")
        if isinstance(tokens, dict):
            for key in ("input_tokens", "output_tokens"):
                value = tokens.get(key)
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    self._usage[key] = int(value)

    def _error(self, detail: str, message: str | None) -> None:
        self._problems.append(Problem("error_event", detail=detail, received=message))
        self._ended = self._failed = True
        self._problems += [self._cut(b) for b in self._open.values()]
        self._open.clear()

    def _close(self, block: _Open) -> list[ToolCall]:
        text, limits, index = block.fragments.text(), self._limits, block.ordinal
        name = block.name if isinstance(block.name, str) else None
        if block.big:
            return self._add(
                Problem(
                    "oversized_arguments",
                    index,
                    block.call_id,
                    f"over {limits.max_argument_bytes} characters",
                    name,
                    text[:PREVIEW],
                ),
                block,
                text,
            )
        args = decode_arguments(
            text if text.strip() else "{}",
            limits=limits,
            index=index,
            call_id=block.call_id,
            name=name,
        )
        return self._add(args, block, text)

    def _add(self, args: dict[str, Any] | Problem, block: _Open, raw: str) -> list[ToolCall]:
        name = block.name
        if not isinstance(args, Problem) and not (isinstance(name, str) and name):
            args = Problem(
                "unexpected_shape", block.ordinal, block.call_id, "tool call without a name"
            )
        if isinstance(args, Problem):
            self._problems.append(args)
            return []
        call = ToolCall(name, args, PROVIDER, block.call_id, len(self._calls), raw or None, DIALECT)
        self._calls.append(call)
        return [call]

    def _cut(self, block: _Open) -> Problem:
        text = block.fragments.text()
        return cut_call(
            block.ordinal, block.call_id, block.name, text, big=block.big, inside="call"
        )

    def _shape(self, detail: str) -> None:
        self._problems.append(Problem("unexpected_shape", detail=detail))

    def _parsed(self, problems: list[Problem], *, complete: bool) -> Parsed:
        return parsed(
            DIALECT,
            self._calls,
            problems,
            finish=self._finish,
            incomplete=INCOMPLETE_STOPS,
            usage=self._usage,
            complete=complete,
            response_id=self._id,
        )


def _function(call: dict[str, Any]) -> dict[str, Any]:
    fn = call.get("function")
    return fn if isinstance(fn, dict) else {}


def parse_body(body: Any, limits: Limits, *, size: int | None = None) -> Parsed:
    """Parse one whole v2 chat response (wire JSON or the SDK's response dumped to a dict)."""
    reducer = Reducer(limits)
    reducer._measure = size is None or may_exceed(size, limits)
    if not isinstance(body, dict):
        reducer._shape(f"body is {type(body).__name__}, not an object")
        return reducer._parsed(list(reducer._problems), complete=True)
    msg_id = body.get("id")
    reducer._id = msg_id if isinstance(msg_id, str) else None
    message = body.get("message")
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    for item in calls if isinstance(calls, list) else ():
        item = item if isinstance(item, dict) else {}
        fn = _function(item)
        call_id = item.get("id")
        block = _Open(
            call_id if isinstance(call_id, str) else None, fn.get("name"), reducer._ordinals
        )
        reducer._ordinals += 1
        arguments = fn.get("arguments")
        if isinstance(arguments, dict):  # an SDK object dumped: already decoded
            arguments = json.dumps(arguments)
        if isinstance(arguments, str):
            block.add(arguments, limits.max_argument_bytes)
        reducer._close(block)
    if body:
        reducer._end(body.get("finish_reason"), body.get("usage"))
    return reducer._parsed(list(reducer._problems), complete=not reducer._failed)
