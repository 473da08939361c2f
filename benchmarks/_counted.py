"""Every streamed SDK case, and the non-LLM traffic, counted in instructions (valgrind).

CPU time on a shared machine wobbles by more than the effects measured; an instruction
count does not. ``count_streams`` counts each streamed SDK case of ``benchmarks._cases``
bare and instrumented (over the OpenTelemetry SDK's providers, as the CPU run), each in
a fresh process under ``valgrind --tool=callgrind`` that collects only during the N
requests after a warm-up (``benchmarks._instructions``' ``--loop``: start-up, imports and
the export at exit left out; the collector on, as in an app), two processes at once, in
``LAYOUTS`` processes a mode: each has a hash seed and an environment size of its own,
which lay out the interpreter's dicts, sets and heap, and with them its type-cache
collisions, and move one count by a few million instructions (``benchmarks._instructions``'
docstring). The verdict judges the mean; the table gives the added count's spread too.
Counting whole processes instead (with 0 and with N requests, their difference) moved
tooltap's added count on the Chat stream from +25.5 M to +34.8 M between two runs of the
same per-request code. Each counts over recorded responses (``benchmarks._replay``): one
event per read, as from a provider that generates tokens more slowly than the client
parses them. Over the socket, a client slowed down by
valgrind reads several events at once, and every per-read cost (tooltap's taps among
them) shrinks. The replay leaves out the socket and HTTP work, the same in both modes,
so its bare base is smaller than a real client's: the ratio is an upper bound. The
verdict: the same ratio target as CPU time (``TARGET_RATIO``).

The non-LLM cases (a plain POST and GET that tooltap only looks at) add a few microseconds
to requests of about half a millisecond: on a shared machine, less than their CPU time
wobbles between rounds. They are counted too (``count_plain``), over the simulator's socket
rather than a recording (a whole body in one read either way, and the bare base is then a
real client's, HTTP/1.1 work included), ``PLAIN_REQUESTS`` per process, against the
non-LLM target (``TARGET_NON_LLM_RATIO``).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ._cases import CASES, NON_LLM
from ._instructions import _mean
from ._report import TARGET_NON_LLM_RATIO, TARGET_RATIO, _table, _verdict
from ._sim import SimProcess

__all__ = ["LAYOUTS", "count_plain", "count_streams", "layout_means", "layouts_note",
           "plain_checks", "plain_table", "stream_row", "streams_checks",
           "streams_table"]  # fmt: skip

_MODES = ("bare", "tooltap")
#: Processes (hash seed and layout) each counted case is counted in, per mode.
LAYOUTS = 3
#: Requests per counted process of a non-LLM case (each is ~1.5 M instructions).
PLAIN_REQUESTS = 32
#: One counted case's figures (``case``, ``bare``, ``tooltap``, ``added``, ``ratio``...).
Row = dict[str, Any]


def count_streams(
    workload: dict[str, int],
    only: list[str] | None = None,
    requests: int = 4,
    layouts: int = LAYOUTS,
) -> dict[str, Any]:
    """Instructions per request of every streamed SDK case (those ``only`` names, if
    given), bare and instrumented, each the mean of ``layouts`` processes, with the added
    count's spread between them and each response's SSE events."""
    if shutil.which("valgrind") is None:
        return {"skipped": "valgrind not installed"}
    from ._instructions import _events, _instructions
    from ._replay import record

    cases = [c for c in CASES if c.streamed]
    if only:
        cases = [c for c in cases if any(word in c.name for word in only)]
    with SimProcess(**workload) as sim, tempfile.TemporaryDirectory() as tmp:
        recorded = {c.name: Path(tmp) / f"{i}.pickle" for i, c in enumerate(cases)}
        for case in cases:
            record(case, sim.url, recorded[case.name])

        def count(run: tuple[str, str, int]) -> int:
            name, mode, layout = run
            replay = recorded[name]
            return _instructions(name, mode, requests, sim.url, replay, layout, True, loop=True)

        names = [c.name for c in cases]
        runs = [(n, mode, layout) for n in names for layout in range(layouts) for mode in _MODES]
        with ThreadPoolExecutor(max_workers=2) as pool:  # two processes under valgrind at once
            counts = dict(zip(runs, pool.map(count, runs), strict=True))
        events = {name: _events(name, sim.url) for name in names}
    rows = [
        stream_row(name, events[name],
                   *([counts[(name, mode, n)] / requests for n in range(layouts)]
                     for mode in _MODES))
        for name in names
    ]  # fmt: skip
    return {"requests": requests, "layouts": layouts, "rows": rows}


def layout_means(bare: list[float], tooltap: list[float]) -> Row:
    """Per-request counts, one per layout and mode, as their means (``bare``, ``tooltap``,
    ``added``) and the spread of what tooltap added between the layouts (``spread``)."""
    added = [t - b for t, b in zip(tooltap, bare, strict=True)]
    mean_bare, mean_tooltap = _mean(bare), _mean(tooltap)
    return {"bare": mean_bare, "tooltap": mean_tooltap, "added": mean_tooltap - mean_bare,
            "spread": max(added) - min(added)}  # fmt: skip


def stream_row(name: str, events: int, bare: list[float], tooltap: list[float]) -> Row:
    """One counted case's row from its per-request counts, one per layout and mode: the
    means, and the spread of what tooltap added between the layouts."""
    means = layout_means(bare, tooltap)
    return {"case": name, "events": events, **means, "ratio": means["tooltap"] / means["bare"]}


def _checks(
    counted: dict[str, Any], target: str, bound: float, what: str, unit: tuple[float, str]
) -> list[dict[str, str]]:
    """One target row per counted case, its added count in ``unit`` (``what``: the cases,
    when none was counted)."""
    if "skipped" in counted:
        return [{"target": target, "case": what, "value": counted["skipped"],
                 "verdict": "inconclusive"}]  # fmt: skip
    scale, name = unit
    return [
        {"target": target, "case": r["case"],
         "value": f"{r['ratio']:.3f} ({r['added'] / scale:+.1f} {name} per request)",
         "verdict": _verdict(r["ratio"], bound, 1.0)}
        for r in counted["rows"]
    ]  # fmt: skip


def _counted_table(
    title: str,
    counted: dict[str, Any],
    cases: list[dict[str, Any]],
    columns: tuple[list[str], Callable[[Row], list[str]]],
    bound: float,
    footnote: str,
) -> str:
    """A counted section's table: ``columns`` (names, a row's cells) before the ratio in
    instructions, this run's CPU ratio of the same case (where it has one) and the verdict."""
    if "skipped" in counted:
        return title + f"Not counted: {counted['skipped']}.\n"
    cpu = {c["case"]: c["ratio"] for c in cases}
    names, cells = columns
    header = [*names, "ratio (instructions)", "ratio (CPU, this run)", "verdict"]
    body = [
        [*cells(r), f"{r['ratio']:.3f}", f"{cpu[r['case']]:.3f}" if r["case"] in cpu else "-",
         _verdict(r["ratio"], bound, 1.0)]
        for r in counted["rows"]
    ]  # fmt: skip
    return title + _table(header, body) + "\n\n" + footnote


