"""Ollama's native chat API: ``message.tool_calls`` from an NDJSON stream or a whole body.

A stream is one ``ChatResponse`` object per line (``framing="ndjson"``); the last has
``"done": true`` with ``done_reason`` and the token counts. Each call arrives whole in
one line, ``function.arguments`` an object; calls have no ids (``ToolCall.call_id`` is
None: they correlate by content). A line ``{"error": ...}`` is an error event; a stream
that ends before ``done`` is truncated (a cut line holding a call is ``truncated_json``).
"""

from __future__ import annotations

from typing import Any, Final

from .._json import loads
from ..args import coerce_args, decode_arguments, may_exceed, oversized_value
from ..model import Limits, Parsed, Problem, ToolCall
from ..sse import SSEEvent
from ._base import PREVIEW, parsed

__all__ = ["DIALECT", "PROVIDER", "Reducer", "parse_body"]

DIALECT: Final = "ollama.chat"
PROVIDER: Final = "ollama"
#: done_reason values meaning the model was cut off.
INCOMPLETE_STOPS: Final = frozenset({"length"})


class Reducer:
    """Folds one Ollama chat stream's lines; each call is complete in its own line."""

    __slots__ = (
        "_calls",
        "_ended",
        "_failed",
        "_finish",
        "_limits",
        "_measure",
        "_model",
        "_ordinals",
        "_problems",
        "_usage",
    )

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._measure = True
        self._calls: list[ToolCall] = []
        self._problems: list[Problem] = []
        self._ordinals = 0
        self._usage: dict[str, int] = {}
        self._finish: str | None = None
        self._model: str | None = None
        self._ended = False  # a done line or an error was seen
        self._failed = False

    def event(self, ev: SSEEvent) -> list[ToolCall]:
        """Take one line; return the calls it carries."""
        if self._ended:
            return []
        try:
            data = loads(ev.data)
        except (ValueError, RecursionError) as exc:
            if not ev.terminated:  # the cut itself: truncated_stream says it
                if ev.data.find(b'"tool_calls"') >= 0:
                    self._problems.append(
                        Problem(
                            "truncated_json",
                            self._ordinals,
                            detail="stream ended inside a line holding calls",
                            received=ev.data[:PREVIEW].decode("utf-8", "replace"),
                        )
                    )
                return []
            self._shape(f"line is not JSON ({exc})")
            return []
        if not isinstance(data, dict):
            self._shape(f"line is {type(data).__name__}, not an object")
            return []
        return self._line(data)

    def _line(self, data: dict[str, Any]) -> list[ToolCall]:
        error = data.get("error")
        if error is not None:
            self._problems.append(
                Problem("error_event", detail="error", received=str(error)[:2000])
            )
            self._ended = self._failed = True
            return []
        model = data.get("model")
        if isinstance(model, str):
            self._model = model
        calls: list[ToolCall] = []
        message = data.get("message")
        if isinstance(message, dict):
            tool_calls = message.get("tool_calls")
            if isinstance(tool_calls, list):
                for item in tool_calls:
                    calls += self._call(item)
            elif tool_calls is not None:
                self._shape("message.tool_calls is not a list")
        if data.get("done") is True:
            self._ended = True
            reason = data.get("done_reason")
            if isinstance(reason, str):
                self._finish = reason
            for wire, ours in (
                ("prompt_eval_count", "input_tokens"),
                ("eval_count", "output_tokens"),
            ):
                value = data.get(wire)
                if isinstance(value, int) and not isinstance(value, bool):
                    self._usage[ours] = value
        return calls

    def _call(self, item: Any) -> list[ToolCall]:
        index = self._ordinals
        self._ordinals += 1
        fn = item.get("function") if isinstance(item, dict) else None
        if not isinstance(fn, dict):
            self._problems.append(
                Problem("unexpected_shape", index, None, "tool call without a function")
            )
            return []
        name = fn.get("name")
        named = name if isinstance(name, str) and name else None
        call_id = item.get("id") if isinstance(item.get("id"), str) else None
        raw = fn.get("arguments")
        if isinstance(raw, str):  # some servers send JSON text
            args: dict[str, Any] | Problem = decode_arguments(
                raw, limits=self._limits, index=index, call_id=call_id, name=named
            )
        else:
            args = coerce_args(
                raw if raw is not None else {}, index=index, call_id=call_id, name=named
            )
            if self._measure and not isinstance(args, Problem):
                args = (
                    oversized_value(
                        args, limits=self._limits, index=index, call_id=call_id, name=named
                    )
                    or args
                )
        if not isinstance(args, Problem) and named is None:
            args = Problem("unexpected_shape", index, call_id, "tool call without a name")
        if isinstance(args, Problem):
            self._problems.append(args)
            return []
        call = ToolCall(
            named or "",
            args,
            PROVIDER,
            call_id,
            len(self._calls),
            raw if isinstance(raw, str) else None,
            DIALECT,
        )
        self._calls.append(call)
        return [call]

    def finish(self) -> Parsed:
        """Everything learnt; a stream cut before its ``done`` line is truncated."""
        problems = list(self._problems)
        if not self._ended:
            problems.append(Problem("truncated_stream", detail="stream ended before done"))
        return self._parsed(problems, complete=self._ended and not self._failed)

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
            model=self._model,
        )


def parse_body(body: Any, limits: Limits, *, size: int | None = None) -> Parsed:
    """Parse one whole (``"stream": false``) chat response."""
    reducer = Reducer(limits)
    reducer._measure = size is None or may_exceed(size, limits)
    if not isinstance(body, dict):
        reducer._shape(f"body is {type(body).__name__}, not an object")
        return reducer._parsed(list(reducer._problems), complete=True)
    if body:
        reducer._line({"done": True, **body})
    return reducer._parsed(list(reducer._problems), complete=not reducer._failed)
