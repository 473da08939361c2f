"""OpenAI Chat Completions: the chunks an SDK already decoded, read into the reducer.

openai's ``Stream`` yields one ``ChatCompletionChunk`` per SSE event (the wire fields as
attributes). Most chunks of a tool-call stream carry only the next argument fragment
of an open call: ``Items.item`` hands it to ``Reducer.args_delta`` after a few reads.
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
        choices = chunk.choices
        extra = chunk.__pydantic_extra__  # (``model_extra``, without the property call)
        if (extra and "error" in extra) or not isinstance(choices, list):
            raise Declined("an error, or no list of choices")
        if len(choices) == 1 and chunk.usage is None:
            choice = choices[0]
            if choice.finish_reason is None:
                delta = choice.delta
                calls = delta.tool_calls
                if calls is not None and len(calls) == 1 and delta.function_call is None:
                    tc = calls[0]
                    fn = tc.function
                    index = getattr(tc, "index", None)
                    if (
                        tc.id is None
                        and tc.type is None
                        and fn is not None
                        and fn.name is None
                        and isinstance(fn.arguments, str)
                        and isinstance(index, int)
                        and self.reducer.args_delta(choice.index, index, fn.arguments)
                    ):
                        return []
        return self.reducer.take(_fields(chunk))


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
