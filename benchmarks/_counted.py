"""Every streamed SDK case counted in instructions (valgrind), beside its CPU time.

CPU time on a shared machine wobbles by more than the effects measured; an instruction
count does not. ``count_streams`` counts each streamed SDK case of ``benchmarks._cases``
bare and instrumented (over the OpenTelemetry SDK's providers, as the CPU run), each in
fresh processes under ``valgrind --tool=cachegrind`` against the simulator (with 0 and
with N requests after a warm-up: the difference cancels start-up and imports; one hash
seed, the collector on, as in an app; see ``benchmarks._instructions``), two processes
at once. The verdict: the same ratio target as CPU time (``TARGET_RATIO``).
"""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ._cases import CASES
from ._report import TARGET_RATIO, _table, _verdict
from ._sim import SimProcess

__all__ = ["count_streams", "streams_checks", "streams_table"]

_MODES = ("bare", "tooltap")


def count_streams(
    workload: dict[str, int], only: list[str] | None = None, requests: int = 4
) -> dict[str, Any]:
    """Instructions per request of every streamed SDK case (those ``only`` names, if
    given), bare and instrumented, with each response's SSE events."""
    if shutil.which("valgrind") is None:
        return {"skipped": "valgrind not installed"}
    from ._instructions import _events, _instructions

    cases = [c.name for c in CASES if c.streamed]
    if only:
        cases = [name for name in cases if any(word in name for word in only)]
    with SimProcess(**workload) as sim:

        def count(run: tuple[str, str, int]) -> int:
            name, mode, n = run
            return _instructions(name, mode, n, sim.url, None, 0, True)

        runs = [(name, mode, n) for name in cases for mode in _MODES for n in (0, requests)]
        with ThreadPoolExecutor(max_workers=2) as pool:  # two processes under valgrind at once
            counts = dict(zip(runs, pool.map(count, runs), strict=True))
        events = {name: _events(name, sim.url) for name in cases}
    rows = []
    for name in cases:
        bare, tooltap = (
            (counts[(name, mode, requests)] - counts[(name, mode, 0)]) / requests for mode in _MODES
        )
        rows.append({"case": name, "events": events[name], "bare": bare, "tooltap": tooltap,
                     "added": tooltap - bare, "ratio": tooltap / bare})  # fmt: skip
    return {"requests": requests, "rows": rows}


def streams_checks(counted: dict[str, Any]) -> list[dict[str, str]]:
    """The target rows of the counted streamed cases."""
    target = f"ratio ≤ {TARGET_RATIO:g} over the bare SDK, in instructions (valgrind)"
    if "skipped" in counted:
        return [{"target": target, "case": "streamed SDK cases", "value": counted["skipped"],
                 "verdict": "inconclusive"}]  # fmt: skip
    return [
        {
            "target": target,
            "case": r["case"],
            "value": f"{r['ratio']:.3f} ({r['added'] / 1e6:+.1f} M per request)",
            "verdict": _verdict(r["ratio"], TARGET_RATIO, 1.0),
        }
        for r in counted["rows"]
    ]


def streams_table(counted: dict[str, Any], cases: list[dict[str, Any]]) -> str:
    """The counted streamed cases (Markdown), beside this run's CPU ratio where it has one."""
    title = "### Streamed SDK cases, counted (valgrind instructions per request)\n\n"
    if "skipped" in counted:
        return title + f"Not counted: {counted['skipped']}.\n"
    cpu = {c["case"]: c["ratio"] for c in cases}
    header = ["case", "SSE events", "bare M", "tooltap M", "added M", "added k/event",
              "ratio (instructions)", "ratio (CPU, this run)", "verdict"]  # fmt: skip
    body = [
        [r["case"], str(r["events"] or "-"), f"{r['bare'] / 1e6:.1f}",
         f"{r['tooltap'] / 1e6:.1f}", f"{r['added'] / 1e6:+.2f}",
         f"{r['added'] / r['events'] / 1e3:+.1f}" if r["events"] else "-",
         f"{r['ratio']:.3f}", f"{cpu[r['case']]:.3f}" if r["case"] in cpu else "-",
         _verdict(r["ratio"], TARGET_RATIO, 1.0)]
        for r in counted["rows"]
    ]  # fmt: skip
    return (title + _table(header, body) + f"\n\nRequests counted per process: "
            f"{counted['requests']}, after one warm-up; hash seed 0, collector on.\n")  # fmt: skip
