"""Anthropic Messages: ``tool_use`` blocks from an SSE stream or a whole ``Message`` body.

``tool_use`` blocks are client calls; every other ``*_tool_use`` block (``server_tool_use``,
``mcp_tool_use``...) ran at Anthropic and becomes a ``ServerCall``. ``ToolCall.index`` is the
position among returned calls; ``Problem.call_index`` is the position among client
``tool_use`` blocks (returned or not), so a failed call keeps its place in the response.
Problems about server blocks have ``call_index=None`` and name the block type in ``detail``.

An ``error`` event (``overloaded_error``...) ends the stream with ``complete=False``; so
does an error body, and on Bedrock an exception message (``throttlingException``...).
Tool blocks may interleave: each delta goes to the block its ``index`` names.

The fast path (``Reducer.fast``: an arguments delta taken without decoding it) is
``anthropic_fast``; what a tool block becomes, ``anthropic_blocks``.
"""

from __future__ import annotations

from typing import Any, Final, TypeGuard

from .._json import loads
from ..args import may_exceed
from ..model import Limits, Parsed, Problem, ServerCall, ToolCall, Usage
from ..sse import SSEEvent
from ._layout import Layout
from .anthropic_blocks import DIALECT, PROVIDER, Block, BlockCalls, _str
from .anthropic_fast import LEARN_TRIES, FastPath

__all__ = ["DIALECT", "PROVIDER", "Reducer", "parse_body"]

#: stop_reason values meaning the model was cut off, not done.
INCOMPLETE_STOPS: Final = frozenset({"max_tokens", "model_context_window_exceeded"})
_USAGE_KEYS: Final = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


def _is_tool_block(kind: Any) -> TypeGuard[str]:
    return isinstance(kind, str) and (kind == "tool_use" or kind.endswith("_tool_use"))


