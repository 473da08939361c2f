"""Which open call a new tool result answers: the open-call multimap and the answered memory.

Call ids are only unique within one conversation (``call_0``, ``functions.get:0``), and
Google calls may have none, so open calls are a multimap: by call id and by content key
(a hash of the name and canonical arguments), each also within the call's conversation
scope. A new call never displaces another open call sharing its id. A result is matched
with what its request says about the call it answers (``Wanted``): its id and content
key, only within the request's scope (the conversation id the app or the API names,
else the fingerprint of the conversation as the wire shows it); calls of no scope (a
harness opened them) come after. Within each, a ``previous_response_id``'s calls come
first, then calls whose turn stands at or before the result's call turn (the latest
such), then the oldest. Open calls identical in all of this (two conversations identical
on the wire so far) are indistinguishable, and the oldest is taken.

Open calls keep ids, name and key, never the arguments; the table is bounded by count
and by bytes (the oldest is evicted first). Not thread-safe: the lifecycle locks it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeVar, Union

from opentelemetry.trace import Span, SpanContext

from .._core.model import ModelTurn
from .callids import Bounded, call_key

__all__ = ["Answered", "OpenCall", "OpenCalls", "Scope", "Wanted", "moved_past"]

#: A conversation scope: the id the app or the API names, or the wire's fingerprint.
Scope = str | int | None

_K = TypeVar("_K", bound=Hashable)

#: Bytes an open call costs beside its id and name strings (entry, span handle, indexes:
#: ~750 measured with tracemalloc, five index entries and its scope's).
ENTRY_BYTES: Final = 750
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
    conversation: Scope = None
    response_id: str | None = None
    turn: int | None = None  # history index the call's model turn stands at (or later)
    output: bool = False  # an output tool: the framework consumes it, no result comes
    system: int | None = None  # the system prompt's fingerprint
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
    conversation: Scope = None
    previous_response: str | None = None
    turn: int | None = None  # history index of the model turn holding the call
    system: int | None = None  # the request's system prompt fingerprint


class OpenCalls:
    """Open calls, oldest first, indexed by call id, by call id and content key, and by
    content key.

    Ids are reused across conversations (``call_0`` in every response of some servers),
    so one id can name thousands of open calls, and identical Gemini calls share a key:
    a result is looked up by id, key and scope together, and a slot of several calls is
    ordered and drops one in constant time, so that matching a result costs the same
    with ten open calls of that id as with ten thousand. A slot of one call is the call
    itself. The calls of a scope with a known turn are kept by scope and turn too
    (``horizon``, ``of_scope``): a scope's horizon costs its distinct turns, not its calls."""

    def __init__(self, max_count: int, max_bytes: int) -> None:
        self.max_count = max_count
        self.max_bytes = max_bytes
        self.bytes = 0
        self._seq = 0  # the next entry's age rank
        self._order: OrderedDict[int, OpenCall] = OrderedDict()  # every entry, oldest first
        self._by_id: dict[str, _Slot] = {}
        self._by_id_key: dict[tuple[str, int | None], _Slot] = {}
        self._by_key: dict[int, _Slot] = {}
        self._scoped_id_key: dict[tuple[str, int | None, Scope], _Slot] = {}
        self._scoped_key: dict[tuple[int, Scope], _Slot] = {}
        self._by_scope: dict[Scope, dict[int, dict[int, OpenCall]]] = {}  # turn -> seq -> call

    def __len__(self) -> int:
        return len(self._order)

    def add(self, entry: OpenCall) -> list[OpenCall]:
        """Register ``entry``; return the oldest calls evicted past the bounds."""
        entry.seq = self._seq
        self._seq += 1
        self._order[entry.seq] = entry
        self.bytes += entry.size
        scope, call_id, key = entry.conversation, entry.call_id, entry.key
        puts: list[tuple[dict[Any, _Slot], Hashable]] = []
        if call_id is not None:
            puts += ((self._by_id, call_id), (self._by_id_key, (call_id, key)),
                     (self._scoped_id_key, (call_id, key, scope)))  # fmt: skip
        if key is not None:
            puts += ((self._by_key, key), (self._scoped_key, (key, scope)))
        for index, at in puts:  # each index's slot: the entry, or several by age rank
            slot = index.get(at)
            if slot is None:
                index[at] = entry
            elif isinstance(slot, OpenCall):
                index[at] = OrderedDict(((slot.seq, slot), (entry.seq, entry)))
            else:
                slot[entry.seq] = entry
        if entry.turn is not None and scope is not None:
            self._by_scope.setdefault(scope, {}).setdefault(entry.turn, {})[entry.seq] = entry
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
        scope = entry.conversation
        if entry.call_id is not None:
            _drop(self._by_id, entry.call_id, entry)
            _drop(self._by_id_key, (entry.call_id, entry.key), entry)
            _drop(self._scoped_id_key, (entry.call_id, entry.key, scope), entry)
        if entry.key is not None:
            _drop(self._by_key, entry.key, entry)
            _drop(self._scoped_key, (entry.key, scope), entry)
        if entry.turn is not None and scope is not None:
            turns = self._by_scope.get(scope)
            calls = turns.get(entry.turn) if turns is not None else None
            if turns is not None and calls is not None:
                calls.pop(entry.seq, None)
                if not calls:
                    del turns[entry.turn]
                    if not turns:
                        del self._by_scope[scope]

    def clear(self) -> list[OpenCall]:
        entries = list(self._order.values())
        self._order.clear()
        self._by_id.clear()
        self._by_id_key.clear()
        self._by_key.clear()
        self._scoped_id_key.clear()
        self._scoped_key.clear()
        self._by_scope.clear()
        self.bytes = 0
        return entries

    def horizon(self, scope: Scope) -> int | None:
        """The oldest turn of an open call of ``scope`` (None: none with a known turn)."""
        turns = self._by_scope.get(scope) if scope is not None else None
        return min(turns) if turns else None

    def of_scope(self, scope: Scope, before: int | None = None) -> list[OpenCall]:
        """The open calls of ``scope`` with a known turn (below ``before``), oldest first."""
        turns = self._by_scope.get(scope) if scope is not None else None
        if not turns:
            return []
        out = [
            e for t, calls in turns.items() if before is None or t < before for e in calls.values()
        ]
        if len(turns) > 1:
            out.sort(key=_seq)
        return out

    def by_id(self, wanted: Wanted) -> OpenCall | None:
        """The open call with the wanted id (same content key first, or an unknown key)."""
        call_id = wanted.call_id
        if call_id is None:
            return None
        if wanted.key is None:
            return _best(_calls(self._by_id.get(call_id)), wanted)
        if wanted.conversation is None:
            return _best(_calls(self._by_id_key.get((call_id, wanted.key))), wanted) or _best(
                _calls(self._by_id_key.get((call_id, None))), wanted
            )
        index, scope = self._scoped_id_key, wanted.conversation
        return (
            _best(_calls(index.get((call_id, wanted.key, scope))), wanted)
            or _best(_calls(index.get((call_id, wanted.key, None))), wanted)
            or _best(_calls(index.get((call_id, None, scope))), wanted)
            or _best(_calls(index.get((call_id, None, None))), wanted)
        )

    def by_content(self, wanted: Wanted) -> OpenCall | None:
        """The open call with the wanted content key, whatever its id (rewritten or absent)."""
        if wanted.key is None:
            return None
        if wanted.conversation is None:
            return _best(_calls(self._by_key.get(wanted.key)), wanted)
        index = self._scoped_key
        return _best(_calls(index.get((wanted.key, wanted.conversation))), wanted) or _best(
            _calls(index.get((wanted.key, None))), wanted
        )

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
    """The first entry in the wanted scope (no other stated scope) by: the same scope,
    the previous response's calls, the same system prompt, a turn at or before the wanted
    turn (the latest), an unknown turn, a later turn; then the oldest."""
    best: OpenCall | None = None
    best_rank: tuple[int, int, int, int, int] | None = None
    previous, scope, turn = wanted.previous_response, wanted.conversation, wanted.turn
    system = wanted.system
    floor = (0 if scope is not None else 1, 0 if previous else 1, 0, 0, -(turn or 0))
    for entry in entries:
        if scope is not None and entry.conversation is not None and entry.conversation != scope:
            continue
        at = entry.turn
        if turn is None:
            when = (0, 0)
        elif at is None:
            when = (1, 0)
        else:
            when = (0, -at) if at <= turn else (2, 0)
        rank = (
            0 if scope is not None and entry.conversation == scope else 1,
            0 if previous and entry.response_id == previous else 1,
            0 if entry.system == system else 1,
            *when,
        )
        if best_rank is None or rank < best_rank:
            best, best_rank = entry, rank
            if rank == floor:  # none after it can rank lower
                break
    return best


