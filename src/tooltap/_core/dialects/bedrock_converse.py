"""AWS Bedrock Converse: ``toolUse`` blocks from a ConverseStream or a whole Converse body.

A whole body holds ``output.message.content[]``; a ``{"toolUse": {toolUseId, name,
input}}`` block is a call, its ``input`` an object. A stream is AWS event-stream
messages (see ``eventstream``), one per event: ``messageStart``, ``contentBlockStart``
(``start.toolUse`` opens a call at ``contentBlockIndex``), ``contentBlockDelta``
(``delta.toolUse.input``: a fragment of the arguments' JSON text), ``contentBlockStop``
(the call is complete), ``messageStop`` (``stopReason``), ``metadata`` (usage). An
exception message (``throttlingException``, ``modelStreamErrorException``...) ends the
stream incomplete with an ``error_event``; so does a stream cut before ``messageStop``.

``ToolCall.index`` and ``Problem.call_index`` are the position among ``toolUse`` blocks.
Converse bodies carry no response id and no model (the model is in the request path).
"""

from __future__ import annotations

from typing import Any, Final

from .._json import loads
from ..args import coerce_args, decode_arguments, may_exceed, oversized_value
from ..model import Limits, Parsed, Problem, ToolCall
from ..sse import SSEEvent
from ._base import PREVIEW, cut_call, parsed
from ._fragments import Fragments

__all__ = ["DIALECT", "PROVIDER", "Reducer", "parse_body"]

DIALECT: Final = "bedrock.converse"
PROVIDER: Final = "aws.bedrock"
#: stopReason values meaning the model was cut off, not done.
INCOMPLETE_STOPS: Final = frozenset({"max_tokens", "model_context_window_exceeded"})
#: The exception events a ConverseStream may end with.
EXCEPTIONS: Final = frozenset(
    {
        "internalServerException",
        "modelStreamErrorException",
        "validationException",
        "throttlingException",
        "serviceUnavailableException",
    }
)
_USAGE: Final = (("inputTokens", "input_tokens"), ("outputTokens", "output_tokens"))
_CACHE: Final = (
    ("cacheReadInputTokens", "cache_read_input_tokens"),
    ("cacheWriteInputTokens", "cache_creation_input_tokens"),
)


class _Block:
    """One open ``toolUse`` content block of a stream."""

    __slots__ = ("big", "call_id", "fragments", "name", "ordinal")

    def __init__(self, call_id: str | None, name: Any, ordinal: int) -> None:
        self.call_id = call_id
        self.name = name
        self.ordinal = ordinal
        self.fragments = Fragments()
        self.big = False

    def add(self, fragment: str, limit: int) -> None:
        if self.big:
            return
        self.fragments.add(fragment)
        if self.fragments.size > limit:
            self.big = True


