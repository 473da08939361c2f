"""The open-call table against a plain model of it: one list, oldest first, scanned whole.

The table indexes calls by id, then content key, and by content key, so that ids reused
across conversations (``call_0`` in every response) and identical Gemini calls stay cheap
to match; whatever the indexes, every lookup must pick the call the plain scan picks.
"""

from __future__ import annotations

import random

from tooltap._telemetry.correlate import OpenCall, OpenCalls, Wanted

IDS = ("call_0", "call_1", None)
KEYS = (11, 12, 13, None)
CONVERSATIONS = ("conv_a", "conv_b", None)
RESPONSES = ("resp_1", "resp_2", None)
TURNS = (2, 4, 6, None)
SYSTEMS = (101, 102, None)


def _entry(rng: random.Random, n: int) -> OpenCall:
    entry = OpenCall(None, rng.choice(IDS), f"tool{n % 3}", n, rng.choice(KEYS), "openai",
                     "tool", "ok", float(n), rng.choice(CONVERSATIONS),
                     turn=rng.choice(TURNS), system=rng.choice(SYSTEMS))  # fmt: skip
    entry.response_id = rng.choice(RESPONSES)
    return entry


def _wanted(rng: random.Random) -> Wanted:
    return Wanted(rng.choice(IDS), rng.choice(KEYS), rng.choice(CONVERSATIONS),
                  rng.choice(RESPONSES), rng.choice(TURNS), rng.choice(SYSTEMS))  # fmt: skip


def _best(entries: list[OpenCall], wanted: Wanted) -> OpenCall | None:
    """The entry first by (of the same conversation, from the previous response, of the
    same system prompt, its turn at or before the wanted one and the latest such, of no
    known turn, later, oldest), among those not of another stated conversation."""

    def order(entry: OpenCall) -> tuple[bool, bool, bool, int, int, float]:
        previous = bool(wanted.previous_response) and entry.response_id == wanted.previous_response
        same = bool(wanted.conversation) and entry.conversation == wanted.conversation
        if wanted.turn is None:
            when = (0, 0)
        elif entry.turn is None:
            when = (1, 0)
        else:
            when = (0, -entry.turn) if entry.turn <= wanted.turn else (2, 0)
        return (not same, not previous, entry.system != wanted.system, *when, entry.started)

    scope = [
        e
        for e in entries
        if not (wanted.conversation and e.conversation and e.conversation != wanted.conversation)
    ]
    return min(scope, key=order) if scope else None


class Model:
    """The table's semantics as plain scans of one list, oldest first."""

    def __init__(self, max_count: int) -> None:
        self.entries: list[OpenCall] = []
        self.max_count = max_count

    def add(self, entry: OpenCall) -> list[OpenCall]:
        self.entries.append(entry)
        evicted = []
        while len(self.entries) > max(1, self.max_count):
            evicted.append(self.entries.pop(0))
        return evicted

    def by_id(self, wanted: Wanted) -> OpenCall | None:
        if wanted.call_id is None:
            return None
        same = [e for e in self.entries if e.call_id == wanted.call_id]
        if wanted.key is None:
            return _best(same, wanted)
        return _best([e for e in same if e.key == wanted.key], wanted) or _best(
            [e for e in same if e.key is None], wanted
        )

    def by_content(self, wanted: Wanted) -> OpenCall | None:
        if wanted.key is None:
            return None
        return _best([e for e in self.entries if e.key == wanted.key], wanted)

    def find(self, wanted: Wanted) -> OpenCall | None:
        if wanted.call_id is not None:
            pool = [e for e in self.entries if e.call_id == wanted.call_id]
        else:
            pool = [e for e in self.entries if wanted.key is not None and e.key == wanted.key]
        same = [e for e in pool if wanted.key is None or e.key is None or e.key == wanted.key]
        return _best([e for e in same if not e.handled], wanted) or _best(same, wanted)

    def remove(self, entry: OpenCall) -> bool:
        if entry in self.entries:
            self.entries.remove(entry)
            return True
        return False


def test_every_lookup_picks_what_a_scan_of_every_open_call_picks() -> None:
    for seed in range(20):
        rng = random.Random(seed)
        table, model = OpenCalls(max_count=40, max_bytes=1 << 30), Model(40)
        removed: list[OpenCall] = []
        for n in range(1500):
            op = rng.random()
            if op < 0.45:
                entry = _entry(rng, n)
                assert table.add(entry) == model.add(entry)
            elif op < 0.75:
                wanted = _wanted(rng)
                got = table.by_id(wanted)
                assert got is model.by_id(wanted)
                got = got or table.by_content(wanted)
                assert got is (model.by_id(wanted) or model.by_content(wanted))
                if got is not None:
                    assert table.remove(got) and model.remove(got)
                    removed.append(got)
            elif op < 0.85:
                wanted = _wanted(rng)
                found = table.find(wanted)
                assert found is model.find(wanted)
                if found is not None:
                    found.handled = True
            elif op < 0.92 and model.entries:
                assert table.pop_oldest() is model.entries.pop(0)
            elif removed:
                assert not table.remove(rng.choice(removed))  # gone already: stays gone
            assert len(table) == len(model.entries)
            assert table.oldest() is (model.entries[0] if model.entries else None)
            _check_scopes(table, model.entries)


def _check_scopes(table: OpenCalls, entries: list[OpenCall]) -> None:
    """``horizon`` and ``of_scope`` say what a scan of every open call says."""
    for scope in CONVERSATIONS[:2]:
        known = [e for e in entries if e.conversation == scope and e.turn is not None]
        assert table.horizon(scope) == min((e.turn for e in known if e.turn is not None),
                                           default=None)  # fmt: skip
        assert table.of_scope(scope) == known
        for before in TURNS[:3]:
            below = [e for e in known if e.turn is not None and e.turn < before]
            assert table.of_scope(scope, before) == below


def test_thousands_of_open_calls_sharing_one_id_each_get_their_own_result() -> None:
    table = OpenCalls(max_count=10_000, max_bytes=1 << 30)
    entries = [OpenCall(None, "call_0", "get_weather", 0, 1000 + n, "openai", "get_weather",
                        "ok", float(n)) for n in range(5000)]  # fmt: skip
    for entry in entries:
        table.add(entry)
    order = list(entries)
    random.Random(7).shuffle(order)
    for entry in order:
        got = table.by_id(Wanted("call_0", entry.key))
        assert got is entry
        assert table.remove(got)
    assert len(table) == 0 and table.bytes == 0
    assert table.by_id(Wanted("call_0", None)) is None


def test_identical_calls_without_ids_are_answered_oldest_first() -> None:
    table = OpenCalls(max_count=10_000, max_bytes=1 << 30)
    entries = [OpenCall(None, None, "lookup", 0, 42, "gcp.gemini", "lookup", "ok", float(n))
               for n in range(3000)]  # fmt: skip
    for entry in entries:
        table.add(entry)
    for entry in entries:
        got = table.by_content(Wanted(None, 42))
        assert got is entry
        table.remove(got)
    assert len(table) == 0
