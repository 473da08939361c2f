"""Anthropic Messages: ``tool_use`` blocks from an SSE stream or a whole ``Message`` body.

``tool_use`` blocks are client calls; every other ``*_tool_use`` block (``server_tool_use``,
``mcp_tool_use``...) ran at Anthropic and becomes a ``ServerCall``. ``ToolCall.index`` is the
position among returned calls; ``Problem.call_index`` is the position among client
``tool_use`` blocks (returned or not), so a failed call keeps its place in the response.
Problems about server blocks have ``call_index=None`` and name the block type in ``detail``.

An ``error`` event (``overloaded_error``...) ends the stream with ``complete=False``; so
does an error body, and on Bedrock an exception message (``throttlingException``...).
Tool blocks may interleave: each delta goes to the block its ``index`` names.

Fast path (``Reducer.fast``): an ``input_json_delta`` of an open tool block (the one its
``index`` names), in Anthropic's compact shape (trailing padding allowed) or in the layout
learnt from the stream's first such event that missed it (any key order, spacing,
``event:`` line or not: ``_layout``), has its fragment appended still escaped; text and
thinking deltas are skipped; neither is decoded.
"""

from __future__ import annotations

import re
from typing import Any, Final, TypeGuard

from .._json import RAW_STRING, loads, unescape, valid_utf8
from ..args import coerce_args, decode_arguments, may_exceed, oversized_value
from ..model import Limits, Parsed, Problem, ServerCall, ToolCall, Usage
from ..problems import ProblemKind
from ..sse import SSEEvent
from ._fragments import Fragments, append_escaped
from ._layout import Kind, Layout, learn, one_event

__all__ = ["Reducer", "parse_body"]

DIALECT: Final = "anthropic.messages"
PROVIDER: Final = "anthropic"
#: stop_reason values meaning the model was cut off, not done.
INCOMPLETE_STOPS: Final = frozenset({"max_tokens", "model_context_window_exceeded"})
_USAGE_KEYS: Final = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
_PREVIEW: Final = 256
_JSON_DELTA: Final = b'"input_json_delta"'
#: The values of an arguments delta that vary from event to event (groups of a layout).
_DELTA_KEYS: Final[dict[str, Kind]] = {"index": "int", "partial_json": "string"}
_LEARN_TRIES: Final = 3
_DELTA_EVENT: Final = b"event: content_block_delta\ndata:"
_INDEX_HEAD: Final = _DELTA_EVENT + b' {"type":"content_block_delta","index":'
_ARGS_MID: Final = b',"delta":{"type":"input_json_delta","partial_json":"'
#: An arguments delta: the block index (group 1, at most ten digits), the fragment (group 2),
#: still escaped, its closing quote and the two braces, with Anthropic's padding, then the
#: blank line that ends the event.
_ARGS_DELTA: Final = re.compile(
    re.escape(_INDEX_HEAD)
    + rb"(0|[1-9][0-9]{0,9})"
    + re.escape(_ARGS_MID)
    + b"("
    + RAW_STRING
    + rb')"\}[ \t]*+\}[ \t]*+\n\n'
)


def _is_tool_block(kind: Any) -> TypeGuard[str]:
    return isinstance(kind, str) and (kind == "tool_use" or kind.endswith("_tool_use"))


class _Block:
    """One open ``*_tool_use`` content block of a stream."""

    __slots__ = (
        "call_id",
        "fragments",
        "kind",
        "name",
        "ordinal",
        "oversized",
        "start_input",
        "toolset",
    )

    def __init__(
        self,
        kind: str,
        call_id: str | None,
        name: Any,
        ordinal: int | None,
        start_input: Any,
        toolset: str | None = None,
    ) -> None:
        self.kind = kind
        self.toolset = toolset
        self.call_id = call_id
        self.name = name
        self.ordinal = ordinal  # position among client tool_use blocks; None for server blocks
        self.start_input = start_input
        self.fragments = Fragments()
        self.oversized = False  # over limits.max_argument_bytes: fragments no longer kept

    def add(self, fragment: str, limit: int) -> None:
        """Append one decoded fragment; past ``limit`` the block is ``oversized`` (it keeps
        that one)."""
        if self.oversized:
            return
        fragments = self.fragments
        if fragments.size + len(fragment) > limit:
            fragments.exact()
        fragments.add(fragment)
        if fragments.size > limit:
            self.oversized = True

    def text(self) -> str:
        return self.fragments.text()