class Reducer:
    """Folds one ConverseStream's events; a call is emitted at its ``contentBlockStop``."""

    __slots__ = (
        "_blocks",
        "_calls",
        "_ended",
        "_failed",
        "_finish",
        "_limits",
        "_measure",
        "_ordinals",
        "_problems",
        "_usage",
    )

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._measure = True
        self._calls: list[ToolCall] = []
        self._problems: list[Problem] = []
        self._blocks: dict[int, _Block] = {}
        self._ordinals = 0
        self._usage: dict[str, int] = {}
        self._finish: str | None = None
        self._ended = False  # messageStop or an exception was seen
        self._failed = False  # an exception ended the stream

    def event(self, ev: SSEEvent) -> list[ToolCall]:
        """Take one event-stream message (as an event); return the call it completes."""
        name = ev.event
        if self._failed:
            return []
        try:
            data = loads(ev.data)
        except (ValueError, RecursionError) as exc:
            self._shape(f"{name}: payload is not JSON ({exc})")
            return []
        if not isinstance(data, dict):
            self._shape(f"{name}: payload is {type(data).__name__}, not an object")
            return []
        if name in EXCEPTIONS or name.endswith("Exception"):
            self._exception(name, data)
            return []
        if name == "contentBlockDelta":
            self._delta(data)
        elif name == "contentBlockStop":
            index = data.get("contentBlockIndex")
            block = self._blocks.pop(index, None) if isinstance(index, int) else None
            if block is not None:
                return self._close(block)
        elif name == "contentBlockStart":
            self._start(data)
        elif name == "messageStop":
            self._ended = True
            self._take_stop(data.get("stopReason"))
            calls: list[ToolCall] = []
            for block in self._blocks.values():  # blocks never stopped: judge what arrived
                calls += self._close(block)
            self._blocks.clear()
            return calls
        elif name == "metadata":
            self._take_usage(data.get("usage"))
        return []

    def finish(self) -> Parsed:
        """Everything learnt; a stream cut before ``messageStop`` adds its problems."""
        problems = list(self._problems)
        if not self._ended:
            problems += [self._cut(block) for block in self._blocks.values()]
            problems.append(Problem("truncated_stream", detail="stream ended before messageStop"))
        return self._parsed(problems, complete=self._ended and not self._failed)

    # -- events -------------------------------------------------------------------------

    def _start(self, data: dict[str, Any]) -> None:
        start = data.get("start")
        tool = start.get("toolUse") if isinstance(start, dict) else None
        if not isinstance(tool, dict):
            return
        index = data.get("contentBlockIndex")
        if not isinstance(index, int):
            self._shape(f"contentBlockStart: contentBlockIndex is {type(index).__name__}")
            return
        call_id = tool.get("toolUseId")
        self._blocks[index] = _Block(
            call_id if isinstance(call_id, str) else None, tool.get("name"), self._ordinals
        )
        self._ordinals += 1

    def _delta(self, data: dict[str, Any]) -> None:
        delta = data.get("delta")
        tool = delta.get("toolUse") if isinstance(delta, dict) else None
        if not isinstance(tool, dict):
            return  # text, reasoning, citations
        index = data.get("contentBlockIndex")
        block = self._blocks.get(index) if isinstance(index, int) else None
        fragment = tool.get("input")
        if block is None or not isinstance(fragment, str):
            self._shape("contentBlockDelta: toolUse input outside a toolUse block")
            return
        block.add(fragment, self._limits.max_argument_bytes)

    def _exception(self, name: str, data: dict[str, Any]) -> None:
        message = data.get("message") or data.get("Message")
        self._problems.append(
            Problem(
                "error_event",
                detail=name,
                received=message if isinstance(message, str) else None,
            )
        )
        self._ended = self._failed = True
        self._problems += [self._cut(block) for block in self._blocks.values()]
        self._blocks.clear()

    def _take_stop(self, reason: Any) -> None:
        if isinstance(reason, str):
            self._finish = reason

    def _take_usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        for wire, ours in (*_USAGE, *_CACHE):
            value = usage.get(wire)
            if isinstance(value, int) and not isinstance(value, bool):
                self._usage[ours] = value

    # -- calls --------------------------------------------------------------------------

    def _close(self, block: _Block) -> list[ToolCall]:
        limits, text, index = self._limits, block.fragments.text(), block.ordinal
        name = block.name if isinstance(block.name, str) else None
        if block.big:
            detail = f"over {limits.max_argument_bytes} characters"
            problem = Problem(
                "oversized_arguments", index, block.call_id, detail, name, text[:PREVIEW]
            )
            return self._add(block.call_id, block.name, index, problem, None)
        if not text.strip():  # a tool without parameters sends no delta
            return self._take(block.call_id, block.name, index, {})
        args = decode_arguments(text, limits=limits, index=index, call_id=block.call_id, name=name)
        return self._add(block.call_id, block.name, index, args, text)

    def _take(self, call_id: str | None, name: Any, index: int, value: Any) -> list[ToolCall]:
        """A block whose input arrived decoded (a whole body)."""
        named = name if isinstance(name, str) else None
        args = coerce_args(value, index=index, call_id=call_id, name=named)
        if self._measure and not isinstance(args, Problem):
            args = (
                oversized_value(args, limits=self._limits, index=index, call_id=call_id, name=named)
                or args
            )
        return self._add(call_id, name, index, args, None)

    def _add(
        self,
        call_id: str | None,
        name: Any,
        index: int,
        args: dict[str, Any] | Problem,
        raw: str | None,
    ) -> list[ToolCall]:
        if not isinstance(args, Problem) and not (isinstance(name, str) and name):
            args = Problem("unexpected_shape", index, call_id, "toolUse block without a name")
        if isinstance(args, Problem):
            self._problems.append(args)
            return []
        call = ToolCall(name, args, PROVIDER, call_id, len(self._calls), raw or None, DIALECT)
        self._calls.append(call)
        return [call]

    def _cut(self, block: _Block) -> Problem:
        text = block.fragments.text()
        return cut_call(
            block.ordinal, block.call_id, block.name, text, big=block.big, inside="block"
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
        )


def parse_body(body: Any, limits: Limits, *, size: int | None = None) -> Parsed:
    """Parse one whole Converse body (the wire JSON, or boto3's response dict)."""
    reducer = Reducer(limits)
    reducer._measure = size is None or may_exceed(size, limits)
    if not isinstance(body, dict):
        reducer._shape(f"body is {type(body).__name__}, not an object")
        return reducer._parsed(list(reducer._problems), complete=True)
    reducer._take_stop(body.get("stopReason"))
    reducer._take_usage(body.get("usage"))
    output = body.get("output")
    message = output.get("message") if isinstance(output, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        if body:
            reducer._shape("output.message.content is not a list")
        content = []
    ordinal = 0
    for block in content:
        tool = block.get("toolUse") if isinstance(block, dict) else None
        if not isinstance(tool, dict):
            continue
        call_id = tool.get("toolUseId")
        reducer._take(
            call_id if isinstance(call_id, str) else None,
            tool.get("name"),
            ordinal,
            tool.get("input"),
        )
        ordinal += 1
    return reducer._parsed(list(reducer._problems), complete=True)
