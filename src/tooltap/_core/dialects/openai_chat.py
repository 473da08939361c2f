"""OpenAI Chat Completions: tool calls from ``chat.completion.chunk`` streams and whole bodies.

Choices made here (the wire leaves them open):

- ``n > 1``: the calls of every choice are kept, ordered by choice index, then by position
  within the choice. A call of choice *k* is emitted once choices ``0..k-1`` have their
  ``finish_reason`` (with ``n == 1`` that is as soon as the call finishes).
- Each delta goes to the call its ``index`` names, so calls may interleave (index 0, 1, 0,
  1: some OpenAI-compatible servers and gateways; the SDK accumulates by index too). A call
  is finished when its choice ends, or earlier, when another call starts while its
  arguments already are a complete JSON object (the usual, sequential case: it is emitted
  then). At a cut, unfinished calls become ``truncated_json``, except earlier calls that
  received no arguments at all.
- ``tool_calls[].index`` missing (Gemini's OpenAI-compatible endpoint omits it): a delta with
  a new ``id`` starts a call, one without continues the last call of its choice. An index
  that is present but not an int is an ``unexpected_shape`` problem.
- A legacy ``function_call`` is one call with ``call_id=None``; one whose ``name`` and
  ``arguments`` are both empty (Snowflake Cortex sends it next to real ``tool_calls``) is
  absent, in a body and as a delta.
- Non-function tool calls (``type: "custom"``, free-form text input) are not calls: they
  become ``unexpected_shape`` problems that keep the name, id and input.
- ``finish_reason`` ``length`` / ``content_filter`` adds an ``incomplete_response`` problem.
- ``complete``: ``[DONE]`` or every choice seen has a ``finish_reason``. An error that ends
  the stream (``event: error``, or an ``error`` chunk without ``choices``) ends it with
  ``complete=False``; an ``error`` inside a chunk that has ``choices`` (OpenRouter) is
  recorded, and the stream goes on. A whole body with an ``error`` is not complete either.

The fast path (``Reducer.fast``: an arguments-only delta of choice 0, taken without
decoding it) is ``openai_chat_fast``; whole bodies (``parse_body``), ``openai_chat_body``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from .._json import loads_str
from ..model import Limits, Parsed, Problem, ToolCall
from ..sse import SSEEvent
from ._openai import (
    NOT_JSON,
    Collector,
    PendingCall,
    load_event,
    plain_int,
    text_or_none,
)
from .openai_chat_body import DIALECT, INCOMPLETE_REASONS, _usage, _zero, parse_body
from .openai_chat_fast import FastPath

__all__ = ["DIALECT", "INCOMPLETE_REASONS", "Reducer", "parse_body"]


class _Choice:
    """Calls of one choice that are not released yet, and how to find the open one."""

    __slots__ = ("by_index", "done", "late", "legacy", "open", "pending")

    def __init__(self) -> None:
        self.pending: deque[PendingCall] = deque()
        self.by_index: dict[int, PendingCall] = {}
        self.open: PendingCall | None = None
        self.legacy: PendingCall | None = None
        self.done = False  # a finish_reason arrived
        self.late = False  # tool call data came after it (reported once)

    def fork(self, twins: dict[int, PendingCall]) -> _Choice:
        """An independent copy, its calls forked once each (``PendingCall.fork``)."""
        twin = _Choice.__new__(_Choice)
        twin.pending = deque(call.fork(twins) for call in self.pending)
        twin.by_index = {index: call.fork(twins) for index, call in self.by_index.items()}
        twin.open = None if self.open is None else self.open.fork(twins)
        twin.legacy = None if self.legacy is None else self.legacy.fork(twins)
        twin.done, twin.late = self.done, self.late
        return twin

    def start(self, call: PendingCall) -> None:
        """A new call begins: unfinished calls whose arguments are a whole JSON object are
        finished (the sequential case); the others may still receive deltas."""
        for earlier in self.pending:
            if not earlier.finished and _whole_object(earlier):
                earlier.finished = True
        self.open = call
        self.pending.append(call)

    def close(self, cut: bool = False) -> None:
        """The choice ended (finish_reason, [DONE], end of stream); with ``cut``, the calls
        still open are truncated, but for earlier ones that got no arguments at all."""
        for call in self.pending:
            if not call.finished:
                if cut and (call is self.open or call.fragments or call.oversized):
                    call.truncated = True
                call.finished = True
        self.open = None


class Reducer:
    """Folds one Chat Completions stream; calls are emitted as soon as they finish."""

    __slots__ = (
        "_choices",
        "_complete",
        "_failed",
        "_limit",
        "_out",
        "_parsed",
        "_path",
        "_released",
        "fast",
    )

    def __init__(self, limits: Limits) -> None:
        self._out = Collector(limits, DIALECT)
        self._limit = limits.max_argument_bytes
        self._choices: dict[int, _Choice] = {}
        self._complete = False
        self._failed = False  # an error ended the stream
        self._released = False  # something finished: try to release calls
        self._parsed: Parsed | None = None
        self._path = FastPath(limits.max_argument_bytes)
        #: One arguments-only delta of choice 0 taken whole (``FastPath.fast``).
        self.fast: Callable[[bytes], bool] = self._path.fast

    def fork(self) -> Reducer:
        """An independent copy of what this stream told so far, to go on from the same
        point with other events; its fast path learns the stream's layout anew."""
        twin = Reducer.__new__(Reducer)
        twins: dict[int, PendingCall] = {}
        twin._out = self._out.fork()
        twin._limit = self._limit
        twin._choices = {index: st.fork(twins) for index, st in self._choices.items()}
        twin._complete, twin._failed = self._complete, self._failed
        twin._released, twin._parsed = self._released, self._parsed
        twin._path = FastPath(self._limit)
        twin.fast = twin._path.fast
        twin._retarget()
        return twin

    def _retarget(self) -> None:
        """Point the fast path at the arguments deltas of choice 0's unfinished calls."""
        st = self._choices.get(0)
        self._path.retarget(None if st is None or st.done else st.by_index)

    def event(self, ev: SSEEvent) -> list[ToolCall]:
        """Take one SSE event; return the calls it completed, in response order."""
        calls = self._event(ev)
        self._retarget()
        return calls

    def _event(self, ev: SSEEvent) -> list[ToolCall]:
        data = ev.data
        if len(data) < 16 and data.strip() == b"[DONE]":
            self._end()
            return self._release(final=True)
        chunk = _load(ev, self._out)
        self._path.study(chunk, ev.terminated)
        if chunk is None:
            return []
        if self._path.learning and ev.event == "message" and chunk.get("error") is None:
            self._path.learn(data)
        return self.take(chunk, ev.event)

    def take(self, chunk: dict[str, Any], event: str = "message") -> list[ToolCall]:
        """One chunk already decoded (``event``: its SSE event name): what ``event`` does
        with it; the calls it completed."""
        err = chunk.get("error")
        if event == "error" or err is not None:
            self._out.error(err if err is not None else chunk)
            if event == "error" or "choices" not in chunk:
                self._failed = True
                self._end(cut=True)
                return self._release(final=True)
        self._out.meta(chunk)
        usage = _usage(chunk.get("usage"))
        if usage is not None:
            self._out.usage = usage
        choices = chunk.get("choices")
        if isinstance(choices, list):
            for pos, choice in enumerate(choices):
                self._choice(pos, choice)
        elif choices is not None:
            self._out.shape(f"choices is {type(choices).__name__}, not a list")
        if self._released:
            return self._release(final=False)
        return []

    def args_delta(self, choice: int, index: int, fragment: str) -> bool:
        """An arguments-only delta (no id, name nor type) of an unfinished call of an
        unfinished choice, the one its tool call ``index`` names, taken as ``take`` would
        (once the chunks' id and model are known); False, unchanged, for any other."""
        st = self._choices.get(choice)
        out = self._out
        if st is None or st.done or out.response_id is None or out.model is None:
            return False
        call = st.by_index.get(index)
        if call is None or call.finished:
            return False
        if call.oversized or not call.fragments.add_within(fragment, self._limit):
            call.add(fragment, self._limit)
        return True

    @property
    def ended(self) -> bool:
        """Whether every choice ended (a finish_reason each; not an error)."""
        return self._complete and not self._failed

    def finish(self) -> Parsed:
        """End of stream: unfinished calls become ``truncated_json`` unless the stream ended."""
        if self._parsed is None:
            complete = self._complete
            if not complete:
                detail = "stream ended before [DONE] or a finish_reason"
                self._out.problems.append(Problem("truncated_stream", detail=detail))
            self._end(cut=not complete)
            self._release(final=True)
            self._parsed = self._out.parsed(complete and not self._failed)
        return self._parsed

    def _end(self, cut: bool = False) -> None:
        """The response is over; with ``cut``, calls still open become truncated."""
        self._complete = True
        for st in self._choices.values():
            st.close(cut)
            st.done = True

    def _choice(self, pos: int, choice: Any) -> None:
        if not isinstance(choice, dict):
            self._out.shape(f"choice is {type(choice).__name__}, not an object")
            return
        index = choice.get("index", pos)
        if plain_int(index) is None:
            self._out.shape(f"choice index is {type(index).__name__}, not an int")
            return
        st = self._choices.get(index)
        if st is None:
            st = self._choices[index] = _Choice()
        self._delta(st, index, choice.get("delta"))
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            if index == 0:
                self._out.finish_reason = reason
            if reason in INCOMPLETE_REASONS:
                self._out.incomplete(reason)
            st.close()
            st.done = True
            self._released = True
            if all(c.done for c in self._choices.values()):
                self._complete = True

    def _delta(self, st: _Choice, index: int, delta: Any) -> None:
        """Take a choice's ``delta``: its tool call and legacy ``function_call`` parts."""
        if (
            st.done
            and isinstance(delta, dict)
            and (delta.get("tool_calls") or not _zero(delta.get("function_call")))
        ):
            if not st.late:
                st.late = True
                self._out.shape(f"choice {index} sent tool call data after its finish_reason")
        elif isinstance(delta, dict):
            tool_calls = delta.get("tool_calls")
            if isinstance(tool_calls, list):
                for tc in tool_calls:
                    self._tool_delta(st, tc)
            elif tool_calls is not None:
                self._out.shape(f"tool_calls is {type(tool_calls).__name__}, not a list")
            legacy = delta.get("function_call")
            if legacy is not None:
                self._legacy_delta(st, legacy)
        elif delta is not None:
            self._out.shape(f"delta is {type(delta).__name__}, not an object")

    def _tool_delta(self, st: _Choice, tc: Any) -> None:
        if not isinstance(tc, dict):
            self._out.shape(f"tool call delta is {type(tc).__name__}, not an object")
            return
        index = tc.get("index")
        call_id = text_or_none(tc.get("id"))
        if index is None:  # no index: a new id starts a call, else continue the last one
            call = st.open
            if call is None or (call_id is not None and call_id != call.call_id):
                call = None
        elif plain_int(index) is None:
            self._out.shape(f"tool call index is {type(index).__name__}, not an int")
            return
        else:
            call = st.by_index.get(index)
            if call is not None and call_id is not None and call.call_id not in (None, call_id):
                call = None  # the same index reused by a new call
        if call is None:
            call = PendingCall(call_id)
            if index is not None:
                st.by_index[index] = call
            st.start(call)
            self._released = True
        elif call.finished:
            self._late(call)
            return
        call.call_id = call.call_id or call_id
        kind = tc.get("type")
        if isinstance(kind, str) and kind and kind != "function":
            call.kind = kind
        fn = tc.get("function")
        if fn is None and call.kind != "function":
            fn = tc.get(call.kind)  # {"type": "custom", "custom": {"name", "input"}}
        if isinstance(fn, dict):
            call.name = call.name or text_or_none(fn.get("name"))
            call.add(fn.get("arguments", fn.get("input")), self._limit)
        elif fn is not None and call.bad is None:
            call.bad = f"function is {type(fn).__name__}, not an object"

    def _legacy_delta(self, st: _Choice, fc: Any) -> None:
        if not isinstance(fc, dict):
            self._out.shape(f"function_call is {type(fc).__name__}, not an object")
            return
        if _zero(fc):
            return
        call = st.legacy
        if call is None:
            call = st.legacy = PendingCall()
            st.start(call)
            self._released = True
        elif call.finished:
            self._late(call)
            return
        call.name = call.name or text_or_none(fc.get("name"))
        call.add(fc.get("arguments"), self._limit)

    def _late(self, call: PendingCall) -> None:
        if not call.late:
            call.late = True
            self._out.shape(f"tool call {call.call_id or call.name!r} got data after it finished")

    def _release(self, final: bool) -> list[ToolCall]:
        """Settle finished calls in choice order; ``final`` ignores unfinished choices."""
        self._released = False
        out: list[ToolCall] = []
        for expected, index in enumerate(sorted(self._choices)):
            if index != expected and not final:
                break
            st = self._choices[index]
            pending = st.pending
            while pending and pending[0].finished:
                tc = self._out.settle(pending.popleft())
                if tc is not None:
                    out.append(tc)
            if not final and (pending or not st.done):
                break
        return out


def _whole_object(call: PendingCall) -> bool:
    """Whether a call's arguments so far are a whole JSON object (more deltas would break it)."""
    if call.oversized or call.bad is not None:
        return True
    text = call.text().rstrip()
    if not text.endswith("}"):
        return False
    try:
        return isinstance(loads_str(text), dict)
    except (ValueError, RecursionError):
        return False


def _load(ev: SSEEvent, out: Collector) -> dict[str, Any] | None:
    """The chunk of an event, or None (with a problem when the event was whole)."""
    chunk = load_event(ev)
    if isinstance(chunk, dict):
        return chunk
    if chunk is NOT_JSON:
        if ev.terminated:  # an event cut by the end of the stream is the truncation itself
            out.shape(f"{ev.event} event data is not JSON")
    else:
        out.shape(f"{ev.event} event data is {type(chunk).__name__}, not an object")
    return None