def moved_past(
    entries: Iterable[OpenCall],
    length: int,
    turns: Iterable[ModelTurn],
    answered: Mapping[object, int],
) -> list[OpenCall]:
    """The open calls of a request's scope that its history (``length`` items, the model
    ``turns`` read) has moved past without a structured result (``answered``: call id or
    content key -> the latest turn a result of the request answers): the model turn where
    the call stands is text only (the result went back as text), or holds the call and is
    followed by more, none of it a result for it. A text turn must name the call's id
    (smolagents writes ``Calling tools: [{'id': ...}]``): conversations opening alike
    share a scope, and another's text turn is not this call's."""
    by_index: dict[int, ModelTurn] | None = None
    out: list[OpenCall] = []
    for entry in entries:
        at = entry.turn
        if at is None or at >= length - 1:
            continue  # nothing after its turn yet
        known = entry.call_id if entry.call_id is not None else entry.key
        if known is not None and answered.get(known, -1) >= at:
            continue
        if by_index is None:
            by_index = {t.index: t for t in turns}
        turn = by_index.get(at)
        as_text = (  # a text turn naming the call (its id, when it has one)
            turn is not None
            and not turn.calls
            and (entry.call_id is None or entry.call_id in turn.text)
        )
        if as_text or any(at <= t.index < length - 1 and _holds(t, entry)
                          for t in by_index.values()):  # fmt: skip
            out.append(entry)
    return out


def _holds(turn: ModelTurn, entry: OpenCall) -> bool:
    if entry.call_id is not None:
        return any(call_id == entry.call_id for call_id, _, _ in turn.calls)
    return any(
        call_id is None and call_key(name, args) == entry.key for call_id, name, args in turn.calls
    )


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
