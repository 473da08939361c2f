"""OpenAI Chat Completions: the chunks an SDK already decoded, read into the reducer.

openai's ``Stream`` yields one ``ChatCompletionChunk`` per SSE event (the wire fields as
attributes). Most chunks of a tool-call stream carry only the next argument fragment
of an open call: ``Items.item`` hands it to ``Reducer.args_delta`` after a few reads,
from the models' ``__dict__`` (``_items``).
Any other chunk is read into the fields the reducer decodes from the bytes, and taken
as the same chunk (``Reducer.take``). A chunk with a non-function tool call (its input
under a key named by its type) or an ``error`` is ``Declined``: the bytes decide.
"""

from __future__ import annotations

from typing import Any

from ..model import ToolCall
from ._items import Declined, ItemReader
from .openai_chat import Reducer

__all__ = ["Items"]


class Items(ItemReader[Reducer]):
    """Folds openai's decoded ``ChatCompletionChunk`` objects into a ``Reducer``."""

    __slots__ = ()

    def item(self, chunk: Any) -> list[ToolCall]:
        """Take one decoded chunk; return the calls it completed."""
        extra = chunk.__pydantic_extra__  # (``model_extra``, without the property call)
        try:
            fields = chunk.__dict__
            choices, plain = fields["choices"], fields["usage"] is None
        except (AttributeError, KeyError):  # not a model with its fields in a dict
            choices, plain = chunk.choices, False
        if (extra and "error" in extra) or not isinstance(choices, list):
            raise Declined("an error, or no list of choices")
        if plain and len(choices) == 1 and self._args_delta(choices[0]):
            return []
        return self.reducer.take(_fields(chunk))

    def _args_delta(self, choice: Any) -> bool:
        """Whether the only choice of a chunk is an arguments-only delta, taken."""
        try:
            fields = choice.__dict__
            if fields["finish_reason"] is not None:
                return False
            delta = fields["delta"].__dict__
            calls = delta["tool_calls"]
            if calls is None or len(calls) != 1 or delta["function_call"] is not None:
                return False
            tc = calls[0].__dict__
            fn = tc["function"]
            if fn is None or tc["id"] is not None or tc["type"] is not None:
                return False
            fn = fn.__dict__
            index, arguments, choice_index = tc.get("index"), fn["arguments"], fields["index"]
            if fn["name"] is not None:
                return False
        except (AttributeError, KeyError):  # not a model with its fields in a dict
            return False
        return (
            isinstance(arguments, str)
            and isinstance(index, int)
            and self.reducer.args_delta(choice_index, index, arguments)
        )


def _fields(chunk: Any) -> dict[str, Any]:
    """The wire fields of a chunk that the reducer reads."""
    return {
        "id": chunk.id,
        "model": chunk.model,
        "usage": _usage(chunk.usage),
        "choices": [
            {
                "index": choice.index,
                "delta": _delta(choice.delta),
                "finish_reason": choice.finish_reason,
            }
            for choice in chunk.choices
        ],
    }


def _delta(delta: Any) -> dict[str, Any] | None:
    if delta is None:
        return None
    fields: dict[str, Any] = {}
    calls = delta.tool_calls
    if calls is not None:
        fields["tool_calls"] = [_tool_call(tc) for tc in calls]
    legacy = delta.function_call
    if legacy is not None:
        fields["function_call"] = {"name": legacy.name, "arguments": legacy.arguments}
    return fields


def _tool_call(tc: Any) -> dict[str, Any]:
    kind = tc.type
    if kind not in (None, "function"):
        raise Declined(f"tool call of type {kind!r}")
    fn = tc.function
    return {
        "index": getattr(tc, "index", None),
        "id": tc.id,
        "type": kind,
        "function": None if fn is None else {"name": fn.name, "arguments": fn.arguments},
    }


def _usage(usage: Any) -> dict[str, Any] | None:
    if usage is None:
        return None
    details = usage.prompt_tokens_details
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "prompt_tokens_details": None
        if details is None
        else {"cached_tokens": details.cached_tokens},
    }
