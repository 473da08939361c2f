"""Where tooltap's work per request goes, stage by stage, in instructions (valgrind).

``python -m benchmarks._stages "google generate_content"`` counts, over one recording of
the case's responses (``benchmarks._replay``), the instructions of each stage of
tooltap's per-request work (``STAGES``: opening the operation, reading the request,
parsing the response, receiving the calls, validating them, ending the operation...).
A stage is one function of tooltap's: the child process routes it through
``operator.call`` (a C function nothing on the request's path calls) while the counted
requests run, and callgrind collects only inside that function (``--toggle-collect``):
the stage's instructions, its callees' included. One process per stage, since a stage
running inside another (validation inside receiving the calls) would toggle the
collection off; so stages overlap, and their sum is not the whole. The whole loop is
counted bare and instrumented beside them, for scale.

Over OpenTelemetry's no-op providers by default: tooltap's own work, the part the
non-streamed target judges (``--sdk``: over the SDK's providers, whose spans and metric
points are then counted in the stages that make them). Unlike ``benchmarks._profile``
(cProfile, which inflates every Python call), these are the instructions themselves.
A stream's per-event work is not a stage: ``benchmarks._instructions --fragments``
gives its cost per event.
"""

from __future__ import annotations

import argparse
import importlib
import operator
import os
import re
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final

from . import _instructions
from ._sim import SimProcess

__all__ = ["STAGES", "main", "resolve"]

#: (stage, ``module:attribute``): the function whose calls make the stage.
STAGES: Final[tuple[tuple[str, str], ...]] = (
    ("operation opened (SDK call)", "tooltap._patch.sdk_call:Call.open"),
    ("request read, attempt begun (transport)", "tooltap._patch.httpx_tap:begin"),
    ("request parsed (the SDK's body object)", "tooltap._telemetry.operation:parse_request"),
    ("request parsed (bytes)", "tooltap._patch.exchange:parse_request"),
    ("attempt begun (results, retries)", "tooltap._telemetry.operation:Operation.begin_attempt"),
    ("response headers and whole body", "tooltap._patch.httpx_tap:_responded"),
    ("whole body parsed", "tooltap._patch.httpx_tap:parse_response"),
    ("calls received", "tooltap._telemetry.calls:Calls.received"),
    ("arguments validated", "tooltap._telemetry.calls:validate"),
    ("call spans opened, correlation", "tooltap._telemetry.lifecycle:Lifecycle.received"),
    ("operation ended", "tooltap._telemetry.operation:Operation.end"),
    ("tool-call counts", "tooltap._telemetry.calls:Calls.count"),
)

_CALL: Final = "_operator_call"  # ``operator.call`` as callgrind names it
_CALLS: Final = re.compile(r"^stage calls: (\d+)$", re.MULTILINE)


def resolve(target: str) -> tuple[Any, str]:
    """The object holding ``module:attribute`` (a module or a class) and the name in it."""
    module, _, path = target.partition(":")
    owner: Any = importlib.import_module(module)
    *parents, name = path.split(".")
    for parent in parents:
        owner = getattr(owner, parent)
    if not callable(getattr(owner, name, None)):
        raise LookupError(f"{target}: no such function")
    return owner, name


def _child(name: str, mode: str, count: int, url: str, target: str) -> None:
    """The case's requests, ``target`` routed through ``operator.call`` while counted."""
    counted, calls = False, 0

    def counting(on: bool) -> None:
        nonlocal counted
        counted = on

    owner, attribute = resolve(target)
    original = getattr(owner, attribute)

    def routed(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        if counted:
            calls += 1
            return operator.call(original, *args, **kwargs)
        return original(*args, **kwargs)

    setattr(owner, attribute, routed)
    _instructions._child(name, mode, count, url, counting)
    print(f"stage calls: {calls}")


def _count(
    name: str, mode: str, count: int, url: str, recorded: Path, target: str | None
) -> tuple[float, float]:
    """Instructions per request, of the loop (``target`` None) or inside ``target``, and
    the calls of ``target`` per request."""
    toggle = _CALL if target else _instructions._LOOP
    tool = ["--tool=callgrind", f"--toggle-collect={toggle}", "--callgrind-out-file=/dev/null"]
    child = ("benchmarks._stages", target or "")
    run = _instructions.valgrind(tool, name, mode, count, url, recorded, gc_on=False, child=child)
    calls = _CALLS.search(run.stdout)
    per_request = int(calls.group(1)) / count if calls else 0.0
    return _instructions.collected(run.stderr) / count, per_request


def main(argv: list[str] | None = None) -> None:
    """Print the instructions per request of each stage of one case."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks._stages")
    parser.add_argument("case", nargs="?", help="the start of a case name")
    parser.add_argument("--requests", type=int, default=4)
    parser.add_argument("--sdk", action="store_true", help="over the OpenTelemetry SDK")
    parser.add_argument("--child", nargs=5, help="internal")
    args = parser.parse_args(argv)
    if args.child:
        name, mode, count, url, target = args.child
        if target:
            _child(name, mode, int(count), url, target)
        else:
            _instructions._child(name, mode, int(count), url)
        return
    if shutil.which("valgrind") is None or not args.case:
        parser.error("needs valgrind installed, and a case")
    from .__main__ import WORKLOAD
    from ._replay import record

    mode = "tooltap" if args.sdk else "tooltap-noop"
    name = _instructions._case(args.case).name
    with SimProcess(**WORKLOAD) as sim, tempfile.TemporaryDirectory() as tmp:
        recorded = Path(tmp) / "responses.pickle"
        record(_instructions._case(name), sim.url, recorded)
        runs = [("bare", None), (mode, None)] + [(mode, target) for _, target in STAGES]

        def one(run: tuple[str, str | None]) -> tuple[float, float]:
            return _count(name, run[0], args.requests, sim.url, recorded, run[1])

        with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
            (bare, _), (whole, _), *stages = pool.map(one, runs)
    added = whole - bare
    providers = "the OpenTelemetry SDK" if args.sdk else "no-op OpenTelemetry providers"
    print(f"{name}: instructions per request ({args.requests} requests, replayed)", end="")
    print(f", over {providers}")
    print(f"bare {bare / 1e6:.2f} M, tooltap {whole / 1e6:.2f} M: added {added / 1e6:+.2f} M\n")
    print("| stage | function | calls/request | M/request | of the added |")
    print("|---|---|---|---|---|")
    for (stage, target), (value, calls) in zip(STAGES, stages, strict=True):
        share = f"{value / added:.0%}" if added > 0 else "-"
        print(f"| {stage} | `{target}` | {calls:g} | {value / 1e6:.3f} | {share} |")


if __name__ == "__main__":
    main()
