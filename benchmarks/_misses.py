"""Cache misses and mispredicted branches beside the instructions (valgrind's simulation).

``python -m benchmarks._misses "openai.chat create"`` counts the case's requests alone
(as ``benchmarks._instructions --loop`` does, over one recording of its responses:
``benchmarks._replay``), bare and instrumented, under callgrind's cache and branch
simulation, and prints per request the instructions, the first-level instruction- and
data-cache misses, and the mispredicted conditional and indirect branches, with what
tooltap added to each. It says why a streamed case's CPU ratio runs above its counted
one: the instructions tooltap adds may run slower than the SDK's, when each event runs
more distinct code (instruction-cache misses) and more indirect jumps the predictor
misses (the interpreter's dispatch, calls through pointers). The simulation models a
cache of the host's sizes and a simple predictor, not this CPU's: read what tooltap
adds, not the rates.
"""

from __future__ import annotations

import argparse
import re
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Final

from . import _instructions
from ._sim import SimProcess

__all__ = ["EVENTS", "main", "simulated", "table"]

#: The simulated events reported, by callgrind's name.
EVENTS: Final[dict[str, str]] = {
    "Ir": "instructions",
    "I1mr": "L1 instruction-cache misses",
    "D1mr": "L1 data-cache read misses",
    "Bcm": "mispredicted conditional branches",
    "Bim": "mispredicted indirect branches",
}
_NAMES: Final = re.compile(r"^==\d+== Events\s*:\s*(.+)$", re.MULTILINE)
_VALUES: Final = re.compile(r"^==\d+== Collected\s*:\s*(.+)$", re.MULTILINE)


def simulated(stderr: str) -> dict[str, int]:
    """The events callgrind collected, by name, read off its summary on ``stderr``."""
    names, values = _NAMES.search(stderr), _VALUES.search(stderr)
    if names is None or values is None:
        raise RuntimeError(f"no simulated events in valgrind's output: {stderr[-500:]}")
    counts = [int(value) for value in values.group(1).split()]
    return dict(zip(names.group(1).split(), counts, strict=True))


def _count(name: str, mode: str, requests: int, url: str, recorded: Path) -> dict[str, float]:
    """Simulated events per request of ``requests`` requests alone, in ``mode``."""
    tool = ["--tool=callgrind", "--cache-sim=yes", "--branch-sim=yes"]
    tool += [f"--toggle-collect={_instructions._LOOP}", "--callgrind-out-file=/dev/null"]
    stderr = _instructions.valgrind(tool, name, mode, requests, url, recorded).stderr
    return {event: count / requests for event, count in simulated(stderr).items()}


def table(case: str, bare: dict[str, float], tooltap: dict[str, float]) -> str:
    """The reported events per request (Markdown), bare, instrumented and added."""
    rows = [
        f"### {case}: simulated per request (the requests alone, over a recording)\n",
        "| event | bare M | tooltap M | added M | added / bare |",
        "|---|---|---|---|---|",
    ]
    for event, label in EVENTS.items():
        b, t = bare[event], tooltap[event]
        share = f"{(t - b) / b:+.1%}" if b else "-"
        rows.append(f"| {label} | {b / 1e6:.2f} | {t / 1e6:.2f} | {(t - b) / 1e6:+.2f} | {share} |")
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Print one case's simulated misses and mispredictions, bare and instrumented."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks._misses")
    parser.add_argument("case", nargs="?", help="the start of a case name")
    parser.add_argument("--requests", type=int, default=4)
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None or not args.case:
        parser.error("needs valgrind installed, and a case")
    from .__main__ import WORKLOAD
    from ._replay import record

    name = _instructions._case(args.case).name
    with SimProcess(**WORKLOAD) as sim, tempfile.TemporaryDirectory() as tmp:
        recorded = Path(tmp) / "responses.pickle"
        record(_instructions._case(name), sim.url, recorded)
        with ThreadPoolExecutor(max_workers=2) as pool:
            bare, tooltap = pool.map(
                lambda mode: _count(name, mode, args.requests, sim.url, recorded),
                ("bare", "tooltap"),
            )
    print(table(name, bare, tooltap))


if __name__ == "__main__":
    main()
