"""Instruction counts (valgrind): tooltap's added work on one case, free of machine noise.

``python -m benchmarks._instructions "anthropic create"`` runs the case in four fresh
processes under ``valgrind --tool=cachegrind`` (bare and instrumented, each after one
warm-up request, with 0 and with N more requests) against the simulator, and prints the
instructions per request of each mode and tooltap's share: the difference of the two runs
cancels start-up and imports. Slow (minutes per process), deterministic to a fraction of
a percent where the CPU-time benchmark of a shared machine wobbles by ten percent.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

from ._sim import SimProcess

__all__ = ["main"]

_ROOT = Path(__file__).resolve().parent.parent
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def _child(name: str, mode: str, count: int, url: str) -> None:
    from ._cases import CASES, close_client
    from ._otel import Toggle

    warnings.simplefilter("ignore")
    case = next(c for c in CASES if c.name.startswith(name))
    toggle = Toggle()
    client = case.make(url)
    if mode == "tooltap":
        toggle.instrumented()
    for _ in range(count + 1):
        case.run(client)
    close_client(case, client)
    toggle.close()


def _instructions(name: str, mode: str, count: int, url: str) -> int:
    argv = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    argv += [sys.executable, "-m", "benchmarks._instructions", "--child", name, mode, str(count)]
    run = subprocess.run(argv + [url], cwd=_ROOT, capture_output=True, text=True, check=True)
    found = _REFS.search(run.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output: {run.stderr[-500:]}")
    return int(found.group(1).replace(",", ""))


def main(argv: list[str] | None = None) -> None:
    """Print instructions per request, bare and instrumented, for one case."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks._instructions")
    parser.add_argument("case", nargs="?", help="the start of a case name, e.g. 'anthropic create'")
    parser.add_argument("--requests", type=int, default=4)
    parser.add_argument("--smoke", action="store_true", help="the smoke workload")
    parser.add_argument("--child", nargs=4, metavar=("CASE", "MODE", "N", "URL"), help="internal")
    args = parser.parse_args(argv)
    if args.child:
        name, mode, count, url = args.child
        _child(name, mode, int(count), url)
        return
    if shutil.which("valgrind") is None or not args.case:
        parser.error("needs valgrind installed, and a case")
    from .__main__ import SMOKE_WORKLOAD, WORKLOAD

    with SimProcess(**(SMOKE_WORKLOAD if args.smoke else WORKLOAD)) as sim:
        per = {}
        for mode in ("bare", "tooltap"):
            start = _instructions(args.case, mode, 0, sim.url)
            end = _instructions(args.case, mode, args.requests, sim.url)
            per[mode] = (end - start) / args.requests
    added = per["tooltap"] - per["bare"]
    print(
        f"{args.case}: bare {per['bare'] / 1e6:.1f} M, tooltap {per['tooltap'] / 1e6:.1f} M "
        f"instructions per request: {added / 1e6:+.1f} M ({added / per['bare'] * 100:+.1f}%)"
    )


if __name__ == "__main__":
    main()
