"""The dialect table: every wire dialect tooltap understands, each entry complete.

A dialect's pieces live in its modules here: ``<dialect>.py`` reads responses (the
stream reducer, the whole-body parser), ``<dialect>_request.py`` the rest (request
reader, result messages, tool declarations, content mapping, provider facts). Every
other module looks a dialect up in ``TABLE``. The request module declares the dialect's
``Dialect`` entry (``ENTRY``), with the dialect's facts (finish reasons, error tokens,
retry header, provider names); adding a dialect is its modules plus one line here.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from . import (
    anthropic_request,
    bedrock_converse_request,
    cohere_chat_request,
    google_request,
    ollama_chat_request,
    openai_chat_request,
    openai_responses_request,
)
from ._base import Dialect
from ._content import Message, Part

__all__ = [
    "DIALECTS",
    "TABLE",
    "Dialect",
    "Message",
    "Part",
    "dialect",
    "provider_of",
    "valid_tool_name",
]

#: Each dialect's entry, declared by its request module.
_ENTRIES: Final = (
    openai_chat_request.ENTRY,
    openai_responses_request.ENTRY,
    anthropic_request.ENTRY,
    google_request.ENTRY,
    bedrock_converse_request.ENTRY,
    ollama_chat_request.ENTRY,
    cohere_chat_request.ENTRY,
)

#: Every dialect by name, in a stable order.
TABLE: Final[Mapping[str, Dialect]] = MappingProxyType({d.name: d for d in _ENTRIES})
#: The names of the dialects, in the table's order.
DIALECTS: Final = tuple(TABLE)


def dialect(name: str) -> Dialect:
    """The table entry of ``name``; ValueError for an unknown name."""
    try:
        return TABLE[name]
    except KeyError:
        raise ValueError(f"unknown dialect {name!r}; expected one of {DIALECTS}") from None


def provider_of(dialect: str) -> str:
    """The provider family of ``dialect`` (``ToolCall.provider``); "" if unknown."""
    entry = TABLE.get(dialect)
    return "" if entry is None else entry.provider


def valid_tool_name(name: str, dialect: str) -> bool:
    """Whether ``name`` satisfies the tool-name rule of ``dialect`` (True if unknown)."""
    entry = TABLE.get(dialect)
    return entry is None or entry.tool_name_rule.fullmatch(name) is not None