class Reducer:
    """Folds one Messages stream's events; calls are emitted at ``content_block_stop``."""

    __slots__ = (
        "_blocks",
        "_by_digits",
        "_calls",
        "_ended",
        "_failed",
        "_finish",
        "_id",
        "_layouts",
        "_limits",
        "_max_args",
        "_measure",
        "_model",
        "_ordinals",
        "_problems",
        "_sample",
        "_server",
        "_tries",
        "_usage",
    )

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._max_args = limits.max_argument_bytes
        self._measure = True  # decoded inputs are checked against max_argument_bytes
        self._calls: list[ToolCall] = []
        self._server: list[ServerCall] = []
        self._problems: list[Problem] = []
        self._blocks: dict[int, _Block] = {}
        self._by_digits: dict[bytes, _Block] = {}  # the same blocks, by their index's digits
        self._ordinals = 0
        self._usage: dict[str, int] = {}
        self._finish: str | None = None
        self._id: str | None = None
        self._model: str | None = None
        self._ended = False  # message_stop or an error event was seen
        self._failed = False  # an error event ended the stream
        self._layouts: list[Layout] = []  # learnt from this stream's events
        self._sample: bytes | None = None  # a delta event the fast path missed, to learn from
        self._tries = _LEARN_TRIES

    def fast(self, chunk: bytes) -> bool:
        """Apply a one-event chunk without decoding it when its effect is certain.

        An argument delta of an open tool block (the one its index names) is appended
        still escaped; a one-line text or thinking delta is
        skipped, as ``event`` skips it. Anything else: False, nothing changed.
        """
        delta = _ARGS_DELTA.fullmatch(chunk)  # the whole event: no other line
        if delta is not None:
            digits, raw = delta[1], delta[2]
        elif (
            chunk.startswith(_DELTA_EVENT)
            and chunk.find(b"\n", len(_DELTA_EVENT)) == len(chunk) - 2
            and chunk[-1] == 10  # one data line, then the blank line
            and 13 not in chunk  # no CR (an int operand: no bytes search set-up)
            and chunk.find(b"input_json_delta") < 0
        ):
            return True
        else:
            for layout in self._layouts:
                if delta := layout.pattern.fullmatch(chunk):
                    break
            else:
                if self._tries and chunk.find(_JSON_DELTA) >= 0 and one_event(chunk):
                    self._sample = chunk  # the full path decodes it next: learn from it
                return False
            digits, raw = delta[layout.groups["index"]], delta[layout.groups["partial_json"]]
        block = self._by_digits.get(digits)  # (no int to build per event)
        if block is None or not (raw.isascii() or valid_utf8(raw)):
            return False
        append_escaped(block, raw, self._max_args)
        return True

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

    def _learn(self, sample: bytes, data: dict[str, Any]) -> None:
        """Learn the layout of ``sample``, the arguments delta ``data`` was decoded from."""
        self._tries -= 1
        layout = learn(sample, _DELTA_KEYS)
        match = layout.pattern.fullmatch(sample) if layout is not None else None
        delta, index = data.get("delta"), data.get("index")
        if layout is None or match is None or not isinstance(delta, dict):
            return
        digits, raw = match[layout.groups["index"]], match[layout.groups["partial_json"]]
        if (
            delta.get("type") == "input_json_delta"
            and isinstance(index, int)
            and digits == b"%d" % index
            and valid_utf8(raw)
            and unescape(raw) == delta.get("partial_json")
        ):
            self._layouts.append(layout)

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
        opened = _Block(
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
            return
        if block.oversized or not block.fragments.add_within(fragment, self._max_args):
            block.add(fragment, self._max_args)

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

    # -- calls --------------------------------------------------------------------------

    def _close(self, block: _Block) -> list[ToolCall]:
        """A block is over: turn what arrived into a call, a server call or a Problem."""
        index, limits, text = block.ordinal, self._limits, block.text()
        if block.oversized:
            detail = f"over {limits.max_argument_bytes} characters"
            oversized = Problem(
                "oversized_arguments",
                index,
                block.call_id,
                detail,
                _str(block.name),
                text[:_PREVIEW],
            )
            return self._add(block.kind, block.call_id, block.name, index, oversized, None)
        if text.strip():
            args = decode_arguments(
                text, limits=limits, index=index, call_id=block.call_id, name=_str(block.name)
            )
            return self._add(block.kind, block.call_id, block.name, index, args, text,
                             block.toolset)  # fmt: skip
        return self._take(block.kind, block.call_id, block.name, index, block.start_input,
                          block.toolset)  # fmt: skip

    def _take(
        self,
        kind: str,
        call_id: str | None,
        name: Any,
        index: int | None,
        value: Any,
        toolset: str | None = None,
    ) -> list[ToolCall]:
        """A block whose input arrived as a decoded value (a body, or a start with no deltas)."""
        args = coerce_args(value, index=index, call_id=call_id, name=_str(name))
        if self._measure and not isinstance(args, Problem):
            oversized = oversized_value(
                args, limits=self._limits, index=index, call_id=call_id, name=_str(name)
            )
            args = oversized or args
        return self._add(kind, call_id, name, index, args, None, toolset)

    def _add(
        self,
        kind: str,
        call_id: str | None,
        name: Any,
        index: int | None,
        args: dict[str, Any] | Problem,
        raw: str | None,
        toolset: str | None = None,
    ) -> list[ToolCall]:
        if not isinstance(args, Problem) and not (isinstance(name, str) and name):
            args = Problem("unexpected_shape", index, call_id, f"{kind} block without a name")
        if isinstance(args, Problem):
            if kind != "tool_use":
                args = _server_problem(args, kind)
            self._problems.append(args)
            return []
        if kind != "tool_use":
            self._server.append(ServerCall(name, args, call_id, kind, len(self._server)))
            return []
        call = ToolCall(name, args, PROVIDER, call_id, len(self._calls), raw or None, DIALECT,
                        toolset)  # fmt: skip
        self._calls.append(call)
        return [call]

    def _cut(self, block: _Block) -> Problem:
        """The Problem for a block the stream never finished."""
        kind: ProblemKind = "oversized_arguments" if block.oversized else "truncated_json"
        text = block.text()
        problem = Problem(
            kind,
            block.ordinal,
            block.call_id,
            "stream ended inside the block",
            _str(block.name),
            text[:_PREVIEW] if block.oversized else text,
        )
        return problem if block.kind == "tool_use" else _server_problem(problem, block.kind)

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


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _server_problem(problem: Problem, kind: str) -> Problem:
    """Server blocks are not client calls: no ``call_index``, block type in ``detail``."""
    return Problem(
        problem.kind,
        None,
        problem.call_id,
        f"{kind}: {problem.detail}",
        problem.name,
        problem.received,
    )
