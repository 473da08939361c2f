"""How far back a request's history is read, and the fingerprint of its conversation.

A result stands anywhere after its own call's model turn (call A, result A, call B,
result B; or a result, then an assistant "OK", then more). So the history is read from
its end back to the oldest turn that still holds an open call of the request's
conversation (``Reader.horizon`` says which), and never less than the last model turn:
the cost is that tail, not the history.

The fingerprint is what every request of a conversation repeats: its first user turn,
and apart from it the system prompt (with the items before that turn), which a framework
may change for one request (smolagents' last answer after its step limit). Each is a
hash of a bounded prefix of the strings (role and type markers left out, so ``"hi"`` and
``[{"type": "text", "text": "hi"}]`` agree) and their lengths: bounded cost, and no
content kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

__all__ = ["HEAD_ITEMS", "fingerprint", "window"]

#: Leading items a fingerprint reads at most (system and developer messages, first user turn).
HEAD_ITEMS: Final = 4
#: Characters of strings a fingerprint hashes at most, and values it visits at most.
_CHARS: Final = 2048
_NODES: Final = 256
#: Keys whose values say how, not what: they may change between requests of a conversation.
_MARKERS: Final = frozenset({"role", "type", "cache_control", "id"})


def fingerprint(system: Any, values: Any) -> tuple[int | None, int | None]:
    """Hashes of the first user turn of ``values`` (a string ``values`` is that turn) and
    of ``system`` with the items before that turn; None when there is nothing to hash."""
    head: list[object] = []
    first: list[object] = []
    _leaves(system, head, [_CHARS, _NODES])
    if isinstance(values, str):
        _leaves(values, first, [_CHARS, _NODES])
    elif isinstance(values, list):
        for item in values[:HEAD_ITEMS]:
            if (type(item) is dict or isinstance(item, Mapping)) and item.get("role") == "user":
                _leaves(item, first, [_CHARS, _NODES])
                break
            _leaves(item, head, [_CHARS, _NODES])
    return (hash(tuple(first)) if first else None), (hash(tuple(head)) if head else None)


def _leaves(value: Any, out: list[object], budget: list[int]) -> None:
    """Append the strings (cut to the budget) and their lengths under ``value``."""
    if budget[1] <= 0 or budget[0] <= 0:
        return
    budget[1] -= 1
    if isinstance(value, str):
        out.append(value[: budget[0]])
        out.append(len(value))
        budget[0] -= len(value)
    elif type(value) is dict or isinstance(value, Mapping):
        for key, item in value.items():
            if key not in _MARKERS:
                _leaves(item, out, budget)
    elif isinstance(value, list):
        for item in value:
            _leaves(item, out, budget)


def window(
    values: list[Any],
    horizon: int | None,
    is_model: Callable[[Mapping[str, Any]], bool],
    runs: bool = False,
) -> tuple[list[tuple[int, Mapping[str, Any], bool]], int, int]:
    """The items read, oldest first, as ``(index, item, is a model turn)``; how many items
    are not objects; the index of the last model item (-1: none).

    Read from the end back to ``horizon`` (None: nothing older is wanted), and at least to
    the last model turn (with ``runs``, the run of model items ending there, as Responses
    output items are).
    """
    read: list[tuple[int, Mapping[str, Any], bool]] = []
    skipped = 0
    last = -1
    stop = len(values) if horizon is None else horizon
    in_run = False
    for i in range(len(values) - 1, -1, -1):
        item = values[i]
        if not (type(item) is dict or isinstance(item, Mapping)):
            skipped += 1
            continue
        model = is_model(item)
        if last >= 0 and not (in_run and model) and i < stop:
            break
        in_run = runs and model
        if model and last < 0:
            last = i
        read.append((i, item, model))
    read.reverse()
    return read, skipped, last
