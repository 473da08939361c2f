"""Dialect table: one pure module per wire dialect (adding one = one file + one entry)."""

from __future__ import annotations

import importlib
from typing import cast

from ._base import DialectModule

__all__ = ["dialect_module"]

_MODULES: dict[str, str] = {
    "openai.chat": "openai_chat",
    "openai.responses": "openai_responses",
    "anthropic.messages": "anthropic",
    "google.genai": "google",
}


def dialect_module(dialect: str) -> DialectModule:
    """The module that parses ``dialect``; ValueError for an unknown name."""
    try:
        name = _MODULES[dialect]
    except KeyError:
        raise ValueError(
            f"unknown dialect {dialect!r}; expected one of {tuple(_MODULES)}"
        ) from None
    return cast(DialectModule, importlib.import_module(f"{__name__}.{name}"))
