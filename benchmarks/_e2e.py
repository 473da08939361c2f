"""Bare SDK vs tooltap, interleaved in one process: client CPU, TTFC and peak memory per case.

Each round runs every case bare and instrumented back to back (tooltap toggled by
``instrument()``/``uninstrument()``, the order flipped every round). A case that is not
streamed also runs instrumented over OpenTelemetry's no-op providers (``noop``): the
difference to the bare run is tooltap's own work, the rest the OpenTelemetry SDK's on the
spans and metric points; and each of its samples is the mean of ``repeat`` requests (one
takes a few milliseconds). An SDK case also runs under every installed peer instrumentation
(``benchmarks._peers``) that exports a span for it in the warm-up, in the same rounds. The
figures are the best (least) sample of each mode; medians and every sample are in the JSON
too. A mode's least sample is its cost once a second sample came within ``SETTLED`` of it;
a case short of that in any mode runs more rounds (all its modes, still interleaved), up to
``MORE_ROUNDS`` times as many: on a shared 2-core machine, runs of several cases saw over
half the samples of a mode take 1.5 to 2 times its least, and once all eight of one
mode's (1.65 for a case that measured 1.05 alone). Peak memory is ``tracemalloc``'s peak
over one request of each case and mode, after one request of it untraced: the first
request after ``instrument()`` also sets up what later ones reuse (about 40 KiB more on
the async Chat stream).
"""

from __future__ import annotations

import gc
import statistics
import time
import tracemalloc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._cases import Case, close_client
from ._otel import Toggle
from ._peers import PEERS, Peer, sdk_of

__all__ = ["MORE_ROUNDS", "SETTLED", "CaseResult", "cpu_figures", "measure", "settled"]

MODES = ("bare", "tooltap", "noop")
#: Two least samples of a mode within this fraction of each other: its cost is settled.
SETTLED = 0.03
#: A case whose modes have not all settled runs up to this many times the rounds asked for.
MORE_ROUNDS = 3
#: Why a peer that instruments a case's SDK exports no span for it, where it is known.
_NO_SPAN = {
    ("OpenTelemetry contrib", "openai.responses"): (
        "openai-v2 instruments Chat Completions and embeddings, not the Responses API"
    ),
}


