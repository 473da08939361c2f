"""Tool calls of a streamed response from the items an SDK decoded from it, not its bytes.

An SDK's loop over a stream decodes every event into an object (anthropic's stream
events, google-genai's chunk dicts) before the app gets it. ``ItemParser`` folds those
objects with the dialect's own reducer (its ``Items`` reader hands it the same events the
bytes would give), so the bytes need not be decoded a second time. An item the reader
does not expect raises (``Declined`` when it is valid, but only the bytes tell all);
the caller then parses the bytes instead (``StreamParser``).
"""

from __future__ import annotations

from collections.abc import Callable, Sized
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
from .dialects._base import Reducer
from .dialects._items import Declined
from .model import Limits, Parsed, ToolCall

__all__ = ["Declined", "ItemParser", "item_parser"]


class _Reader(Protocol):
    def item(self, obj: Any) -> list[ToolCall]: ...

    def flush(self) -> None: ...

    @property
    def ended(self) -> bool: ...


def _anthropic(limits: Limits, _kept: Sized) -> tuple[_Reader, Reducer]:
    reducer = anthropic.Reducer(limits)
    return anthropic_items.Items(reducer), reducer


def _openai_chat(limits: Limits, _kept: Sized) -> tuple[_Reader, Reducer]:
    reducer = openai_chat.Reducer(limits)
    return openai_chat_items.Items(reducer), reducer


def _openai_responses(limits: Limits, _kept: Sized) -> tuple[_Reader, Reducer]:
    reducer = openai_responses.Reducer(limits)
    return openai_responses_items.Items(reducer), reducer


def _google(limits: Limits, kept: Sized) -> tuple[_Reader, Reducer]:
    reducer = google.Reducer(limits)
    return google_items.Items(reducer, limits, kept), reducer


#: The dialects whose SDK items have a reader: a reader, and the reducer it folds into.
_READERS: Final[dict[str, Callable[[Limits, Sized], tuple[_Reader, Reducer]]]] = {
    openai_chat.DIALECT: _openai_chat,
    openai_responses.DIALECT: _openai_responses,
    anthropic.DIALECT: _anthropic,
    google.DIALECT: _google,
}


class ItemParser:
    """One streamed response, folded from the SDK's decoded items.

    ``item(obj)`` returns the calls that item completed (it raises on an item its reader
    does not expect); ``ended`` tells whether the stream ended as it should (its last
    event seen, not an error); ``close()`` returns the whole ``Parsed``; ``fork()``, the
    reducer's state so far, for the bytes after the items taken (``StreamParser``).
    """

    __slots__ = ("_reader", "_reducer", "item")

    def __init__(self, reader: _Reader, reducer: Reducer) -> None:
        self._reader = reader
        self._reducer = reducer
        self.item: Callable[[Any], list[ToolCall]] = reader.item

    @property
    def ended(self) -> bool:
        """Whether the stream's last event arrived (not an error)."""
        return self._reader.ended

    def close(self) -> Parsed:
        """End of the stream: everything learnt."""
        self._reader.flush()
        return self._reducer.finish()

    def fork(self) -> Reducer | None:
        """An independent copy of the reducer as the items so far left it, when its
        dialect's reducer can be copied (else None)."""
        fork: Callable[[], Reducer] | None = getattr(self._reducer, "fork", None)
        if fork is None:
            return None
        self._reader.flush()
        return fork()


def item_parser(dialect: str, limits: Limits, kept: Sized) -> ItemParser | None:
    """A parser of ``dialect``'s SDK items, or None when the dialect has no item reader;
    ``kept``: the body's bytes the items are decoded from, as the tap keeps them (they hold
    those of the item being taken)."""
    make = _READERS.get(dialect)
    return None if make is None else ItemParser(*make(limits, kept))
