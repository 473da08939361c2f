"""Google Gemini: the stream chunks an SDK already decoded, read into the reducer.

google-genai's ``HttpResponse.segments`` yields each SSE event's JSON, decoded, before it
builds a ``GenerateContentResponse`` from it: ``Items.item`` hands that object to the
reducer as the event it would have decoded from the bytes (``Reducer.take``). Its
arguments are measured against the limit only when the bytes the tap keeps for the body,
which hold the chunk's own, could decode to a value that exceeds it (``may_exceed``).
"""

from __future__ import annotations

from collections.abc import Sized
from typing import Any

from ..args import may_exceed
from ..model import Limits, ToolCall
from ._items import ItemReader
from .google import Reducer

__all__ = ["Items"]


class Items(ItemReader[Reducer]):
    """Folds google-genai's decoded stream chunks into a ``Reducer``."""

    __slots__ = ("_kept", "_limits")

    def __init__(self, reducer: Reducer, limits: Limits, kept: Sized | None = None) -> None:
        """``kept``: bytes that hold those of the chunk being taken whenever one is (the
        body's, as the tap keeps them); None: unknown, the arguments are always measured."""
        super().__init__(reducer)
        self._limits = limits
        self._kept = kept

    def item(self, chunk: Any) -> list[ToolCall]:
        """Take one decoded chunk; return the calls it completed."""
        if not isinstance(chunk, dict):
            raise AttributeError(f"chunk is {type(chunk).__name__}, not an object")
        kept = self._kept
        measure = kept is None or may_exceed(len(kept), self._limits)
        return self.reducer.take(chunk, measure=measure)