@dataclass
class CaseResult:
    """Samples of one case in both modes."""

    case: Case
    events: int  # SSE events in one response (0 for whole bodies)
    cpu: dict[str, list[float]] = field(default_factory=lambda: {m: [] for m in MODES})
    ttfc: dict[str, list[float]] = field(default_factory=lambda: {m: [] for m in MODES})
    peak: dict[str, int] = field(default_factory=dict)
    items: int = 0
    repeat: int = 1  # requests per sample
    #: The peers measured on this case, and those not, with the reason.
    peers: list[Peer] = field(default_factory=list)
    unsupported: dict[str, str] = field(default_factory=dict)
    #: Whether the run took more rounds to settle the modes (not a smoke run's one round).
    settling: bool = True

    @property
    def settled(self) -> bool:
        """Whether every mode's least sample has a second one within ``SETTLED`` of it."""
        return all(settled(self.cpu[mode]) for mode in self.modes)

    @property
    def modes(self) -> tuple[str, ...]:
        """The modes this case runs in: ``noop`` too for a whole body of LLM traffic; the
        peers measured on it."""
        own = MODES if self.case.dialect and not self.case.streamed else MODES[:2]
        return own + tuple(p.name for p in self.peers)

    def best(self, mode: str) -> float:
        """Least client CPU seconds per request: the sample the shared machine disturbed
        least (noise here only ever adds CPU time: a busy host's steal, cold caches)."""
        return min(self.cpu[mode])

    def summary(self) -> dict[str, Any]:
        """The figures of the table, as JSON-ready values (µs, ms, bytes)."""
        cpu_ms = {m: [x * 1e3 for x in self.cpu[m]] for m in self.modes}
        figures = cpu_figures(cpu_ms, self.events, [p.name for p in self.peers])
        paired = [t - b for b, t in zip(self.cpu["bare"], self.cpu["tooltap"], strict=True)]
        out: dict[str, Any] = {
            "case": self.case.name,
            "dialect": self.case.dialect,
            "streamed": self.case.streamed,
            "events": self.events,
            "app_items": self.items,
            "samples": len(self.cpu["bare"]),
            "settled": self.settled if self.settling else None,
            "requests_per_sample": self.repeat,
            **{key: value for key, value in figures.items() if key != "peers"},
            "bare_cpu_ms_median": statistics.median(self.cpu["bare"]) * 1e3,
            "tooltap_cpu_ms_median": statistics.median(self.cpu["tooltap"]) * 1e3,
            "added_cpu_ms_median_of_pairs": statistics.median(paired) * 1e3,
            "cpu_ms_samples": cpu_ms,
        }
        out["peers"] = {
            p.name: {**figures["peers"][p.name], **self._peer_extra(p.name)} for p in self.peers
        }
        out["peers_not_measured"] = dict(self.unsupported)
        for mode in MODES[:2]:
            samples = self.ttfc[mode]
            out[f"{mode}_ttfc_ms"] = min(samples) * 1e3 if samples else None
            out[f"{mode}_ttfc_ms_median"] = statistics.median(samples) * 1e3 if samples else None
            if mode in self.peak:
                out[f"{mode}_peak_kib"] = self.peak[mode] / 1024
        return out

    def _peer_extra(self, name: str) -> dict[str, Any]:
        """A peer's figures besides its CPU ones: its median, TTFC and samples."""
        ttfc = self.ttfc[name]
        return {
            "cpu_ms_median": statistics.median(self.cpu[name]) * 1e3,
            "ttfc_ms": min(ttfc) * 1e3 if ttfc else None,
            "cpu_ms_samples": [x * 1e3 for x in self.cpu[name]],
        }


def cpu_figures(
    cpu_ms: Mapping[str, Sequence[float]], events: int | None, peers: Sequence[str], rank: int = 0
) -> dict[str, Any]:
    """A case's CPU figures (ms, µs an event) from the ``rank``-th least sample of each mode
    (0: the least, the table's; 1: the second least, which judges a case that did not
    settle): bare and tooltap, their ratio and difference; with ``noop`` samples, tooltap's
    own work and the OpenTelemetry SDK's; each of ``peers`` against bare."""

    def pick(values: Sequence[float]) -> float:
        return sorted(values)[min(rank, len(values) - 1)]

    def against(cost: float) -> dict[str, Any]:
        return {
            "ratio": cost / bare if bare else None,
            "added_cpu_ms": cost - bare,
            "added_us_per_event": (cost - bare) * 1e3 / events if events else None,
        }

    bare, inst = pick(cpu_ms["bare"]), pick(cpu_ms["tooltap"])
    noop = pick(cpu_ms["noop"]) if cpu_ms.get("noop") else None
    costs = {name: pick(cpu_ms[name]) for name in peers}
    return {
        "noop_cpu_ms": noop,
        "own_added_ms": None if noop is None else noop - bare,
        "otel_sdk_ms": None if noop is None else inst - noop,
        "bare_cpu_ms": bare,
        "tooltap_cpu_ms": inst,
        **against(inst),
        "peers": {name: {"cpu_ms": cost, **against(cost)} for name, cost in costs.items()},
    }


def settled(samples: Sequence[float], within: float = SETTLED) -> bool:
    """Whether the second least of ``samples`` is within ``within`` of the least: the
    least is then a cost the machine gave twice, not one lucky or disturbed sample."""
    if len(samples) < 2:
        return False
    least, second = sorted(samples)[:2]
    return second <= least * (1 + within)


