"""Tool calls of a streamed response from the items an SDK decoded from it, not its bytes.

An SDK's loop over a stream decodes every event into an object (anthropic's stream
events, google-genai's chunk dicts) before the app gets it. ``ItemParser`` folds those
objects with the dialect's own reducer (its ``Items`` reader hands it the same events the
bytes would give), so the bytes need not be decoded a second time. An item the reader
does not expect raises (``Declined`` when it is valid, but only the bytes tell all);
the caller then parses the bytes instead (``StreamParser``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Protocol

from .dialects import (
    anthropic,
    anthropic_items,
    google,
    google_items,
    openai_chat,
    openai_chat_items,
    openai_responses,
    openai_responses_items,
)
from .dialects._items import Declined
from .model import Limits, Parsed, ToolCall

__all__ = ["Declined", "ItemParser", "item_parser"]


class _Reader(Protocol):
    def item(self, obj: Any) -> list[ToolCall]: ...

    @property
    def ended(self) -> bool: ...


def _anthropic(limits: Limits) -> tuple[_Reader, Callable[[], Parsed]]:
    reducer = anthropic.Reducer(limits)
    return anthropic_items.Items(reducer), reducer.finish


def _openai_chat(limits: Limits) -> tuple[_Reader, Callable[[], Parsed]]:
    reducer = openai_chat.Reducer(limits)
    return openai_chat_items.Items(reducer), reducer.finish


def _openai_responses(limits: Limits) -> tuple[_Reader, Callable[[], Parsed]]:
    reducer = openai_responses.Reducer(limits)
    return openai_responses_items.Items(reducer), reducer.finish


def _google(limits: Limits) -> tuple[_Reader, Callable[[], Parsed]]:
    reducer = google.Reducer(limits)
    return google_items.Items(reducer), reducer.finish


#: The dialects whose SDK items have a reader: a reader, and its reducer's ``finish``.
_READERS: Final[dict[str, Callable[[Limits], tuple[_Reader, Callable[[], Parsed]]]]] = {
    openai_chat.DIALECT: _openai_chat,
    openai_responses.DIALECT: _openai_responses,
    anthropic.DIALECT: _anthropic,
    google.DIALECT: _google,
}


class ItemParser:
    """One streamed response, folded from the SDK's decoded items.

    ``item(obj)`` returns the calls that item completed (it raises on an item its reader
    does not expect); ``ended`` tells whether the stream ended as it should (its last
    event seen, not an error); ``close()`` returns the whole ``Parsed``.
    """

    __slots__ = ("_finish", "_reader", "item")

    def __init__(self, reader: _Reader, finish: Callable[[], Parsed]) -> None:
        self._reader = reader
        self._finish = finish
        self.item: Callable[[Any], list[ToolCall]] = reader.item

    @property
    def ended(self) -> bool:
        """Whether the stream's last event arrived (not an error)."""
        return self._reader.ended

    def close(self) -> Parsed:
        """End of the stream: everything learnt."""
        return self._finish()


def item_parser(dialect: str, limits: Limits) -> ItemParser | None:
    """A parser of ``dialect``'s SDK items, or None when the dialect has no item reader."""
    make = _READERS.get(dialect)
    return None if make is None else ItemParser(*make(limits))
