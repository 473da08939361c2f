"""Anthropic Messages: the stream events an SDK already decoded, read into the reducer.

anthropic's ``Stream`` yields one object per SSE event (``RawMessageStreamEvent``: its
``type``, and the fields of the wire event as attributes); ``Items.item`` reads the fields
the reducer needs, by attribute, and hands the reducer the same event it would have
decoded from the bytes (``Reducer.take``; an argument delta straight to
``Reducer.json_delta``). Text and thinking deltas, most of a stream, cost two reads.
A delta's fields are read from the models' ``__dict__`` (``_items``), and the usual
argument delta (a string, to an open block, within the limit) is appended here, one call
per event fewer (``Fragments.add_within``'s usual case, inline).
An object without the attributes expected raises (``AttributeError``): the caller
then reads the bytes instead.
"""

from __future__ import annotations

from typing import Any, Final

from ..model import ToolCall
from ._items import ItemReader
from .anthropic import Reducer

__all__ = ["Items"]

_USAGE_KEYS: Final = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


#: What an event that completed no call returns (shared: callers only read it).
_NONE: Final[list[ToolCall]] = []


class Items(ItemReader[Reducer]):
    """Folds anthropic's decoded stream events into a ``Reducer``."""

    __slots__ = ("_blocks", "_limit")

    def __init__(self, reducer: Reducer) -> None:
        super().__init__(reducer)
        self._blocks = reducer.open_blocks
        self._limit = reducer.max_args

    def item(self, ev: Any) -> list[ToolCall]:
        """Take one decoded event; return the calls it completed."""
        try:  # most events: a delta, read from the models' dicts
            fields = ev.__dict__
            if fields["type"] == "content_block_delta":
                delta = fields["delta"].__dict__
                if delta["type"] == "input_json_delta":
                    index, fragment = fields["index"], delta["partial_json"]
                    block = self._blocks.get(index) if index.__class__ is int else None
                    if block is None or fragment.__class__ is not str:
                        self.reducer.json_delta(index, fragment)
                        return _NONE
                    fragments = block.fragments
                    size = fragments.size + len(fragment)
                    if size > self._limit:  # (an ``oversized`` block is past it already)
                        self.reducer.json_delta(index, fragment)
                    elif fragment:
                        fragments.size = size
                        fragments.parts.append(fragment)
                        fragments.run = None
                return _NONE
        except (AttributeError, KeyError):  # not a model with its fields in a dict
            pass
        kind = ev.type
        if kind == "content_block_delta":
            delta = ev.delta
            if delta.type == "input_json_delta":
                self.reducer.json_delta(ev.index, delta.partial_json)
            return []
        if not isinstance(kind, str):
            raise AttributeError(f"event type is {type(kind).__name__}")
        return self.reducer.take(kind, _fields(kind, ev))


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
