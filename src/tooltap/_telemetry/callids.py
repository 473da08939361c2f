"""Bounded memories and the content key of a call: its name and canonical arguments.

The key is the same for a call as the response delivered it and as a later request's
history carries it back (re-serialized, keys reordered), so it identifies a call whose
id was rewritten, reused across conversations, or absent (Google).

Two arguments get the same key when their canonical JSON (sorted keys, no spaces) is the
same text. Arguments of plain JSON types (what a decoder returns) are hashed as a tagged
tree instead of being encoded: each value is told from any other value of another JSON
type (``1``, ``1.0`` and ``true`` differ, as their JSON does), tuples count as the lists
JSON makes of them, floats by their JSON repr. Anything else is encoded to canonical JSON
first and hashed as the tree that JSON decodes to, so both ways agree.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, TypeVar

from .._core._deep_json import dumps

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
    except RecursionError:  # nested deeper than the C encoder goes
        return dumps(args or {}, sort_keys=True)
    except (TypeError, ValueError):
        return repr(args)


class _Tag:
    """Marks a JSON type in a hashed tree: no argument value is ever one."""

    __slots__ = ()


_OBJECT, _ARRAY, _NUMBER, _TRUE, _FALSE = (_Tag() for _ in range(5))


class _NotPlain(Exception):
    """A value of a type a JSON decoder never returns."""


def _tree(value: Any) -> Any:
    """A hashable stand-in for plain decoded JSON, equal where the canonical JSON is."""
    kind = type(value)
    if kind is str or kind is int or value is None:
        return value
    if kind is dict:
        items = []
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlain
            kind = type(item)
            items.append((key, item if kind is str or kind is int else _tree(item)))
        items.sort()  # keys are distinct: values are never compared
        return (_OBJECT, *items)
    if kind is list or kind is tuple:
        return (_ARRAY, *[v if type(v) is str or type(v) is int else _tree(v) for v in value])
    if kind is float:
        return (_NUMBER, repr(value))
    if kind is bool:
        return _TRUE if value else _FALSE
    raise _NotPlain


def call_key(name: str | None, args: Mapping[str, Any] | None) -> int | None:
    """A hash of ``name`` and the canonical JSON of ``args`` (None when args are unknown)."""
    if args is None:
        return None
    try:
        return hash((name or "", _tree(args)))
    except (_NotPlain, RecursionError):
        pass
    text = canonical(args)
    try:
        return hash((name or "", _tree(json.loads(text))))
    except (ValueError, RecursionError, _NotPlain):
        return hash((name or "", text))  # not JSON at all (``repr``): its text
