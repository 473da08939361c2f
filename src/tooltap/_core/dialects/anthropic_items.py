"""Anthropic Messages: the stream events an SDK already decoded, read into the reducer.

anthropic's ``Stream`` yields one object per SSE event (``RawMessageStreamEvent``: its
``type``, and the fields of the wire event as attributes); ``Items.item`` reads the fields
the reducer needs, by attribute, and hands the reducer the same event it would have
decoded from the bytes (``Reducer.take``; an argument delta straight to
``Reducer.json_delta``). Text and thinking deltas, most of a stream, cost two reads.
A delta's fields are read from the models' ``__dict__`` (``_items``); once a delta was read
so, the classes of its event and of an argument delta tell the next ones apart (the SDK
builds each event's model by its ``type``; an object of such a class that lacks the
fields is read as any other event, by attribute). Argument deltas to
the same open block, most of a stream, are held back as they come (one ``append``
each) and handed to the block as one piece when the run ends: at any other event, at a
delta to another block, or when the reducer is read (``flush``); a run that is not all
strings, or that would take the block past the limit, is handed on one fragment at a
time instead, as each would have been. What is held back is bounded by the bytes the
tap keeps for the body, which it caps.
An object without the attributes expected raises (``AttributeError``): the caller
then reads the bytes instead.
"""

from __future__ import annotations

from typing import Any, Final

from ..model import ToolCall
from ._items import ItemReader
from .anthropic import Reducer
from .anthropic_blocks import Block

__all__ = ["Items"]

_USAGE_KEYS: Final = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


#: What an event that completed no call returns (shared: callers only read it).
_NONE: Final[list[ToolCall]] = []
#: The block index of no run: no event's index is this object.
_NO_RUN: Final = object()


class Items(ItemReader[Reducer]):
    """Folds anthropic's decoded stream events into a ``Reducer``."""

    __slots__ = ("_add", "_block", "_blocks", "_event", "_index", "_json", "_limit", "_run")

    def __init__(self, reducer: Reducer) -> None:
        super().__init__(reducer)
        self._blocks = reducer.open_blocks
        self._limit = reducer.max_args
        self._run: list[Any] = []  # argument fragments held back for the block ``_index``
        self._add = self._run.append
        self._index: object = _NO_RUN
        self._block: Block | None = None  # the block at ``_index``
        self._event: type | None = None  # the class of content_block_delta events, once seen
        self._json: type | None = None  # the class of their input_json_delta deltas

    def item(self, ev: Any) -> list[ToolCall]:
        """Take one decoded event; return the calls it completed."""
        try:  # most events: a delta, read from the models' dicts
            fields = ev.__dict__
            if type(ev) is self._event or fields["type"] == "content_block_delta":
                delta = fields["delta"]
                if type(delta) is self._json:
                    fragment = delta.__dict__["partial_json"]
                else:
                    self._event = type(ev)
                    detail = delta.__dict__
                    if detail["type"] != "input_json_delta":
                        return _NONE
                    self._json, fragment = type(delta), detail["partial_json"]
                index = fields["index"]
                if index is self._index:  # the run's block (small ints are one object)
                    self._add(fragment)
                else:
                    self._start(index, fragment)
                return _NONE
        except (AttributeError, KeyError):  # not a model with its fields in a dict
            pass
        self.flush()
        kind = ev.type
        if kind == "content_block_delta":
            delta = ev.delta
            if delta.type == "input_json_delta":
                self.reducer.json_delta(ev.index, delta.partial_json)
            return []
        if not isinstance(kind, str):
            raise AttributeError(f"event type is {type(kind).__name__}")
        return self.reducer.take(kind, _fields(kind, ev))

    def _start(self, index: Any, fragment: Any) -> None:
        """An argument delta to another block than the run's: the run ends, and one for
        ``index`` starts when it names an open block that still keeps its fragments."""
        self.flush()
        block = self._blocks.get(index) if index.__class__ is int else None
        if block is None or block.oversized:
            self.reducer.json_delta(index, fragment)
        else:
            self._index, self._block = index, block
            self._add(fragment)

    def flush(self) -> None:
        """Hand the run held back to its block: as one piece when it is all strings
        within the limit, else one fragment at a time, as each would have come."""
        run, index, block = self._run, self._index, self._block
        if not run or block is None:
            return
        self._index, self._block = _NO_RUN, None
        try:
            text = "".join(run)
        except TypeError:  # a fragment that is not a string: the reducer says what it is
            text = None
        if text is None or not block.fragments.add_within(text, self._limit):
            for fragment in run:
                self.reducer.json_delta(index, fragment)
        run.clear()


def _fields(kind: str, ev: Any) -> dict[str, Any]:
    """The wire fields of a structural event that the reducer reads."""
    if kind == "content_block_stop":
        return {"index": ev.index}
    if kind == "content_block_start":
        block = ev.content_block
        return {
            "index": ev.index,
            "content_block": {
                "type": block.type,
                "id": getattr(block, "id", None),
                "name": getattr(block, "name", None),
                "input": getattr(block, "input", None),
                "toolset_name": getattr(block, "toolset_name", None),
            },
        }
    if kind == "message_start":
        message = ev.message
        return {
            "message": {
                "id": message.id,
                "model": message.model,
                "usage": _usage(message.usage),
                "stop_reason": message.stop_reason,
            }
        }
    if kind == "message_delta":
        return {"delta": {"stop_reason": ev.delta.stop_reason}, "usage": _usage(ev.usage)}
    return {}


def _usage(usage: Any) -> dict[str, Any] | None:
    if usage is None:
        return None
    return {key: getattr(usage, key, None) for key in _USAGE_KEYS}
