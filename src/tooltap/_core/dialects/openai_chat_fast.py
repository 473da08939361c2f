"""OpenAI Chat Completions' fast path: an arguments-only delta appended without decoding it.

Most events of a tool-call stream only carry the next argument fragment of the open call.
Every chunk of a response repeats the same bytes before ``"choices"`` (id, created,
model...): once a decoded chunk shows those bytes close into an object without usage, a
later chunk that starts with them and the arguments delta prefix of an unfinished call of
choice 0 (the index it names picks the call), and ends in the fixed compact tail (with or
without ``usage: null`` and OpenAI's random ``obfuscation``), has its fragment appended
still escaped.

A server that lays its chunks out otherwise (key order, spaces) teaches the fast path its
layout instead: the first arguments-only delta of each tool call index that misses the
head is decoded, and its bytes become a pattern (``_layout``) in which only the fragment
and the ``obfuscation`` vary; later deltas of that call index laid out the same way match it.
"""

from __future__ import annotations

import re
from typing import Any, Final

from .._json import PLAIN_STRING, RAW_STRING, loads, unescape, valid_utf8
from ._fragments import append_escaped
from ._layout import Kind, Layout, learn, one_event
from ._openai import PendingCall, plain_int

__all__ = ["FastPath"]

_CHOICES: Final = b'"choices":['
_FN_ARGS: Final = b',"function":{"arguments":"'
_DELTA_HEAD: Final = b'"choices":[{"index":0,"delta":{"tool_calls":[{"index":'
#: The rest of an arguments delta after its learnt head: the call's index (group 1, at most
#: ten digits), the fragment (group 2), still escaped, then what follows it (its first part
#: is fixed; group 3 the obfuscation value), to the blank line that ends the event. One
#: match does it all: a fragment cannot hold the tail's unescaped quote, so the split is
#: unique.
_ARGS_REST: Final = re.compile(
    rb"(0|[1-9][0-9]{0,9})"
    + re.escape(_FN_ARGS)
    + b"("
    + RAW_STRING
    + b")"
    + re.escape(b'"}}]},"logprobs":null,"finish_reason":null}]')
    + rb'(?:,"usage":null)?(?:,"obfuscation":"'
    + PLAIN_STRING
    + rb'")?\}\n\n'
)
_LEARN_TRIES: Final = 4
#: The values of an arguments-only delta that vary from event to event (groups of a layout).
_DELTA_KEYS: Final[dict[str, Kind]] = {"arguments": "string", "obfuscation": "id"}
_OPTIONAL: Final = frozenset({"obfuscation"})
_LAYOUT_TRIES: Final = 8
#: Keys of the one tool call delta a layout is learnt from (the id and type null).
_CALL_KEYS: Final = frozenset({"index", "function", "id", "type"})


