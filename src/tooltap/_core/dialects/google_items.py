"""Google Gemini: the stream chunks an SDK already decoded, read into the reducer.

google-genai's ``HttpResponse.segments`` yields each SSE event's JSON, decoded, before it
builds a ``GenerateContentResponse`` from it: ``Items.item`` hands that object to the
reducer as the event it would have decoded from the bytes (``Reducer.take``).
"""

from __future__ import annotations

from typing import Any

from ..model import ToolCall
from ._items import ItemReader
from .google import Reducer

__all__ = ["Items"]


class Items(ItemReader[Reducer]):
    """Folds google-genai's decoded stream chunks into a ``Reducer``."""

    __slots__ = ()

    def item(self, chunk: Any) -> list[ToolCall]:
        """Take one decoded chunk; return the calls it completed."""
        if not isinstance(chunk, dict):
            raise AttributeError(f"chunk is {type(chunk).__name__}, not an object")
        return self.reducer.take(chunk)
