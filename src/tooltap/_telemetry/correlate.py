"""Which open call a new tool result answers: the open-call multimap and the answered memory.

Call ids are only unique within one conversation (``call_0``, ``functions.get:0``), and
Google calls may have none, so open calls are a multimap: by call id and by content key
(a hash of the name and canonical arguments). A new call never displaces another open
call sharing its id. A result is matched with what its request says about the call it
answers (``Wanted``): its id and content key, in the request's conversation and, for a
``previous_response_id``, that response's calls first; identical open calls (two users,
same question) are indistinguishable, and the oldest is taken.

Open calls keep ids, name and key, never the arguments; the table is bounded by count
and by bytes (the oldest is evicted first). Not thread-safe: the lifecycle locks it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from opentelemetry.trace import Span, SpanContext

from .callids import Bounded

__all__ = ["Answered", "OpenCall", "OpenCalls", "Wanted"]

#: Bytes an open call costs beside its id and name strings (entry, span handle, indexes).
ENTRY_BYTES: Final = 400
#: Distinct result digests remembered per answered call.
_DIGESTS: Final = 8


@dataclass(slots=True, eq=False)
class OpenCall:
    """One open call: its ``execute_tool`` span (None: a truncated call, never run)."""

    span: Span | None
    call_id: str | None
    name: str
    index: int
    key: int | None  # name + canonical arguments; None when they were unusable
    provider: str
    label: str
    outcome: str
    started: float
    conversation: str | None = None
    response_id: str | None = None
    handled: bool = False
    handler_error: str | None = None
    broken: bool = False  # arrived whole but unusable: ``outcome`` is the problem kind

    @property
    def context(self) -> SpanContext | None:
        return self.span.get_span_context() if self.span is not None else None

    @property
    def size(self) -> int:
        return ENTRY_BYTES + len(self.call_id or "") + len(self.name)


@dataclass(frozen=True, slots=True)
class Wanted:
    """The call a result answers, as its request tells it."""

    call_id: str | None
    key: int | None
    conversation: str | None = None
    previous_response: str | None = None


class OpenCalls:
    """Open calls, oldest first, indexed by call id and by content key."""

    def __init__(self, max_count: int, max_bytes: int) -> None:
        self.max_count = max_count
        self.max_bytes = max_bytes
        self.bytes = 0
        self._order: dict[int, OpenCall] = {}  # id(entry) -> entry, oldest first
        self._by_id: dict[str, list[OpenCall]] = {}
        self._by_key: dict[int, list[OpenCall]] = {}

    def __len__(self) -> int:
        return len(self._order)

    def add(self, entry: OpenCall) -> list[OpenCall]:
        """Register ``entry``; return the oldest calls evicted past the bounds."""
        self._order[id(entry)] = entry
        self.bytes += entry.size
        if entry.call_id is not None:
            self._by_id.setdefault(entry.call_id, []).append(entry)
        if entry.key is not None:
            self._by_key.setdefault(entry.key, []).append(entry)
        evicted = []
        while len(self._order) > 1 and (
            len(self._order) > self.max_count or self.bytes > self.max_bytes
        ):
            evicted.append(self.pop_oldest())
        return evicted

    def oldest(self) -> OpenCall | None:
        return next(iter(self._order.values()), None)

    def pop_oldest(self) -> OpenCall:
        entry = next(iter(self._order.values()))
        self.remove(entry)
        return entry

    def remove(self, entry: OpenCall) -> bool:
        """Take ``entry`` out; whether it was still open."""
        if self._order.pop(id(entry), None) is None:
            return False
        self.bytes -= entry.size
        _drop(self._by_id, entry.call_id, entry)
        _drop(self._by_key, entry.key, entry)
        return True

    def clear(self) -> list[OpenCall]:
        entries = list(self._order.values())
        self._order.clear()
        self._by_id.clear()
        self._by_key.clear()
        self.bytes = 0
        return entries

    def by_id(self, wanted: Wanted) -> OpenCall | None:
        """The open call with the wanted id (same content key first, or an unknown key)."""
        if wanted.call_id is None:
            return None
        same = self._by_id.get(wanted.call_id, ())
        if wanted.key is None:
            return _best(same, wanted)
        return _best((e for e in same if e.key == wanted.key), wanted) or _best(
            (e for e in same if e.key is None), wanted
        )

    def by_content(self, wanted: Wanted) -> OpenCall | None:
        """The open call with the wanted content key, whatever its id (rewritten or absent)."""
        if wanted.key is None:
            return None
        return _best(self._by_key.get(wanted.key, ()), wanted)

    def find(self, wanted: Wanted) -> OpenCall | None:
        """An open call of ``wanted`` not yet run by a handler, else any, without removing it."""
        if wanted.call_id is not None:
            pool: Iterable[OpenCall] = self._by_id.get(wanted.call_id, ())
        else:
            pool = self._by_key.get(wanted.key, ()) if wanted.key is not None else ()
        same = [e for e in pool if wanted.key is None or e.key is None or e.key == wanted.key]
        return _best((e for e in same if not e.handled), wanted) or _best(same, wanted)


def _best(entries: Iterable[OpenCall], wanted: Wanted) -> OpenCall | None:
    """The oldest entry in the wanted scope: the previous response's calls, then the same
    conversation, then calls of no stated conversation."""
    best: OpenCall | None = None
    best_rank = 4
    for entry in entries:
        if wanted.conversation and entry.conversation and entry.conversation != wanted.conversation:
            continue
        rank = (
            0 if wanted.previous_response and entry.response_id == wanted.previous_response else 2
        )
        rank += 0 if wanted.conversation and entry.conversation == wanted.conversation else 1
        if rank < best_rank:
            best, best_rank = entry, rank
            if rank == 0:
                break
    return best


def _drop(index: dict[str, list[OpenCall]] | dict[int, list[OpenCall]], key: object,
          entry: OpenCall) -> None:  # fmt: skip
    if key is None:
        return
    entries = index.get(key)  # type: ignore[call-overload]
    if entries is None:
        return
    for i, other in enumerate(entries):
        if other is entry:
            del entries[i]
            break
    if not entries:
        del index[key]  # type: ignore[arg-type]


#: What identifies an answered call across re-sends of one request: hashes of its id,
#: content key, position in the model turn, and the request's conversation.
Identity = tuple[int, int, int, int]


class Answered:
    """Results already accounted, per answered call: digest -> most seen in one request."""

    def __init__(self, cap: int) -> None:
        self._memory: Bounded[Identity, dict[int, int]] = Bounded(cap)

    def get(self, identity: Identity) -> dict[int, int] | None:
        return self._memory.get(identity)

    def put(self, identity: Identity, counts: dict[int, int]) -> None:
        known = self._memory.get(identity) or {}
        merged = dict(known)
        for digest, count in counts.items():
            if digest in merged or len(merged) < _DIGESTS:
                merged[digest] = max(merged.get(digest, 0), count)
        self._memory.put(identity, merged)

    def clear(self) -> None:
        self._memory.clear()