def streams_checks(counted: dict[str, Any]) -> list[dict[str, str]]:
    """The target rows of the counted streamed cases."""
    target = f"ratio ≤ {TARGET_RATIO:g} over the bare SDK, in instructions (valgrind)"
    return _checks(counted, target, TARGET_RATIO, "streamed SDK cases", (1e6, "M"))


def layouts_note(counted: dict[str, Any], spread: str) -> str:
    """What each figure of ``counted`` is the mean of, for a table's footnote (``spread``:
    what the spread column means there); figures of runs before layouts were counted
    came from one process a mode."""
    layouts = counted.get("layouts", 1)
    if layouts == 1:
        return "one process a mode, hash seed 0"
    return (
        f"the mean of {layouts} processes a mode, each with its own hash seed and layout ({spread})"
    )


def _stream_cells(r: Row) -> list[str]:
    spread = r.get("spread")
    return [r["case"], str(r["events"] or "-"), f"{r['bare'] / 1e6:.1f}",
            f"{r['tooltap'] / 1e6:.1f}", f"{r['added'] / 1e6:+.2f}",
            "-" if spread is None else f"{spread / 1e6:.2f}",
            f"{r['added'] / r['events'] / 1e3:+.1f}" if r["events"] else "-"]  # fmt: skip


def streams_table(counted: dict[str, Any], cases: list[dict[str, Any]]) -> str:
    """The counted streamed cases (Markdown), beside this run's CPU ratio where it has one."""
    names = ["case", "SSE events", "bare M", "tooltap M", "added M", "added spread M",
             "added k/event"]  # fmt: skip
    processes = layouts_note(counted, '"added spread": between the least and the most they added')
    return _counted_table(
        "### Streamed SDK cases, counted (valgrind instructions per request, replayed)\n\n",
        counted, cases, (names, _stream_cells), TARGET_RATIO,
        f"Over recorded responses, one event per read (the socket and HTTP work left out of "
        f"both modes: the ratio is an upper bound); the requests alone, "
        f"{counted.get('requests')} per process after one warm-up, the collector on; "
        f"{processes}.\n",
    )  # fmt: skip