class FastPath:
    """The head every chunk of one stream repeats, once learnt, and the calls it may feed."""

    __slots__ = ("_args", "_calls", "_head", "_layouts", "_limit", "_sample", "_tries", "_unlearnt")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._head: bytes | None = None  # every chunk's bytes up to the tool call index
        self._tries = _LEARN_TRIES
        self._args: tuple[bytes, dict[int, PendingCall]] | None = None  # head + choice 0's calls
        self._calls: dict[int, PendingCall] | None = None  # choice 0's, while it is not done
        self._layouts: list[tuple[Layout, int]] = []  # learnt, each with its tool call index
        self._sample: bytes | None = None  # a delta the fast path missed, to learn from
        self._unlearnt = _LAYOUT_TRIES

    @property
    def learning(self) -> bool:
        """Whether the head is still to learn (a few chunks are tried)."""
        return self._head is None and self._tries > 0

    def fast(self, chunk: bytes) -> bool:
        """Append the fragment of a one-event arguments-only delta of an unfinished call of
        choice 0 (the one its index names), still escaped, when the chunk repeats the learnt
        head exactly; False otherwise."""
        args = self._args
        rest = None
        if args is not None and chunk.startswith(args[0]):
            # it covers the rest of the event, so no other line can follow
            rest = _ARGS_REST.fullmatch(chunk, len(args[0]))
        if rest is not None:
            call = args[1].get(int(rest[1])) if args is not None else None
            raw = rest[2]
        else:
            calls = self._calls
            for layout, index in self._layouts:
                rest = layout.pattern.fullmatch(chunk)
                if rest is not None:
                    call = calls.get(index) if calls is not None else None
                    raw = rest[layout.groups["arguments"]]
                    break
            else:
                if self._unlearnt and chunk.find(b'"tool_calls"') >= 0 and one_event(chunk):
                    self._sample = chunk  # the full path decodes it next: learn from it
                return False
        if call is None or call.finished:
            return False
        if not (raw.isascii() or valid_utf8(raw)):
            return False
        append_escaped(call, raw, self._limit)
        return True

    def retarget(self, by_index: dict[int, PendingCall] | None) -> None:
        """Feed the unfinished calls of choice 0 (by tool call index); None: no call."""
        self._args = None
        self._calls = by_index
        if self._head is None or by_index is None:
            return
        self._args = (self._head, by_index)

    def study(self, chunk: dict[str, Any] | None, whole: bool) -> None:
        """``chunk`` (None: not an object) was decoded from the next event, the delta last
        missed if any: learn that delta's layout when it is an arguments-only delta of
        choice 0 (no usage, no error); ``whole``: the event ended with a blank line."""
        sample, self._sample = self._sample, None
        if sample is None or chunk is None or not whole:
            return
        self._unlearnt -= 1
        delta = _args_only(chunk)
        if delta is None:
            return
        index, arguments = delta
        layout = learn(sample, _DELTA_KEYS, _OPTIONAL)
        match = layout.pattern.fullmatch(sample) if layout is not None else None
        if layout is not None and match is not None:
            raw = match[layout.groups["arguments"]]
            if valid_utf8(raw) and unescape(raw) == arguments:
                self._layouts.append((layout, index))

    def learn(self, data: bytes) -> None:
        """Take the bytes before ``choices`` of a decoded chunk as the fast path's head.

        Only when ``choices`` is a key of the chunk itself (the bytes before it close into
        an object) and that object has no usage: a later chunk repeating those bytes then
        changes nothing (id and model are first-seen-wins; errors are recorded once).
        """
        self._tries -= 1
        cut = data.find(_CHOICES)
        if cut < 1:
            return
        if cut > 1:
            try:
                fields = loads(data[: cut - 1] + b"}")
            except (ValueError, RecursionError):
                return
            if not isinstance(fields, dict) or fields.get("usage") is not None:
                return
        self._head = b"data: " + data[:cut] + _DELTA_HEAD


def _args_only(chunk: dict[str, Any]) -> tuple[int, str] | None:
    """The tool call index and fragment of a chunk that is an arguments-only delta of
    choice 0 and nothing else the reducer reads (no usage, error, finish_reason, legacy
    function_call, call id, type or name); None for any other chunk."""
    choices = chunk.get("choices")
    if chunk.get("usage") is not None or "error" in chunk or not isinstance(choices, list):
        return None
    choice = choices[0] if len(choices) == 1 else None
    if not isinstance(choice, dict) or choice.get("index", 0) != 0:
        return None
    delta = choice.get("delta")
    if choice.get("finish_reason") is not None or not isinstance(delta, dict):
        return None
    calls = delta.get("tool_calls")
    if delta.get("function_call") is not None or not isinstance(calls, list) or len(calls) != 1:
        return None
    call = calls[0]
    if not isinstance(call, dict) or set(call) - _CALL_KEYS or call.get("id") or call.get("type"):
        return None
    fn = call.get("function")
    if not isinstance(fn, dict) or set(fn) - {"arguments", "name"} or fn.get("name"):
        return None
    index, arguments = plain_int(call.get("index")), fn.get("arguments")
    return (index, arguments) if index is not None and isinstance(arguments, str) else None
