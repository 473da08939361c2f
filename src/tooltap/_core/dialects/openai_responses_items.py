"""OpenAI Responses: the stream events an SDK already decoded, read into the reducer.

openai's ``Stream`` yields one event object per SSE event (its ``type``, and the wire
fields as attributes). Events the reducer ignores (text deltas, most of a stream) cost
one read; an arguments delta of an open call goes straight to ``Reducer.args_delta``
(its fields read from the model's ``__dict__``: ``_items``);
any other event is read into the fields the reducer decodes from the bytes and taken
as that event (``Reducer.take``). An ``error`` event, a failed response, or an item
whose ``status`` the object cannot tell apart from an absent one is ``Declined``: the
bytes decide.
"""

from __future__ import annotations

from typing import Any, Final

from ..model import ToolCall
from ._items import Declined, ItemReader
from .openai_responses import CALL_ITEMS, Reducer

__all__ = ["Items"]

_ARGS_DELTA: Final = "response.function_call_arguments.delta"
_STARTED: Final = frozenset({"response.created", "response.in_progress", "response.queued"})
_ITEM_EVENTS: Final = frozenset({"response.output_item.added", "response.output_item.done"})
_TERMINAL: Final = frozenset({"response.completed", "response.incomplete"})


class Items(ItemReader[Reducer]):
    """Folds openai's decoded Responses stream events into a ``Reducer``."""

    __slots__ = ()

    def item(self, ev: Any) -> list[ToolCall]:
        """Take one decoded event; return the calls it completed."""
        reducer = self.reducer
        try:
            fields = ev.__dict__
            kind = fields["type"]
            if kind == _ARGS_DELTA:
                delta = fields["delta"]
                if isinstance(delta, str) and reducer.args_delta(fields["item_id"], delta):
                    return []
        except (AttributeError, KeyError):  # not a model with its fields in a dict
            kind = ev.type
        if not isinstance(kind, str):
            raise AttributeError(f"event type is {type(kind).__name__}")
        if not reducer.handles(kind):
            return []
        return reducer.take(kind, _fields(kind, ev))


def _fields(kind: str, ev: Any) -> dict[str, Any]:
    """The wire fields of an event that the reducer reads."""
    if kind in _ITEM_EVENTS:
        return {"type": kind, "output_index": ev.output_index, "item": _item(ev.item)}
    if kind in _STARTED:
        response = ev.response
        return {"type": kind, "response": {"id": response.id, "model": response.model}}
    if kind in _TERMINAL:
        return {"type": kind, "response": _response(ev.response)}
    if kind.endswith(".delta"):
        return {"type": kind, "item_id": ev.item_id, "output_index": ev.output_index,
                "delta": ev.delta}  # fmt: skip
    if kind.endswith(".done") and kind != "response.failed":
        key = "input" if "custom_tool_call" in kind else "arguments"
        return {"type": kind, "item_id": ev.item_id, "output_index": ev.output_index,
                "name": getattr(ev, "name", None), key: getattr(ev, key)}  # fmt: skip
    raise Declined(kind)  # an error, a failed response: the bytes tell the details


def _item(item: Any) -> dict[str, Any]:
    kind = item.type
    if kind not in CALL_ITEMS:
        return {"type": kind}
    status = item.status
    if status is None:
        raise Declined(f"{kind} item without a status")
    key = CALL_ITEMS[kind]
    return {"type": kind, "id": item.id, "name": item.name, "call_id": item.call_id,
            key: getattr(item, key), "status": status}  # fmt: skip


def _response(response: Any) -> dict[str, Any]:
    usage, output = response.usage, response.output
    details = response.incomplete_details
    return {
        "id": response.id,
        "model": response.model,
        "status": response.status,
        "usage": None
        if usage is None
        else {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "input_tokens_details": _cached(usage.input_tokens_details),
        },
        "incomplete_details": None if details is None else {"reason": details.reason},
        "output": [_item(item) for item in output] if isinstance(output, list) else None,
    }


def _cached(details: Any) -> dict[str, Any] | None:
    return None if details is None else {"cached_tokens": details.cached_tokens}
