"""OpenAI Responses: ``function_call`` output items from an SSE stream or a whole ``Response``.

Choices made here:

- Only ``function_call`` items are calls (``call_id`` is the call id, not the item ``id``).
  ``custom_tool_call`` items (free-form text input) become ``unexpected_shape`` problems;
  every other item type (``message``, ``reasoning``, ``web_search_call``...) is ignored.
- A call finishes at ``response.function_call_arguments.done`` (when name and call id are
  known) or ``response.output_item.done``; the ``.done`` payload's arguments and name win
  over the deltas, and a disagreement is an ``unexpected_shape`` problem. Calls are emitted
  in ``output_index`` order: a call waits for earlier calls still being received.
- ``response.completed`` / ``response.incomplete`` / ``response.failed`` / ``error`` end the
  stream; ``failed`` and ``error`` with ``complete=False`` (a whole body too, with an
  ``error`` or status ``failed``). The terminal response's ``output`` fills in calls the
  stream did not finish. After an ``incomplete``/``failed``/``error`` end, calls still open
  become ``truncated_json``. A trailing ``data: [DONE]`` (OpenRouter) is ignored.
- A resumed stream (``starting_after``) may begin inside a call: a call first seen by a
  delta has its deltas ignored and its ``.done`` arguments taken whole.
- Calls may interleave (deltas of two items alternating): each event goes to the call its
  ``item_id`` (else ``output_index``) names, in the reducer and in the fast path.
- ``finish_reason`` is the response ``status`` (``completed``, ``failed``, ``cancelled``),
  or for ``incomplete`` the ``incomplete_details.reason`` (``max_output_tokens``...).

The fast path (``Reducer.fast``: an arguments delta taken without decoding it) is
``openai_responses_fast``.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Any, Final

from ..model import Limits, Parsed, Problem, ToolCall, Usage
from ..sse import SSEEvent
from ._layout import Layout
from ._openai import (
    NOT_JSON,
    Collector,
    PendingCall,
    load_event,
    plain_int,
    text_or_none,
    usage_of,
)
from .openai_responses_fast import LEARN_TRIES, FastPath

__all__ = ["Reducer", "parse_body"]

DIALECT: Final = "openai.responses"
#: Output item types that are tool calls, and the field holding their input.
CALL_ITEMS: Final = {"function_call": "arguments", "custom_tool_call": "input"}
#: Response statuses that end a response (and become ``finish_reason``).
TERMINAL: Final = frozenset({"completed", "incomplete", "failed", "cancelled"})
_ARGS_DELTA: Final = "response.function_call_arguments.delta"
_CALL_EVENTS: Final = frozenset(
    {
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.custom_tool_call_input.delta",
        "response.function_call_arguments.done",
        "response.custom_tool_call_input.done",
        "response.output_item.done",
    }
)


class Reducer(FastPath):
    """Folds one Responses stream; calls are emitted when their item is done."""

    __slots__ = (
        "_at",
        "_complete",
        "_failed",
        "_head",
        "_items",
        "_limit",
        "_next_pos",
        "_out",
        "_parsed",
        "_partial",
        "_queue",
    )

    def __init__(self, limits: Limits) -> None:
        self._out = Collector(limits, DIALECT)
        self._limit = limits.max_argument_bytes
        self._items: dict[str, PendingCall] = {}  # by item id
        self._at: dict[int, PendingCall] = {}  # by output_index
        self._queue: list[PendingCall] = []  # by output order; [_head:] not released yet
        self._head = 0
        self._next_pos = 0
        self._complete = False
        self._failed = False  # an error or a failed status ended the response
        self._parsed: Parsed | None = None
        #: Calls first seen by a delta (a resumed stream joins them late): their deltas are
        #: a part only, and their ``.done`` arguments are taken as they are.
        self._partial: set[int] = set()
        self._layouts: list[Layout] = []  # learnt from this stream's events
        self._sample: bytes | None = None  # a delta event the fast path missed, to learn from
        self._tries = LEARN_TRIES

    def fork(self) -> Reducer:
        """An independent copy of what this stream told so far, to go on from the same
        point with other events (the layouts learnt are kept)."""
        twin = Reducer.__new__(Reducer)
        twins: dict[int, PendingCall] = {}
        twin._out = self._out.fork()
        twin._limit = self._limit
        twin._items = {key: call.fork(twins) for key, call in self._items.items()}
        twin._at = {index: call.fork(twins) for index, call in self._at.items()}
        twin._queue = [call.fork(twins) for call in self._queue]
        twin._head, twin._next_pos = self._head, self._next_pos
        twin._complete, twin._failed, twin._parsed = self._complete, self._failed, self._parsed
        # (``_partial`` holds ids: the ids of the copies; a call no table holds is gone)
        twin._partial = {id(twins[key]) for key in self._partial if key in twins}
        twin._layouts, twin._sample, twin._tries = self._layouts[:], None, self._tries
        return twin

    def event(self, ev: SSEEvent) -> list[ToolCall]:
        """Take one SSE event; return the calls it completed, in output order."""
        payload = load_event(ev)
        sample, self._sample = self._sample, None
        if not isinstance(payload, dict):
            if payload is not NOT_JSON:
                self._out.shape(f"{ev.event} event data is {type(payload).__name__}")
            elif ev.terminated and ev.data.strip() != b"[DONE]":
                self._out.shape(f"{ev.event} event data is not JSON")
            return []
        kind = payload.get("type")
        if not isinstance(kind, str):
            kind = ev.event
        if sample is not None and kind == _ARGS_DELTA and ev.terminated:
            self._learn(sample, payload)
        return self.take(kind, payload)

    def take(self, kind: str, payload: dict[str, Any]) -> list[ToolCall]:
        """One event already decoded (``kind``: its type): what ``event`` does with it."""
        handler = _HANDLERS.get(kind)
        if handler is None or (self._complete and kind in _CALL_EVENTS):
            return []  # call events after the end are not part of the response
        handler(self, payload)
        return self._release()

    def handles(self, kind: str) -> bool:
        """Whether events of type ``kind`` change anything (else ``take`` ignores them)."""
        return kind in _HANDLERS

    def args_delta(self, item_id: str, fragment: str) -> bool:
        """An arguments delta of the open call of item ``item_id``, taken as ``take`` would;
        False, unchanged, when no such call is open or the stream joined it late (``take``
        keeps none of that call's deltas)."""
        call = self._items.get(item_id)
        if call is None or call.finished or (self._partial and id(call) in self._partial):
            return False
        if call.oversized or not call.fragments.add_within(fragment, self._limit):
            call.add(fragment, self._limit)
        return True

    @property
    def ended(self) -> bool:
        """Whether a terminal event ended the response (not an error, nor a failure)."""
        return self._complete and not self._failed

    def finish(self) -> Parsed:
        """End of stream: without a terminal event, open calls become ``truncated_json``."""
        if self._parsed is None:
            complete = self._complete
            if not complete:
                detail = "stream ended before response.completed"
                self._out.problems.append(Problem("truncated_stream", detail=detail))
                self._cut()
            self._release()
            self._parsed = self._out.parsed(complete and not self._failed)
        return self._parsed

    def _started(self, payload: dict[str, Any]) -> None:
        resp = payload.get("response")
        if isinstance(resp, dict):
            self._out.meta(resp)

    def _item_added(self, payload: dict[str, Any]) -> None:
        item = payload.get("item")
        if isinstance(item, dict) and _is_call(item):
            call = self._open(item.get("id"), payload.get("output_index"), item["type"])
            call.name = call.name or text_or_none(item.get("name"))
            call.call_id = call.call_id or text_or_none(item.get("call_id"))
            call.add(item.get(CALL_ITEMS[item["type"]]), self._limit)

    def _delta(self, payload: dict[str, Any]) -> None:
        known = len(self._queue)
        call = self._find(payload)
        if len(self._queue) > known:  # its item was added before this stream began
            self._partial.add(id(call))
        if id(call) in self._partial:
            return
        if call.finished:
            if not call.late:
                call.late = True
                self._out.shape(f"item {call.call_id or call.name!r} got a delta after it was done")
            return
        call.add(payload.get("delta"), self._limit)

    def _args_done(self, payload: dict[str, Any]) -> None:
        call = self._find(payload)
        if call.finished:
            return
        self._adopt(call, payload.get("name"), None, payload.get(CALL_ITEMS[_item_type(payload)]))
        if call.name and call.call_id:  # else wait for output_item.done to name it
            call.finished = True

    def _item_done(self, payload: dict[str, Any]) -> None:
        item = payload.get("item")
        if not isinstance(item, dict) or not _is_call(item):
            return
        call = self._open(item.get("id"), payload.get("output_index"), item["type"])
        if not call.finished:
            self._adopt(
                call, item.get("name"), item.get("call_id"), item.get(CALL_ITEMS[item["type"]])
            )
            call.truncated = item.get("status", "completed") != "completed"
            call.finished = True

    def _terminal(self, payload: dict[str, Any]) -> None:
        self._complete = True
        resp = payload.get("response")
        if not isinstance(resp, dict):
            self._out.shape(f"{payload.get('type')} without a response object")
            resp = {}
        self._out.meta(resp)
        usage = _usage(resp.get("usage"))
        if usage is not None:
            self._out.usage = usage
        status = resp.get("status")
        if not isinstance(status, str):
            status = str(payload.get("type")).removeprefix("response.")
        _note_status(self._out, status, resp)
        output = resp.get("output")
        for pos, item in enumerate(output if isinstance(output, list) else ()):
            if isinstance(item, dict) and _is_call(item):
                key = CALL_ITEMS[item["type"]]
                call = self._open(item.get("id"), pos, item["type"])
                if not call.finished:
                    self._adopt(call, item.get("name"), item.get("call_id"), item.get(key))
                    call.truncated = item.get("status", status) != "completed"
                    call.finished = True
        self._failed = self._failed or status == "failed"
        if status != "completed":
            self._cut()
        for call in self._queue[self._head :]:
            call.finished = True

    def _error(self, payload: dict[str, Any]) -> None:
        err = payload.get("error")
        self._out.error(err if isinstance(err, dict) else payload)
        self._complete = self._failed = True
        self._cut()

    def _cut(self) -> None:
        """The response ended: calls not finished are truncated."""
        for call in self._queue[self._head :]:
            if not call.finished:
                call.truncated = call.finished = True

    def _open(self, item_id: Any, output_index: Any, item_type: Any) -> PendingCall:
        """The call of an item, created (in output order) the first time it is seen."""
        key = text_or_none(item_id)
        pos = plain_int(output_index)
        call = self._items.get(key) if key is not None else None
        if call is None and key is None and pos is not None:
            call = self._at.get(pos)
        if call is not None:
            return call
        call = PendingCall(kind="function" if item_type == "function_call" else str(item_type))
        call.pos = pos if pos is not None else self._next_pos
        self._next_pos = max(self._next_pos, call.pos + 1)
        if key is not None:
            self._items[key] = call
        if pos is not None:
            self._at.setdefault(pos, call)
        bisect.insort(self._queue, call, lo=self._head, key=_position)
        return call

    def _find(self, payload: dict[str, Any]) -> PendingCall:
        """The call a delta/done event is about (by ``item_id``, else ``output_index``)."""
        return self._open(payload.get("item_id"), payload.get("output_index"), _item_type(payload))

    def _adopt(self, call: PendingCall, name: Any, call_id: Any, text: Any) -> None:
        if not call.adopt(name, call_id, text):
            detail = "streamed argument deltas differ from the final arguments"
            self._out.problems.append(
                Problem("unexpected_shape", call_id=call.call_id, detail=detail, name=call.name)
            )

    def _release(self) -> list[ToolCall]:
        """Settle finished calls, stopping at the first one still being received."""
        out: list[ToolCall] = []
        queue = self._queue
        while self._head < len(queue) and queue[self._head].finished:
            tc = self._out.settle(queue[self._head])
            self._head += 1
            if tc is not None:
                out.append(tc)
        return out


#: The reducer's handler of each event type it reads.
_HANDLERS: Final[dict[str, Callable[[Reducer, dict[str, Any]], None]]] = {
    "response.created": Reducer._started,
    "response.in_progress": Reducer._started,
    "response.queued": Reducer._started,
    "response.output_item.added": Reducer._item_added,
    "response.function_call_arguments.delta": Reducer._delta,
    "response.custom_tool_call_input.delta": Reducer._delta,
    "response.function_call_arguments.done": Reducer._args_done,
    "response.custom_tool_call_input.done": Reducer._args_done,
    "response.output_item.done": Reducer._item_done,
    "response.completed": Reducer._terminal,
    "response.incomplete": Reducer._terminal,
    "response.failed": Reducer._terminal,
    "error": Reducer._error,
}


def _is_call(item: dict[str, Any]) -> bool:
    """Whether an output item is a tool call (its type may be any JSON value)."""
    kind = item.get("type")
    return isinstance(kind, str) and kind in CALL_ITEMS


def _position(call: PendingCall) -> int:
    return call.pos


def _item_type(payload: dict[str, Any]) -> str:
    """The item type a delta/done event implies."""
    return "custom_tool_call" if "custom_tool_call" in str(payload.get("type")) else "function_call"


def _usage(raw: Any) -> Usage | None:
    return usage_of(raw, "input_tokens", "output_tokens", "input_tokens_details")


def _note_status(out: Collector, status: Any, resp: dict[str, Any]) -> None:
    """``finish_reason`` and the problems a terminal status implies."""
    if not isinstance(status, str) or status not in TERMINAL:
        return
    out.finish_reason = status
    if status == "incomplete":
        details = resp.get("incomplete_details")
        reason = text_or_none(details.get("reason")) if isinstance(details, dict) else None
        out.finish_reason = reason or status
        out.incomplete(reason or status)
    elif status == "failed":
        out.error(resp.get("error") or "response failed")


def parse_body(body: Any, limits: Limits, *, size: int | None = None) -> Parsed:
    """Parse a whole ``Response`` body (or an error body).

    ``size`` (the encoded length) is not needed: arguments arrive as JSON text, measured as such.
    """
    out = Collector(limits, DIALECT)
    if not isinstance(body, dict):
        out.shape(f"body is {type(body).__name__}, not an object")
        return out.parsed(True)
    failed = body.get("error") is not None or body.get("status") == "failed"
    if body.get("error") is not None:
        out.error(body["error"])
    out.meta(body)
    out.usage = _usage(body.get("usage"))
    _note_status(out, body.get("status"), body)
    output = body.get("output")
    if output is not None and not isinstance(output, list):
        out.shape(f"output is {type(output).__name__}, not a list")
        output = None
    for item in output or ():
        if not isinstance(item, dict):
            out.shape(f"output item is {type(item).__name__}, not an object")
        elif _is_call(item):
            out.settle(_item_call(item))
    return out.parsed(not failed)


def _item_call(item: dict[str, Any]) -> PendingCall:
    """A whole ``function_call`` (or ``custom_tool_call``) item as a finished call."""
    kind = item["type"]
    call = PendingCall(
        text_or_none(item.get("call_id")),
        text_or_none(item.get("name")),
        "function" if kind == "function_call" else kind,
    )
    args = item.get(CALL_ITEMS[kind])
    if isinstance(args, str):
        call.final_text = args
    elif args is not None:
        call.value = args
    call.truncated = item.get("status", "completed") not in ("completed", None)
    call.finished = True
    return call
