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

from collections import OrderedDict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Final, TypeVar, Union

from opentelemetry.trace import Span, SpanContext

from .callids import Bounded

__all__ = ["Answered", "OpenCall", "OpenCalls", "Wanted"]

_K = TypeVar("_K", bound=Hashable)

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
    seq: int = -1  # age rank among open calls, set when the table takes it

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
    """Open calls, oldest first, indexed by call id, by call id and content key, and by
    content key.

    Ids are reused across conversations (``call_0`` in every response of some servers),
    so one id can name thousands of open calls, and identical Gemini calls share a key:
    a result is looked up by id and key together, and a slot of several calls is ordered
    and drops one in constant time, so that matching a result costs the same with ten
    open calls of that id as with ten thousand. A slot of one call is the call itself."""

    def __init__(self, max_count: int, max_bytes: int) -> None:
        self.max_count = max_count
        self.max_bytes = max_bytes
        self.bytes = 0
        self._seq = 0  # the next entry's age rank
        self._order: OrderedDict[int, OpenCall] = OrderedDict()  # every entry, oldest first
        self._by_id: dict[str, _Slot] = {}
        self._by_id_key: dict[tuple[str, int | None], _Slot] = {}
        self._by_key: dict[int, _Slot] = {}

    def __len__(self) -> int:
        return len(self._order)

    def add(self, entry: OpenCall) -> list[OpenCall]:
        """Register ``entry``; return the oldest calls evicted past the bounds."""
        entry.seq = self._seq
        self._seq += 1
        self._order[entry.seq] = entry
        self.bytes += entry.size
        if entry.call_id is not None:
            _put(self._by_id, entry.call_id, entry)
            _put(self._by_id_key, (entry.call_id, entry.key), entry)
        if entry.key is not None:
            _put(self._by_key, entry.key, entry)
        evicted = []
        while len(self._order) > 1 and (
            len(self._order) > self.max_count or self.bytes > self.max_bytes
        ):
            evicted.append(self.pop_oldest())
        return evicted

    def oldest(self) -> OpenCall | None:
        return next(iter(self._order.values()), None)

    def pop_oldest(self) -> OpenCall:
        _, entry = self._order.popitem(last=False)
        self._unindex(entry)
        return entry

    def remove(self, entry: OpenCall) -> bool:
        """Take ``entry`` out; whether it was still open."""
        if self._order.get(entry.seq) is not entry:
            return False
        del self._order[entry.seq]
        self._unindex(entry)
        return True

    def _unindex(self, entry: OpenCall) -> None:
        self.bytes -= entry.size
        if entry.call_id is not None:
            _drop(self._by_id, entry.call_id, entry)
            _drop(self._by_id_key, (entry.call_id, entry.key), entry)
        if entry.key is not None:
            _drop(self._by_key, entry.key, entry)

    def clear(self) -> list[OpenCall]:
        entries = list(self._order.values())
        self._order.clear()
        self._by_id.clear()
        self._by_id_key.clear()
        self._by_key.clear()
        self.bytes = 0
        return entries

    def by_id(self, wanted: Wanted) -> OpenCall | None:
        """The open call with the wanted id (same content key first, or an unknown key)."""
        call_id = wanted.call_id
        if call_id is None:
            return None
        if wanted.key is None:
            return _best(_calls(self._by_id.get(call_id)), wanted)
        return _best(_calls(self._by_id_key.get((call_id, wanted.key))), wanted) or _best(
            _calls(self._by_id_key.get((call_id, None))), wanted
        )

    def by_content(self, wanted: Wanted) -> OpenCall | None:
        """The open call with the wanted content key, whatever its id (rewritten or absent)."""
        if wanted.key is None:
            return None
        return _best(_calls(self._by_key.get(wanted.key)), wanted)

    def find(self, wanted: Wanted) -> OpenCall | None:
        """An open call of ``wanted`` not yet run by a handler, else any, without removing it."""
        call_id, key = wanted.call_id, wanted.key
        same: list[OpenCall] = []
        if call_id is not None and key is None:
            same = list(_calls(self._by_id.get(call_id)))
        elif call_id is not None:
            same = [*_calls(self._by_id_key.get((call_id, key))),
                    *_calls(self._by_id_key.get((call_id, None)))]  # fmt: skip
            same.sort(key=_seq)
        elif key is not None:
            same = list(_calls(self._by_key.get(key)))
        return _best((e for e in same if not e.handled), wanted) or _best(same, wanted)


#: The open calls under one index key: the call itself, or several by age rank, oldest first.
_Slot = Union["OpenCall", "OrderedDict[int, OpenCall]"]


def _put(index: dict[_K, _Slot], key: _K, entry: OpenCall) -> None:
    slot = index.get(key)
    if slot is None:
        index[key] = entry
    elif isinstance(slot, OpenCall):
        index[key] = OrderedDict(((slot.seq, slot), (entry.seq, entry)))
    else:
        slot[entry.seq] = entry


def _drop(index: dict[_K, _Slot], key: _K, entry: OpenCall) -> None:
    slot = index.get(key)
    if slot is entry:
        del index[key]
    elif isinstance(slot, OrderedDict):
        slot.pop(entry.seq, None)
        if len(slot) == 1:
            index[key] = next(iter(slot.values()))


def _calls(slot: _Slot | None) -> Iterable[OpenCall]:
    if slot is None:
        return ()
    return (slot,) if isinstance(slot, OpenCall) else slot.values()


def _seq(entry: OpenCall) -> int:
    return entry.seq


def _best(entries: Iterable[OpenCall], wanted: Wanted) -> OpenCall | None:
    """The oldest entry in the wanted scope: the previous response's calls, then the same
    conversation, then calls of no stated conversation."""
    best: OpenCall | None = None
    best_rank = 4
    floor = (0 if wanted.previous_response else 2) + (0 if wanted.conversation else 1)
    for entry in entries:
        if wanted.conversation and entry.conversation and entry.conversation != wanted.conversation:
            continue
        rank = (
            0 if wanted.previous_response and entry.response_id == wanted.previous_response else 2
        )
        rank += 0 if wanted.conversation and entry.conversation == wanted.conversation else 1
        if rank < best_rank:
            best, best_rank = entry, rank
            if rank == floor:  # none after it can rank lower
                break
    return best


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
