"""Anthropic Messages' fast path: an arguments delta appended without decoding it.

``Reducer.fast``: an ``input_json_delta`` of an open tool block (the one its
``index`` names), in Anthropic's compact shape (trailing padding allowed) or in the layout
learnt from the stream's first such event that missed it (any key order, spacing,
``event:`` line or not: ``_layout``), has its fragment appended still escaped; text and
thinking deltas are skipped; neither is decoded.
"""

from __future__ import annotations

import re
from typing import Any, Final

from .._json import RAW_STRING, unescape, valid_utf8
from ._fragments import append_escaped
from ._layout import Kind, Layout, learn, one_event
from .anthropic_blocks import Block

__all__ = ["LEARN_TRIES", "FastPath"]

_JSON_DELTA: Final = b'"input_json_delta"'
#: The values of an arguments delta that vary from event to event (groups of a layout).
_DELTA_KEYS: Final[dict[str, Kind]] = {"index": "int", "partial_json": "string"}
LEARN_TRIES: Final = 3
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


class FastPath:
    """``anthropic.Reducer``'s fast path and the layouts it learns (the reducer sets them up)."""

    __slots__ = ("_by_digits", "_layouts", "_sample", "_tries")

    _by_digits: dict[bytes, Block]
    _layouts: list[Layout]
    _max_args: int
    _sample: bytes | None
    _tries: int

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
