"""What the lifecycle remembers about call ids, bounded: keys and fingerprints of calls.

A provider that re-sends a response re-sends its calls: the same id, name and
arguments. ``fingerprint`` tells that apart from a provider reusing an id for another
call; ``canonical`` keys calls that have no id (Google) by name and arguments.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, TypeVar

from .._core.model import Problem, ToolCall

__all__ = ["Bounded", "canonical", "fingerprint"]

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
    except (TypeError, ValueError):
        return repr(args)


def fingerprint(item: ToolCall | Problem) -> int:
    """A hash of what identifies a received call beside its id: name and arguments.

    A re-sent call is decoded from the same JSON, so its arguments have the same key
    order: ``repr`` tells them apart (types included) at a third of ``canonical``'s cost.
    """
    if isinstance(item, ToolCall):
        try:
            return hash((item.name, repr(item.args)))
        except RecursionError:  # absurdly deep arguments: what arrived, if known
            return hash((item.name, item.raw_arguments))
    return hash((item.name, item.kind, item.received))