def count_plain(workload: dict[str, int], requests: int = PLAIN_REQUESTS) -> dict[str, Any]:
    """Instructions per request of the non-LLM cases, bare and instrumented, over the socket."""
    if shutil.which("valgrind") is None:
        return {"skipped": "valgrind not installed"}
    from ._instructions import _instructions

    runs = [(case.name, mode) for case in NON_LLM for mode in _MODES]
    with SimProcess(**workload) as sim:

        def count(run: tuple[str, str]) -> int:
            name, mode = run
            return _instructions(name, mode, requests, sim.url, None, 0, True, loop=True)

        with ThreadPoolExecutor(max_workers=2) as pool:
            counts = dict(zip(runs, pool.map(count, runs), strict=True))
    rows = []
    for case in NON_LLM:
        bare, tooltap = (counts[(case.name, mode)] / requests for mode in _MODES)
        rows.append({"case": case.name, "bare": bare, "tooltap": tooltap,
                     "added": tooltap - bare, "ratio": tooltap / bare})  # fmt: skip
    return {"requests": requests, "rows": rows}


def plain_checks(counted: dict[str, Any]) -> list[dict[str, str]]:
    """The target rows of the counted non-LLM cases."""
    target = f"non-LLM traffic: ratio ≤ {TARGET_NON_LLM_RATIO:g}, in instructions (valgrind)"
    return _checks(counted, target, TARGET_NON_LLM_RATIO, "non-LLM cases", (1e3, "k"))


def _plain_cells(r: Row) -> list[str]:
    return [r["case"], f"{r['bare'] / 1e3:.0f}", f"{r['tooltap'] / 1e3:.0f}",
            f"{r['added'] / 1e3:+.1f}"]  # fmt: skip


def plain_table(counted: dict[str, Any], cases: list[dict[str, Any]]) -> str:
    """The counted non-LLM cases (Markdown), beside this run's CPU ratio where it has one."""
    return _counted_table(
        "### Non-LLM traffic, counted (valgrind instructions per request, over the socket)\n\n",
        counted, cases, (["case", "bare k", "tooltap k", "added k"], _plain_cells),
        TARGET_NON_LLM_RATIO,
        f"The simulator's responses over its socket; the requests alone, "
        f"{counted.get('requests')} per process after one warm-up; hash seed 0, collector on.\n",
    )  # fmt: skip
