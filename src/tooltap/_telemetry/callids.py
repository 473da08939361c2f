"""Bounded memories and the content key of a call: its name and canonical arguments.

The key is the same for a call as the response delivered it and as a later request's
history carries it back (re-serialized, keys reordered), so it identifies a call whose
id was rewritten, reused across conversations, or absent (Google).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, TypeVar

__all__ = ["Bounded", "call_key", "canonical"]

_K = TypeVar("_K")
_V = TypeVar("_V")


class Bounded(OrderedDict[_K, _V]):
    """A memory of keys that forgets the least recently put past ``cap`` keys."""

    def __init__(self, cap: int) -> None:
        super().__init__()
        self.cap = cap

    def put(self, key: _K, value: _V) -> None:
        """Set ``key`` as the most recent one; forget the oldest past the cap."""
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.cap:
            self.popitem(last=False)


def canonical(args: Mapping[str, Any] | None) -> str:
    """Arguments as canonical JSON (sorted keys, no spaces)."""
    try:
        return json.dumps(args or {}, sort_keys=True, separators=(",", ":"), default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(args)


def call_key(name: str | None, args: Mapping[str, Any] | None) -> int | None:
    """A hash of ``name`` and the canonical JSON of ``args`` (None when args are unknown)."""
    if args is None:
        return None
    return hash((name or "", canonical(args)))