def _one(case: Case, client: Any, toggle: Toggle, repeat: int) -> tuple[float, int, float | None]:
    """CPU seconds per request over ``repeat`` timed requests. The span exports that
    earlier requests left pending run before the clock starts; these requests' own are
    flushed before it stops (their own cost)."""
    gc.collect()
    toggle.tracer_provider.force_flush()
    start = time.process_time()
    for _ in range(repeat):
        items, ttfc = case.run(client)
    toggle.tracer_provider.force_flush()
    return (time.process_time() - start) / repeat, items, ttfc


def measure(
    cases: tuple[Case, ...],
    url: str,
    toggle: Toggle,
    *,
    rounds: int,
    events: dict[str, int],
    peak: bool = True,
    repeat: int = 1,
    peer_cases: frozenset[str] = frozenset(),
    more: int = MORE_ROUNDS,
) -> list[CaseResult]:
    """Interleave bare, instrumented and peer rounds (order flipped every round) over
    ``cases``; ``repeat`` requests per sample of a whole-body case. The peers run on the
    cases named in ``peer_cases``. A case whose modes have not settled after ``rounds``
    runs more, up to ``more`` times as many."""
    clients = {case.name: case.make(url) for case in cases}
    results = [
        CaseResult(
            c,
            events.get(c.dialect, 0) if c.streamed else 0,
            repeat=1 if c.streamed else repeat,
            settling=more > 1,
        )
        for c in cases
    ]
    for mode in MODES:  # warm-up: imports, connections, caches, validators
        _set(toggle, mode)
        for case in cases:
            case.run(clients[case.name])
    _warm_peers(toggle, [r for r in results if r.case.name in peer_cases], clients)
    for index in range(rounds * more):
        pending = results if index < rounds else [r for r in results if not r.settled]
        if not pending:
            break
        for result in pending:  # each case in every mode back to back, order flipped
            modes = result.modes
            for mode in modes if index % 2 == 0 else modes[::-1]:
                _set(toggle, mode, result.peers)
                cpu, items, ttfc = _one(
                    result.case, clients[result.case.name], toggle, result.repeat
                )
                result.cpu[mode].append(cpu)
                result.items = items
                if ttfc is not None:
                    result.ttfc[mode].append(ttfc)
    if peak:
        for mode in MODES[:2]:
            _set(toggle, mode)
            for result in results:
                result.case.run(clients[result.case.name])  # (see the module's notes)
                gc.collect()
                tracemalloc.start()
                result.case.run(clients[result.case.name])
                result.peak[mode] = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
    toggle.bare()
    for case in cases:
        close_client(case, clients[case.name])
    return results


def _warm_peers(toggle: Toggle, results: list[CaseResult], clients: dict[str, Any]) -> None:
    """Warm every installed peer up on the cases of its SDK; keep it on those where it
    exported a span, and say why not on the others."""
    peers = toggle.peers
    for peer in peers.installed:
        for result in results:
            sdk = sdk_of(result.case.dialect)
            gap = peers.gap(peer, sdk) if sdk else "instruments no such traffic"
            if gap:
                result.unsupported[peer.name] = gap
                continue
            toggle.peer(peer)
            toggle.tracer_provider.force_flush()
            before = toggle.exporter.spans
            result.case.run(clients[result.case.name])
            toggle.tracer_provider.force_flush()
            if toggle.exporter.spans > before:
                result.peers.append(peer)
                result.cpu[peer.name], result.ttfc[peer.name] = [], []
            else:
                result.unsupported[peer.name] = _NO_SPAN.get(
                    (peer.name, result.case.dialect), "exported no span for this case"
                )
    for peer in PEERS:  # not installed at all
        if peer not in peers.installed:
            for result in results:
                result.unsupported[peer.name] = "not installed (scripts/bench installs it)"
    toggle.bare()


def _set(toggle: Toggle, mode: str, peers: Sequence[Peer] = ()) -> None:
    """Put ``toggle`` in ``mode``: bare, tooltap, noop, or one of ``peers`` by name."""
    own = {"bare": toggle.bare, "tooltap": toggle.instrumented, "noop": toggle.noop}
    if mode in own:
        own[mode]()
    else:
        toggle.peer(next(p for p in peers if p.name == mode))
