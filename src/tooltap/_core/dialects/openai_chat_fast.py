"""OpenAI Chat Completions' fast path: an arguments-only delta appended without decoding it.

Most events of a tool-call stream only carry the next argument fragment of the open call.
Every chunk of a response repeats the same bytes before ``"choices"`` (id, created,
model...): once a decoded chunk shows those bytes close into an object without usage, a
later chunk that starts with them and the arguments delta prefix of an unfinished call of
choice 0 (the index it names picks the call), and ends in the fixed compact tail (with or
without ``usage: null`` and OpenAI's random ``obfuscation``), has its fragment appended
still escaped.
"""

from __future__ import annotations

import re
from typing import Final

from .._json import PLAIN_STRING, RAW_STRING, loads, valid_utf8
from ._fragments import append_escaped
from ._openai import PendingCall

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


class FastPath:
    """The head every chunk of one stream repeats, once learnt, and the calls it may feed."""

    __slots__ = ("_args", "_head", "_limit", "_tries")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._head: bytes | None = None  # every chunk's bytes up to the tool call index
        self._tries = _LEARN_TRIES
        self._args: tuple[bytes, dict[int, PendingCall]] | None = None  # head + choice 0's calls

    @property
    def learning(self) -> bool:
        """Whether the head is still to learn (a few chunks are tried)."""
        return self._head is None and self._tries > 0

    def fast(self, chunk: bytes) -> bool:
        """Append the fragment of a one-event arguments-only delta of an unfinished call of
        choice 0 (the one its index names), still escaped, when the chunk repeats the learnt
        head exactly; False otherwise."""
        args = self._args
        if args is None or not chunk.startswith(args[0]):
            return False
        head, by_index = args
        rest = _ARGS_REST.fullmatch(chunk, len(head))
        if rest is None:  # it covers the rest of the event, so no other line can follow
            return False
        call = by_index.get(int(rest[1]))
        if call is None or call.finished:
            return False
        raw = rest[2]
        if not (raw.isascii() or valid_utf8(raw)):
            return False
        append_escaped(call, raw, self._limit)
        return True

    def retarget(self, by_index: dict[int, PendingCall] | None) -> None:
        """Feed the unfinished calls of choice 0 (by tool call index); None: no call."""
        self._args = None
        if self._head is None or by_index is None:
            return
        self._args = (self._head, by_index)

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
