"""OpenAI Responses' fast path: an arguments delta appended without decoding it.

``Reducer.fast``: a ``response.function_call_arguments.delta`` event in one of
the compact key orders OpenAI sends, or in the layout learnt from the stream's first such
event that missed them (any key order, spacing, ``event:`` line or not: ``_layout``), for a
call already open, has its fragment appended still escaped, without decoding the event.
The call is found by its item id, so deltas of several open calls may interleave.
"""

from __future__ import annotations

import re
from typing import Any, Final

from .._json import INT, PLAIN_STRING, RAW_STRING, unescape, valid_utf8
from ._fragments import append_escaped
from ._layout import Kind, Layout, learn, one_event
from ._openai import PendingCall

__all__ = ["LEARN_TRIES", "FastPath"]

_DELTA_HEAD: Final = (
    b"event: response.function_call_arguments.delta\n"
    b'data: {"type":"response.function_call_arguments.delta",'
)
#: A whole delta event, in the two key orders seen from OpenAI. Groups: in order,
#: sequence number, id, fragment, obfuscation value; delta first, fragment and id.
_DELTA_IN_ORDER: Final = re.compile(
    re.escape(_DELTA_HEAD)
    + rb'(?:"sequence_number":('
    + INT
    + rb'),)?"item_id":"([ !#-\[\]-~]++)","output_index":'
    + INT
    + rb',"delta":"('
    + RAW_STRING
    + rb')"(?:,"obfuscation":"('
    + PLAIN_STRING
    + rb')")?\}\n\n'
)
_DELTA_FIRST: Final = re.compile(
    re.escape(_DELTA_HEAD)
    + rb'"delta":"('
    + RAW_STRING
    + rb')","item_id":"([ !#-\[\]-~]++)"(?:,"obfuscation":"'
    + PLAIN_STRING
    + rb'")?,"output_index":'
    + INT
    + rb',"sequence_number":'
    + INT
    + rb"\}\n\n"
)
_ARGS_TYPE: Final = b'"response.function_call_arguments.delta"'
#: The values of an arguments delta that vary from event to event (groups of a layout).
_DELTA_KEYS: Final[dict[str, Kind]] = {
    "item_id": "id",
    "delta": "string",
    "output_index": "int",
    "sequence_number": "int",
    "obfuscation": "id",
}
_OPTIONAL: Final = frozenset({"output_index", "sequence_number", "obfuscation"})
LEARN_TRIES: Final = 3


class FastPath:
    """``openai_responses.Reducer``'s fast path and the layouts it learns (the reducer sets
    them up)."""

    __slots__ = ("_layouts", "_sample", "_tries")

    _items: dict[str, PendingCall]
    _partial: set[int]
    _limit: int
    _layouts: list[Layout]
    _sample: bytes | None
    _tries: int

    def fast(self, chunk: bytes) -> bool:
        """Append the fragment of a one-event arguments delta of an open call, still
        escaped, when the event has one of OpenAI's compact key orders; False otherwise."""
        match = _DELTA_IN_ORDER.fullmatch(chunk)
        if match is not None:
            item_id, raw = match[2], match[3]
        elif chunk.startswith(_DELTA_HEAD) and (match := _DELTA_FIRST.fullmatch(chunk)):
            raw, item_id = match[1], match[2]
        else:
            for layout in self._layouts:
                if match := layout.pattern.fullmatch(chunk):
                    break
            else:
                if self._tries and chunk.find(_ARGS_TYPE) >= 0 and one_event(chunk):
                    self._sample = chunk  # the full path decodes it next: learn from it
                return False
            groups = layout.groups
            item_id, raw = match[groups["item_id"]], match[groups["delta"]]
        call = self._items.get(item_id.decode("ascii"))
        if call is None or call.finished or not (raw.isascii() or valid_utf8(raw)):
            return False  # (every call is finished once the response is complete)
        if self._partial and id(call) in self._partial:
            return False
        append_escaped(call, raw, self._limit)
        return True

    def _learn(self, sample: bytes, payload: dict[str, Any]) -> None:
        """Learn the layout of ``sample``, the event ``payload`` was decoded from."""
        self._tries -= 1
        layout = learn(sample, _DELTA_KEYS, _OPTIONAL)
        match = layout.pattern.fullmatch(sample) if layout is not None else None
        if layout is None or match is None:
            return
        item_id, raw = match[layout.groups["item_id"]], match[layout.groups["delta"]]
        same_id = item_id.decode("ascii") == payload.get("item_id")
        if same_id and valid_utf8(raw) and unescape(raw) == payload.get("delta"):
            self._layouts.append(layout)
