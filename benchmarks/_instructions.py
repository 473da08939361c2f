"""Instruction counts (valgrind): tooltap's added work on one case, free of machine noise.

``python -m benchmarks._instructions "anthropic create"`` runs the case in four fresh
processes under ``valgrind --tool=cachegrind`` (bare and instrumented, each after one
warm-up request, with 0 and with N more requests) against the simulator, and prints the
instructions per request of each mode and tooltap's share: the difference of the two runs
cancels start-up and imports. Slow (minutes per process), deterministic to a fraction of
a percent where the CPU-time benchmark of a shared machine wobbles by ten percent.

The ``openai.chat history N turns`` cases (``_cases.HISTORY``: a whole-body request
re-sending N answered turns, 10 and 200) count the request side's growth with the
history; ``python -m benchmarks`` counts them (``benchmarks._history.count_history``) and
judges the growth against its target.

``--noop`` also counts tooltap over OpenTelemetry's no-op providers: its own work,
without what the SDK spends on the spans and metric points it is given.

``--replay`` counts over recorded responses (``benchmarks._replay``): the case runs once
over the socket, outside valgrind, and every counted process reads those same chunks, one
event per read, from its own transport. Counted over the socket, a client slowed down by
valgrind gets several events per read, as many as the machine's load allows at that
moment; bare and instrumented processes then read differently, which moved the added
instructions by millions between counts of the same code. The replay leaves out the socket
and HTTP work (the same in both modes), so its base is smaller: the socket count's bare
figure is the one to take a ratio over.

``--fragments 4 8`` runs the workload at each argument fragment size (4-character
fragments: ~1,500 events; 8: ~760) and also prints the *marginal* cost per SSE event,
the difference of tooltap's added instructions over the difference of event counts:
what each further event costs, free of the fixed per-request cost (spans, validation).

``--loop`` counts only the requests themselves: each mode runs in one process under
``valgrind --tool=callgrind``, collecting only inside the loop over the N requests (it runs
through ``functools.reduce``, a C function the SDKs do not call, and callgrind collects
while that function runs: ``--toggle-collect``). Start-up, the warm-up request and the
export of the spans when the process ends are left out, and so is the difference of two
processes: the same code over the same recorded responses, counted twice, came out 29
thousand instructions apart over 4 anthropic requests (of 1,046 M), where whole processes
differ by millions. Each run records its responses anew (their ids differ, and with them
the bare count, by about 0.5 M): compare the added instructions of two runs, not their
bare figures. It is the measure for comparing two versions of tooltap's per-request code,
not a cost an app sees (that one includes the export).

``--seeds K`` repeats every count under ``PYTHONHASHSEED`` 0 to K-1, each with an
environment of another size, and prints the mean and each run's figure. The hash seed lays
out dicts and sets, and with them which attribute lookups collide in CPython's type cache
and how malloc's free lists fragment: counted as whole processes, the same code and input
under seeds 0, 1 and 2 moved tooltap's added instructions on the Anthropic stream by ~5 M
(+6.0 M, +1.4 M, ...), more than the effects measured; the requests alone (``--loop``,
over a recording) by ~0.5 M (+12.5 M, +12.9 M, +12.4 M). The environment's size moves
where the interpreter's stack and heap start, and with them the same collisions: under
seed 0, with 0, 211 and 517 bytes more environment, the Anthropic async stream's
instrumented requests alone counted 267.9, 267.0 and 269.6 M (bare 252.2, 252.7, 252.2 M):
a spread of 2.6 M on an added count of ~16 M. One run is a sample of a layout, not a
property of the code: two versions of the code that differ by less than that spread are
compared over several runs (``--seeds``), not one.

The garbage collector runs during the counted requests, as in an app: the objects
tooltap allocates make collections come sooner, and that is part of its cost. Where a
collection lands differs between runs by millions of instructions, so ``--gc both``
also counts with the collector off (after a warm-up request and ``gc.freeze()``) and
prints both. The span processor's timer is off
(its wake-ups follow the wall clock, which valgrind stretches by the machine's load): the
spans are exported when the process shuts its providers down, still inside the count.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._sim import SimProcess

__all__ = ["main", "valgrind"]

_ROOT = Path(__file__).resolve().parent.parent
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")
_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")
#: The C function the counted requests run inside (``--loop`` collects only there).
_LOOP = "functools_reduce"


def _child(
    name: str, mode: str, count: int, url: str, counting: Callable[[bool], None] | None = None
) -> None:
    """Run the case's warm-up and ``count`` requests in ``mode``; ``counting`` is told when
    the counted requests start (True) and end (False)."""
    from opentelemetry.metrics import NoOpMeterProvider
    from opentelemetry.trace import NoOpTracerProvider

    import tooltap

    from ._cases import close_client
    from ._otel import Toggle

    warnings.simplefilter("ignore")
    replay = os.environ.get("TOOLTAP_BENCH_REPLAY")
    if replay:
        from ._replay import install

        install(Path(replay))
    case = _case(name)
    toggle = Toggle()
    client = case.make(url)
    if mode == "tooltap":
        toggle.instrumented()
    elif mode == "tooltap-noop":  # tooltap's own work: OpenTelemetry's no-op providers
        tooltap.instrument(tracer_provider=NoOpTracerProvider(), meter_provider=NoOpMeterProvider())
    case.run(client)  # warm-up: imports, connections, caches
    gc.collect()
    collector_off = os.environ.get("TOOLTAP_BENCH_GC") == "off"
    if collector_off:
        gc.freeze()
        gc.disable()
    if counting is not None:
        counting(True)
    functools.reduce(lambda _, __: case.run(client), range(count), None)  # (``--loop``)
    if counting is not None:
        counting(False)
    gc.enable()
    close_client(case, client)
    if mode == "tooltap-noop":
        tooltap.uninstrument()
    toggle.close()


def _instructions(
    name: str,
    mode: str,
    count: int,
    url: str,
    replay: Path | None,
    seed: int,
    gc_on: bool,
    *,
    loop: bool = False,
) -> int:
    """Instructions of one process running ``count`` requests after a warm-up (``loop``:
    of the ``count`` requests alone)."""
    tool = ["--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    if loop:
        tool = ["--tool=callgrind", f"--toggle-collect={_LOOP}", "--callgrind-out-file=/dev/null"]
    stderr = valgrind(tool, name, mode, count, url, replay, seed, gc_on).stderr
    found = (_COLLECTED if loop else _REFS).search(stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output: {stderr[-500:]}")
    return int(found.group(1).replace(",", ""))


def valgrind(
    tool: list[str],
    name: str,
    mode: str,
    count: int,
    url: str,
    replay: Path | None,
    seed: int = 0,
    gc_on: bool = True,
    *,
    child: tuple[str, ...] = ("benchmarks._instructions",),
) -> subprocess.CompletedProcess[str]:
    """One process running the case's warm-up and ``count`` requests in ``mode``, under
    ``tool`` (valgrind's options naming the tool); valgrind's report is its stderr.
    ``child``: the module whose ``--child`` runs them, and what it takes after the url."""
    module, *extra = child
    env = {"TOOLTAP_BENCH_LAYOUT": "." * (211 * seed)}  # each seed, a layout of its own
    env["TOOLTAP_BENCH_GC"] = "on" if gc_on else "off"
    if replay is not None:
        env["TOOLTAP_BENCH_REPLAY"] = str(replay)
    argv = [module, "--child", name, mode, str(count), url, *extra]
    return under_valgrind(tool, argv, env, seed)


def under_valgrind(
    tool: list[str], argv: list[str], env: dict[str, str], seed: int = 0
) -> subprocess.CompletedProcess[str]:
    """``python -m *argv`` under valgrind's ``tool``, from the repository root, with
    ``env`` added, hash seed ``seed`` and the span processor's timer off."""
    # The given hashing in both runs of a mode; the span processor's timer off (its
    # wake-ups follow the wall clock, which valgrind stretches with the machine's load):
    # spans are exported when the process closes the providers, inside the count.
    env = {**os.environ, **env, "PYTHONHASHSEED": str(seed)}
    env["OTEL_BSP_SCHEDULE_DELAY"] = "86400000"
    command = ["valgrind", *tool, sys.executable, "-m", *argv]
    return subprocess.run(command, cwd=_ROOT, env=env, capture_output=True, text=True, check=True)


def collected(stderr: str) -> int:
    """The instructions callgrind collected, from its report (``--toggle-collect``)."""
    found = _COLLECTED.search(stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output: {stderr[-500:]}")
    return int(found.group(1))


def _case(name: str) -> Any:
    """The benchmark case (SDK, raw SSE or not LLM) named ``name``, else the first whose
    name starts with it."""
    from ._cases import CASES, GATEWAY, HISTORY, NON_LLM, RAW

    cases = CASES + RAW + GATEWAY + NON_LLM + HISTORY
    exact = [c for c in cases if c.name == name]
    return (exact or [c for c in cases if c.name.startswith(name)])[0]


def _events(name: str, url: str) -> int:
    """SSE events of one response of the case's dialect (0 for whole bodies)."""
    case = _case(name)
    if not case.streamed or not case.dialect:
        return 0
    import httpx2

    from . import _cases

    path, body = {
        "openai.chat": ("/v1/chat/completions", _cases._chat_request()),
        "openai.responses": ("/v1/responses", _cases._responses_request()),
        "anthropic.messages": ("/v1/messages", _cases._messages_request()),
        "google.genai": (
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
            {
                "contents": [{"role": "user", "parts": [{"text": _cases.USER[0]["content"]}]}],
                "tools": [{"functionDeclarations": [{"name": name} for name in _cases.TOOLS]}],
            },
        ),
    }[case.dialect]
    with (
        httpx2.Client(base_url=url) as client,
        client.stream("POST", path, json={**body, "stream": True}) as response,
    ):
        raw = b"".join(response.iter_raw())
        return raw.count(b"\n\n") + raw.count(b"\r\n\r\n")  # google-genai's: CRLF


def _per_request(
    name: str,
    requests: int,
    workload: dict[str, int],
    modes: tuple[str, ...],
    replay: bool,
    seeds: int,
    gc_on: bool,
    *,
    loop: bool = False,
) -> tuple[dict[str, list[float]], int]:
    """Instructions per request of each mode under each hash seed, and events per response
    (``loop``: of the requests alone, one process per mode and seed)."""
    with SimProcess(**workload) as sim, tempfile.TemporaryDirectory() as tmp:
        recorded = Path(tmp) / "responses.pickle" if replay else None
        if recorded is not None:
            from ._replay import record

            record(_case(name), sim.url, recorded)
        per: dict[str, list[float]] = {mode: [] for mode in modes}
        for seed in range(seeds):
            for mode in modes:
                end = _instructions(name, mode, requests, sim.url, recorded, seed, gc_on, loop=loop)
                start = 0
                if not loop:
                    start = _instructions(name, mode, 0, sim.url, recorded, seed, gc_on)
                per[mode].append((end - start) / requests)
        return per, _events(name, sim.url)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _each(values: list[float]) -> str:
    """Each seed's figure, in M, when there are several."""
    if len(values) < 2:
        return ""
    return " (hash seeds and layouts: " + ", ".join(f"{v / 1e6:+.1f}" for v in values) + ")"


def main(argv: list[str] | None = None) -> None:
    """Print instructions per request, bare and instrumented, for one case."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks._instructions")
    parser.add_argument("case", nargs="?", help="the start of a case name, e.g. 'anthropic create'")
    parser.add_argument("--requests", type=int, default=4)
    parser.add_argument("--smoke", action="store_true", help="the smoke workload")
    parser.add_argument(
        "--fragments", type=int, nargs=2, metavar=("A", "B"), help="two fragment sizes"
    )
    parser.add_argument("--noop", action="store_true", help="also tooltap over no-op providers")
    parser.add_argument("--replay", action="store_true", help="count over recorded responses")
    parser.add_argument("--seeds", type=int, default=1, help="hash seeds and layouts to average")
    parser.add_argument("--loop", action="store_true", help="count the requests alone")
    parser.add_argument(
        "--gc", choices=["on", "off", "both"], default="on", help="the collector while counting"
    )
    parser.add_argument("--child", nargs=4, metavar=("CASE", "MODE", "N", "URL"), help="internal")
    args = parser.parse_args(argv)
    if args.child:
        name, mode, count, url = args.child
        _child(name, mode, int(count), url)
        return
    if shutil.which("valgrind") is None or not args.case:
        parser.error("needs valgrind installed, and a case")
    from .__main__ import SMOKE_WORKLOAD, WORKLOAD
    from ._cases import HISTORY

    base = SMOKE_WORKLOAD if args.smoke else WORKLOAD
    if _case(args.case) in HISTORY:  # results answer the turn before them: ids per request
        base = {**base, "numbered": 1}
    modes = ("bare", "tooltap", "tooltap-noop") if args.noop else ("bare", "tooltap")
    for gc_on in {"on": (True,), "off": (False,), "both": (True, False)}[args.gc]:
        print(f"garbage collector {'on' if gc_on else 'off'}:", flush=True)
        _report(args, base, modes, gc_on)


def _report(
    args: argparse.Namespace, base: dict[str, int], modes: tuple[str, ...], gc_on: bool
) -> None:
    """Count and print one collector setting's figures."""
    runs = []
    for fragment in args.fragments or (base["fragment"],):
        workload = {**base, "fragment": fragment}
        per, events = _per_request(
            args.case,
            args.requests,
            workload,
            modes,
            args.replay,
            max(1, args.seeds),
            gc_on,
            loop=args.loop,
        )
        bare, tooltap = _mean(per["bare"]), _mean(per["tooltap"])
        each = [t - b for t, b in zip(per["tooltap"], per["bare"], strict=True)]
        added = _mean(each)
        runs.append((added, events))
        print(
            f"{args.case} ({events} events): bare {bare / 1e6:.1f} M, tooltap {tooltap / 1e6:.1f} M"
            f" instructions per request: {added / 1e6:+.1f} M ({added / bare * 100:+.1f}%)"
            + _each(each),
            flush=True,
        )
        if "tooltap-noop" in per:
            own = [t - b for t, b in zip(per["tooltap-noop"], per["bare"], strict=True)]
            print(
                f"  over no-op OpenTelemetry providers: {_mean(own) / 1e6:+.2f} M" + _each(own),
                flush=True,
            )
    if len(runs) == 2 and runs[0][1] != runs[1][1]:
        (a, ea), (b, eb) = runs
        marginal = (a - b) / (ea - eb)
        print(
            f"marginal: {marginal / 1e3:.1f} k instructions per event;"
            f" fixed: {(a - marginal * ea) / 1e6:.2f} M per request"
        )


if __name__ == "__main__":
    main()