class Reducer(FastPath, BlockCalls):
    """Folds one Messages stream's events; calls are emitted at ``content_block_stop``."""

    __slots__ = (
        "_blocks",
        "_calls",
        "_ended",
        "_failed",
        "_finish",
        "_id",
        "_limits",
        "_max_args",
        "_measure",
        "_model",
        "_ordinals",
        "_problems",
        "_server",
        "_usage",
    )

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._max_args = limits.max_argument_bytes
        self._measure = True  # decoded inputs are checked against max_argument_bytes
        self._calls: list[ToolCall] = []
        self._server: list[ServerCall] = []
        self._problems: list[Problem] = []
        self._blocks: dict[int, Block] = {}
        self._by_digits: dict[bytes, Block] = {}  # the same blocks, by their index's digits
        self._ordinals = 0
        self._usage: dict[str, int] = {}
        self._finish: str | None = None
        self._id: str | None = None
        self._model: str | None = None
        self._ended = False  # message_stop or an error event was seen
        self._failed = False  # an error event ended the stream
        self._layouts: list[Layout] = []  # learnt from this stream's events
        self._sample: bytes | None = None  # a delta event the fast path missed, to learn from
        self._tries = LEARN_TRIES

    def fork(self) -> Reducer:
        """An independent copy of what this stream told so far, to go on from the same
        point with other events (the layouts learnt are kept)."""
        twin = Reducer.__new__(Reducer)
        twin._limits, twin._max_args, twin._measure = self._limits, self._max_args, self._measure
        twin._calls, twin._server = self._calls[:], self._server[:]
        twin._problems, twin._usage = self._problems[:], dict(self._usage)
        twin._blocks = {index: block.fork() for index, block in self._blocks.items()}
        twin._by_digits = {b"%d" % index: block for index, block in twin._blocks.items()}
        twin._ordinals, twin._finish = self._ordinals, self._finish
        twin._id, twin._model = self._id, self._model
        twin._ended, twin._failed = self._ended, self._failed
        twin._layouts, twin._sample, twin._tries = self._layouts[:], None, self._tries
        return twin

    def event(self, ev: SSEEvent) -> list[ToolCall]:
        """Take one SSE event; return the call it completes (at most one)."""
        name = ev.event
        sample, self._sample = self._sample, None
        if self._ended or name == "ping":
            return []
        # Text and thinking deltas are most of a stream: skip them without decoding.
        if name == "content_block_delta" and ev.data.find(b"input_json_delta") < 0:
            return []
        try:
            data = loads(ev.data)
        except (ValueError, RecursionError) as exc:
            if ev.terminated:  # an unterminated tail is the cut itself: truncated_stream says it
                self._shape(f"{name}: data is not JSON ({exc})")
            return []
        if not isinstance(data, dict):
            self._shape(f"{name}: data is {type(data).__name__}, not an object")
            return []
        kind = data.get("type")
        if not isinstance(kind, str):
            kind = name
        if sample is not None and kind == "content_block_delta" and ev.terminated:
            self._learn(sample, data)
        return self._dispatch(kind, data)

    def finish(self) -> Parsed:
        """Everything learnt; an unfinished stream adds ``truncated_json``/``truncated_stream``."""
        problems = list(self._problems)
        if not self._ended:
            problems += [self._cut(block) for block in self._blocks.values()]
            problems.append(Problem("truncated_stream", detail="stream ended before message_stop"))
        return self._parsed(problems, complete=self._ended and not self._failed)

    # -- events -------------------------------------------------------------------------

    def whole(self, body: Any, *, measure: bool) -> Parsed:
        """What one whole (non-streamed) body holds; ``measure``: check input sizes."""
        self._measure = measure
        if not isinstance(body, dict):
            self._shape(f"body is {type(body).__name__}, not an object")
            return self._parsed(list(self._problems), complete=True)
        if body.get("type") == "error":
            self._error(body.get("error"))
            return self._parsed(list(self._problems), complete=False)
        self._message(body)
        content = body.get("content")
        if not isinstance(content, list):
            self._shape(f"content is {type(content).__name__}, not a list")
            content = []
        ordinal = 0
        for block in content:
            kind = block.get("type") if isinstance(block, dict) else None
            if not isinstance(block, dict) or not _is_tool_block(kind):
                continue
            index = None
            if kind == "tool_use":
                index, ordinal = ordinal, ordinal + 1
            call_id = block.get("id")
            self._take(
                kind,
                call_id if isinstance(call_id, str) else None,
                block.get("name"),
                index,
                block.get("input"),
                _str(block.get("toolset_name")),
            )
        return self._parsed(list(self._problems), complete=True)

    def _dispatch(self, kind: str, data: dict[str, Any]) -> list[ToolCall]:
        if kind == "content_block_delta":
            self._delta(data)
        elif kind == "content_block_stop":
            index = data.get("index")
            if isinstance(index, int) and (block := self._blocks.pop(index, None)) is not None:
                del self._by_digits[b"%d" % index]
                return self._close(block)
        elif kind == "content_block_start":
            self._start(data)
        elif kind == "message_start":
            message = data.get("message")
            if isinstance(message, dict):
                self._message(message)
        elif kind == "message_delta":
            self._message_delta(data)
        elif kind == "message_stop":
            self._ended = True
            calls: list[ToolCall] = []
            for block in self._blocks.values():  # blocks never stopped: judge what arrived
                calls += self._close(block)
            self._blocks.clear()
            self._by_digits.clear()
            return calls
        elif kind == "error" or kind.endswith("Exception"):  # Bedrock: throttlingException...
            error = data.get("error") if kind == "error" else {**data, "type": kind}
            self._error(error)
            self._ended = self._failed = True
            self._problems += [self._cut(block) for block in self._blocks.values()]
            self._blocks.clear()
            self._by_digits.clear()
        return []

    def _start(self, data: dict[str, Any]) -> None:
        block = data.get("content_block")
        kind = block.get("type") if isinstance(block, dict) else None
        if not isinstance(block, dict) or not _is_tool_block(kind):
            return
        index = data.get("index")
        if not isinstance(index, int):
            self._shape(f"content_block_start: index is {type(index).__name__}")
            return
        ordinal = None
        if kind == "tool_use":
            ordinal = self._ordinals
            self._ordinals += 1
        call_id = block.get("id")
        opened = Block(
            kind,
            call_id if isinstance(call_id, str) else None,
            block.get("name"),
            ordinal,
            block.get("input"),
            _str(block.get("toolset_name")),
        )
        self._blocks[index] = self._by_digits[b"%d" % index] = opened

    def take(self, kind: str, data: dict[str, Any]) -> list[ToolCall]:
        """One event already decoded (``kind``: its type): what ``event`` does with it."""
        return [] if self._ended else self._dispatch(kind, data)

    def json_delta(self, index: Any, fragment: Any) -> None:
        """One decoded ``input_json_delta`` of the block at ``index``."""
        if self._ended:
            return
        block = self._blocks.get(index) if isinstance(index, int) else None
        if block is None or not isinstance(fragment, str):
            self._shape("content_block_delta: input_json_delta outside a tool block")
        elif block.oversized or not block.fragments.add_within(fragment, self._max_args):
            block.add(fragment, self._max_args)

    @property
    def open_blocks(self) -> dict[int, Block]:
        """The open tool blocks by index: the same dict for the stream's life (an item
        reader may keep it), emptied when the stream ends."""
        return self._blocks

    @property
    def max_args(self) -> int:
        """``Limits.max_argument_bytes``: past it a block's arguments are not kept."""
        return self._max_args

    @property
    def ended(self) -> bool:
        """Whether ``message_stop`` ended the stream (not an error event)."""
        return self._ended and not self._failed

    def _delta(self, data: dict[str, Any]) -> None:
        delta = data.get("delta")
        if isinstance(delta, dict) and delta.get("type") == "input_json_delta":
            self.json_delta(data.get("index"), delta.get("partial_json"))

    def _message(self, message: dict[str, Any]) -> None:
        msg_id, model = message.get("id"), message.get("model")
        if isinstance(msg_id, str):
            self._id = msg_id
        if isinstance(model, str):
            self._model = model
        self._take_usage(message.get("usage"))
        self._take_stop(message.get("stop_reason"))

    def _message_delta(self, data: dict[str, Any]) -> None:
        delta = data.get("delta")
        if isinstance(delta, dict):
            self._take_stop(delta.get("stop_reason"))
        self._take_usage(data.get("usage"))

    def _take_stop(self, reason: Any) -> None:
        if isinstance(reason, str):
            self._finish = reason

    def _take_usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        for key in _USAGE_KEYS:
            value = usage.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                self._usage[key] = value

    def _error(self, error: Any) -> None:
        kind = error.get("type") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        self._problems.append(
            Problem(
                "error_event",
                detail=kind if isinstance(kind, str) else "error",
                received=message if isinstance(message, str) else None,
            )
        )

    def _shape(self, detail: str) -> None:
        self._problems.append(Problem("unexpected_shape", detail=detail))

    def _parsed(self, problems: list[Problem], *, complete: bool) -> Parsed:
        if self._finish in INCOMPLETE_STOPS:
            problems.append(Problem("incomplete_response", detail=self._finish or ""))
        return Parsed(
            DIALECT,
            calls=tuple(self._calls),
            server_calls=tuple(self._server),
            problems=tuple(problems),
            finish_reason=self._finish,
            response_id=self._id,
            model=self._model,
            usage=Usage(**self._usage) if self._usage else None,
            complete=complete,
        )


def parse_body(body: Any, limits: Limits, *, size: int | None = None) -> Parsed:
    """Parse one whole Messages body (wire JSON or an SDK ``Message`` dumped to a dict).

    ``size``: the body's encoded length when known; inputs are then measured against
    ``max_argument_bytes`` only if the body is large enough to hold one that long.
    """
    return Reducer(limits).whole(body, measure=size is None or may_exceed(size, limits))
