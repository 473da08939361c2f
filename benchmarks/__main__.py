"""``python -m benchmarks [--smoke] [--json PATH] [--docs]``: the benchmark, in one command.

1. End to end: every case of ``benchmarks._cases`` (the real openai, anthropic and
   google-genai clients, streamed and not, the SDK stream helpers, raw httpx2, non-LLM
   traffic) against the provider simulator (a subprocess), bare and instrumented in this
   one process, interleaved round by round.
2. Parser micro-benchmark: tooltap's SSE decoder and reducers vs the SDKs' decoding.
3. Memory: sequential turns, and concurrent async streams held open.
4. Costs that could grow: the per-request cost as the re-sent history grows (timed, and
   counted with valgrind from 10 to 200 turns, against its target), and matching a result
   among many open calls sharing one id.
5. Instructions (valgrind, ``benchmarks._counted``): every streamed SDK case counted bare
   and instrumented, beside its CPU ratio, against the same ratio target.

Prints Markdown tables, with the targets' verdicts computed from this run, and writes
every figure as JSON. A full run writes ``benchmarks/results/latest.json`` and
``benchmarks/RESULTS.md``; ``--smoke`` (a CI-sized run of seconds on a smaller workload)
and partial runs (``--only``, ``--skip``) write beside them under other names.
A run that counts instructions (a full run, or ``--skip e2e parsers memory``: two hours
under valgrind on 2 cores shared with other work, each streamed case and the history
counts in three processes a mode, which the machine's load does not move; ``--skip
instructions`` leaves it out) also writes that section, with its verdicts, into
``benchmarks/RESULTS.md`` between its markers.
``--docs`` runs nothing: from ``results/latest.json`` (a full run's figures) it computes
every verdict anew and rewrites ``benchmarks/RESULTS.md`` and the performance section of
``docs/PERFORMANCE.md``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from ._cases import CASES, GATEWAY, NON_LLM, RAW, Case
from ._counted import (
    count_plain,
    count_streams,
    plain_checks,
    plain_table,
    streams_checks,
    streams_table,
)
from ._e2e import MORE_ROUNDS, measure
from ._history import (
    count_check,
    count_history,
    count_table,
    history_growth,
    history_table,
    measure_history,
    measure_shared_ids,
    shared_ids_table,
)
from ._layouts import relaid
from ._memory import concurrent_streams, sequential_turns
from ._otel import Toggle
from ._parsers import Stream, corpus_streams, fast_path_gains, measure_parsers
from ._profile import profile_case
from ._report import README_BEGIN, README_END, machine, readme_section, tables, targets
from ._sim import SimProcess

_HERE = Path(__file__).resolve().parent
_DOCS = _HERE.parent / "docs" / "PERFORMANCE.md"

#: Simulator workloads: the main one (3 parallel calls, 2,000-byte arguments, 4-character
#: fragments: ~1,500 events), the smoke one, and small turns for the memory runs.
WORKLOAD = {"calls": 3, "arg_bytes": 2000, "fragment": 4}
SMOKE_WORKLOAD = {"calls": 3, "arg_bytes": 200, "fragment": 4}
TURNS = {"calls": 1, "arg_bytes": 80, "fragment": 80, "final_text": 8}
HELD = {"calls": 1, "arg_bytes": 400, "fragment": 4}


def _recorded(url: str) -> tuple[list[Stream], dict[str, int]]:
    """Each dialect's workload stream as the transport delivers it, and its event count."""
    import httpx2

    from ._cases import _chat_request, _messages_request, _responses_request

    requests = {
        "openai.chat": ("/v1/chat/completions", {**_chat_request(), "stream": True}),
        "openai.responses": ("/v1/responses", {**_responses_request(), "stream": True}),
        "anthropic.messages": ("/v1/messages", {**_messages_request(), "stream": True}),
        "google.genai": (
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
            {
                "contents": [{"role": "user", "parts": [{"text": "Write the notes."}]}],
                "tools": [
                    {"functionDeclarations": [{"name": f"write_note_{i}"} for i in range(3)]}
                ],
            },
        ),
    }
    streams, events = [], {}
    with httpx2.Client(base_url=url) as client:
        for dialect, (path, body) in requests.items():
            with client.stream("POST", path, json=body) as response:
                chunks = tuple(response.iter_raw())
            stream = Stream("workload", dialect, (chunks,))
            streams.append(stream)
            events[dialect] = stream.events
    return streams, events


def _e2e(args: argparse.Namespace, toggle: Toggle, out: dict[str, Any]) -> list[Stream]:
    cases: tuple[Case, ...] = CASES + RAW + GATEWAY + NON_LLM
    if args.only:
        cases = tuple(c for c in cases if any(word in c.name for word in args.only))
    workload = SMOKE_WORKLOAD if args.smoke else WORKLOAD
    with SimProcess(**workload) as sim:
        streams, events = _recorded(sim.url)
        out["workload"] = {**workload, "events": events}
        rounds = args.rounds or (1 if args.smoke else 8)
        results = measure(
            cases,
            sim.url,
            toggle,
            rounds=rounds,
            events=events,
            peak=not args.no_peak,
            repeat=2 if args.smoke else 10,
            peer_cases=frozenset() if args.no_peers else frozenset(c.name for c in CASES),
            more=1 if args.smoke else MORE_ROUNDS,
        )
    peers = toggle.peers
    out["peer_instrumentations"] = {
        "versions": peers.versions,
        "missing": peers.missing,
        "wrappers_left_by_uninstrument": peers.leftovers,
    }
    kinds = {c.name: "raw" for c in RAW} | {c.name: "non-llm" for c in NON_LLM}
    kinds |= {c.name: "gateway" for c in GATEWAY}
    out["cases"] = [{**r.summary(), "kind": kinds.get(r.case.name, "sdk")} for r in results]
    return streams


def _memory(args: argparse.Namespace, toggle: Toggle, out: dict[str, Any]) -> None:
    turns = 200 if args.smoke else 10_000
    streams = 40 if args.smoke else 1000
    memory: dict[str, Any] = {}
    with SimProcess(**TURNS) as sim:
        memory["sequential"] = sequential_turns(sim.url, toggle, turns)
    with SimProcess(**HELD) as sim:
        memory["concurrent"] = concurrent_streams(sim.url, toggle, streams, hold_after=40)
    out["memory"] = memory


def _profiles(args: argparse.Namespace, toggle: Toggle) -> list[dict[str, Any]]:
    wanted = args.profile or [
        "openai.chat create",
        "anthropic create",
        "openai.responses create",
        "not streamed",
        "google generate_content",  # and its stream
    ]
    cases = [c for c in CASES + RAW if any(word in c.name for word in wanted)]
    with SimProcess(**(SMOKE_WORKLOAD if args.smoke else WORKLOAD)) as sim:
        return [profile_case(c, sim.url, toggle, 3 if c.streamed else 20) for c in cases]


def _history(args: argparse.Namespace, out: dict[str, Any]) -> None:
    """Long conversations (timed; counted with valgrind unless a smoke run) and shared ids."""
    out["history"] = measure_history(20 if args.smoke else 200)
    out["history_growth"] = history_growth(out["history"])
    out["shared_ids"] = measure_shared_ids(20 if args.smoke else 200)
    if _counting(args):
        out["history_instructions"] = count_history(WORKLOAD, collector_on=False)


def _counting(args: argparse.Namespace) -> bool:
    """Whether this run counts instructions (valgrind: minutes)."""
    return not args.smoke and "instructions" not in args.skip


def _full(args: argparse.Namespace) -> bool:
    """A full run: the one that writes ``latest.json`` and ``RESULTS.md`` (with profiles)."""
    return not (args.smoke or args.only or args.skip or args.rounds)


def main(argv: list[str] | None = None) -> int:
    """Run the sections asked for; print the tables; write the JSON."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="CI-sized run (seconds)")
    parser.add_argument("--json", type=Path, help="where to write the figures")
    parser.add_argument("--rounds", type=int, help="interleaved bare/tooltap rounds")
    parser.add_argument("--only", nargs="*", help="cases whose name contains one of these")
    parser.add_argument(
        "--skip",
        nargs="*",
        default=[],
        choices=["e2e", "parsers", "memory", "history", "instructions"],
    )
    parser.add_argument("--no-peak", action="store_true", help="skip the tracemalloc pass")
    parser.add_argument("--no-peers", action="store_true", help="measure no peer instrumentation")
    parser.add_argument(
        "--profile", nargs="*", help="cases to profile (cProfile, by component) after the run"
    )
    parser.add_argument(
        "--docs",
        "--readme",
        action="store_true",
        dest="docs",
        help="rewrite RESULTS.md and the section of docs/PERFORMANCE.md from latest.json",
    )
    args = parser.parse_args(argv)
    if args.docs:
        return _write_docs(_HERE / "results" / "latest.json")
    warnings.simplefilter("ignore", DeprecationWarning)
    for name in ("opentelemetry.attributes", "google_genai"):  # a peer's per-request warnings:
        logging.getLogger(name).addHandler(logging.NullHandler())  # made, not printed
    started = time.monotonic()
    out: dict[str, Any] = {"machine": machine(), "smoke": args.smoke}
    toggle = Toggle()
    try:
        streams: list[Stream] = []
        if "e2e" not in args.skip:
            streams = _e2e(args, toggle, out)
        if "parsers" not in args.skip:
            if not streams:
                with SimProcess(**(SMOKE_WORKLOAD if args.smoke else WORKLOAD)) as sim:
                    streams = _recorded(sim.url)[0]
            budget = 0.02 if args.smoke else 0.4
            out["parsers"] = measure_parsers(streams + relaid(streams) + corpus_streams(), budget)
            out["fast_paths"] = fast_path_gains(out["parsers"])
        if "memory" not in args.skip:
            _memory(args, toggle, out)
        if "history" not in args.skip:
            _history(args, out)
        if _counting(args):
            out["streams_instructions"] = count_streams(WORKLOAD, args.only)
            if not args.only:
                out["plain_instructions"] = count_plain(WORKLOAD)
        if args.profile is not None or _full(args):
            out["profiles"] = _profiles(args, toggle)
    finally:
        toggle.close()
    _judge(out)
    out["machine"]["load_average_at_end"] = os.getloadavg()
    out["seconds"] = time.monotonic() - started
    text, counted = _text(out)
    print(text)
    print(f"({out['seconds']:.0f} s; load average {out['machine']['load_average_at_end']})")
    full = _full(args)
    name = "latest" if full else "smoke" if args.smoke else "partial"
    path = args.json or _HERE / "results" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    command = "python -m benchmarks " + shlex.join(argv if argv is not None else sys.argv[1:])
    out["command"] = command.strip()
    path.write_text(json.dumps(out, indent=1) + "\n")
    report = _HERE / "RESULTS.md" if full and args.json is None else path.with_suffix(".md")
    report.write_text(_PREAMBLE + _header(out, command.strip()) + text)
    print(f"figures written to {path} and {report}", file=sys.stderr)
    if counted and report != _HERE / "RESULTS.md":
        _write_counted(_HERE / "RESULTS.md", counted, out["machine"], command.strip())
    return 0


def _judge(out: dict[str, Any]) -> None:
    """Every target that this run's figures bear on, with its verdict."""
    if "cases" in out or "memory" in out:
        out["targets"] = targets(out.get("cases", []), out.get("memory"))
    if "history_instructions" in out:
        out.setdefault("targets", []).append(count_check(out["history_instructions"]))
    if "streams_instructions" in out:
        out.setdefault("targets", []).extend(streams_checks(out["streams_instructions"]))
    if "plain_instructions" in out:
        out.setdefault("targets", []).extend(plain_checks(out["plain_instructions"]))


def _text(out: dict[str, Any]) -> tuple[str, str]:
    """The report's Markdown, and its counted section (between its markers; "" if none)."""
    text = tables(out)
    if "history" in out:
        text += "\n\n" + history_table(out["history"]) + "\n"
    if "shared_ids" in out:
        text += "\n" + shared_ids_table(out["shared_ids"]) + "\n"
    counted = ""
    if "streams_instructions" in out:
        counted += streams_table(out["streams_instructions"], out.get("cases", [])) + "\n"
    if "plain_instructions" in out:
        counted += plain_table(out["plain_instructions"], out.get("cases", [])) + "\n"
    if "history_instructions" in out:
        counted += count_table(out["history_instructions"])
    if counted:
        counted = f"{_COUNTED_BEGIN}\n{counted}{_COUNTED_END}\n"
        text += "\n" + counted
    return text, counted


_PREAMBLE = """# Benchmark results

Written by `python -m benchmarks` from one run of one commit; every verdict is computed
from that run's figures against the targets in `benchmarks/_report.py`. Do not edit by
hand: re-run it (about 22 minutes with the peers on 2 cores, and up to two hours more
counting instructions under valgrind; the performance section of `docs/PERFORMANCE.md` then
follows with `python -m benchmarks --docs`, which also computes these verdicts anew).

**Reproduce** (from the repository root). With the peers, as these figures were taken
when the peer table below has figures: `scripts/bench` (a venv of its own, `.venv-bench`,
with the `bench` and `peers` extras; its arguments go to `python -m benchmarks`; never
install the peers into the test venv, where `opentelemetry-instrument` would load them):

```
scripts/bench                           # full run with the peers
scripts/bench --smoke --only anthropic  # a quick look at some cases
```

Without them, with the `dev` or `bench` extra installed (the run then says "peers not
installed", or measures only those that are):

```
python -m benchmarks                    # full run: results/latest.json and this file
python -m benchmarks --docs             # docs/PERFORMANCE.md's section from latest.json
python -m benchmarks --smoke            # CI-sized, seconds (tests/test_benchmarks_smoke.py)
python -m benchmarks --profile "google generate_content"   # cProfile by component, too
python -m benchmarks._instructions "anthropic create" --replay --noop --seeds 3  # valgrind
python -m benchmarks._instructions "anthropic create" --replay --loop  # the requests alone
```

**How it measures.** The provider simulator runs in a subprocess, so only the client's
CPU is counted (`time.process_time()`, which includes the OpenTelemetry export thread).
Each round runs every case bare and instrumented back to back (`tooltap.instrument()` /
`uninstrument()` over a real SDK `TracerProvider` with a `BatchSpanProcessor` and a
`MeterProvider`), the order flipped every round; figures are the best sample of each mode.
A whole-body case also runs over OpenTelemetry's no-op providers: "own" is tooltap's work
over bare, the rest the OpenTelemetry SDK's on the spans and metric points; each of its
samples is the mean of 10 requests. The machine may be shared: a ratio below 1 (the
instrumented run cheaper than bare) says the noise was larger than the effect, and reads
"inconclusive". The peers (OpenTelemetry contrib's `opentelemetry-instrumentation-openai-v2`,
OpenLLMetry's `opentelemetry-instrumentation-openai` / `-anthropic` /
`-google-generativeai`, OpenInference's `openinference-instrumentation-openai` / `-anthropic`
/ `-google-genai`; versions in the machine line) run in the same rounds as one more mode
each, instrumented over the same providers and uninstrumented after (wrappers an
`uninstrument()` leaves on the SDK are removed, so that bare stays bare); a peer runs on a
case only if it exported a span for it in the warm-up, else the peer table says why not.
Each runs with content capture in its default mode: contrib's records no content, the
others record prompts and completions; those two also run with content off, tooltap's
default (OpenLLMetry `TRACELOOP_TRACE_CONTENT=false`, OpenInference
`TraceConfig(hide_inputs=True, hide_outputs=True)`). The best peer is the cheapest of all
modes on the case; "ahead of the best peer" is met when tooltap's best sample is below it
by more than the noise (the gap between the two least samples of either mode), inconclusive
within it or when a peer is not installed. A peer's per-request log warnings (the
OpenTelemetry SDK rejecting an attribute value, google-genai's on `.text`) are made but not
printed. Every streamed SDK case is also counted in instructions (valgrind, its own
section below: in a fresh process, the 4 requests after a warm-up alone (`--loop`); hash
seed 0, the collector on; over recorded responses, one event per read, without the
socket and HTTP work, so that the ratio is an upper bound), judged by the same ratio
target: a count is free of the machine's noise, though not of CPU effects that
instructions do not show (cache misses). So are the two non-LLM cases, whose few added
microseconds are less than their CPU time wobbles (32 requests a process, over the
simulator's socket, so that the bare base is a real client's), against the non-LLM target.
`benchmarks._instructions` counts one case the same way, with more options (`--seeds`,
`--noop`, `--gc both`), and `--loop` counts the requests alone (callgrind collecting only
inside the loop over them: no start-up, no warm-up, no export at exit), steady to about
ten thousand instructions per request between counts of the same code over the same
responses: the measure for comparing two versions of tooltap's per-request code.
The profiles at the end (cProfile, bare and instrumented over the SDK providers) say where
the added time goes, by tooltap stage and by package: cProfile inflates every Python call,
so their figures are larger than the table's, and only their split is to be read.
tooltap has no C extension: these figures are its only implementation, pure Python.

"""


_COUNTED_BEGIN = "<!-- instructions:begin (a run that counts instructions writes this) -->"
_COUNTED_END = "<!-- instructions:end -->"


def _write_counted(results: Path, counted: str, m: dict[str, Any], command: str) -> None:
    """Put the counted section (instructions), from a partial run, into ``RESULTS.md``."""
    text = results.read_text() if results.exists() else _PREAMBLE
    start, end = text.find(_COUNTED_BEGIN), text.find(_COUNTED_END)
    line = f"From `{command}`: tooltap {m['tooltap_commit']}, {m['date']}.\n\n"
    section = counted.replace(_COUNTED_BEGIN + "\n", _COUNTED_BEGIN + "\n" + line, 1)
    if start >= 0 and end > start:
        text = text[:start] + section + text[end + len(_COUNTED_END) + 1 :]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    results.write_text(text)
    print(f"counted history section written to {results}", file=sys.stderr)


def _write_docs(results: Path) -> int:
    """Rewrite ``RESULTS.md`` and ``docs/PERFORMANCE.md`` (between its benchmark markers)
    from ``results``, a full run's figures, with every verdict computed anew from them."""
    text = _DOCS.read_text()
    start, end = text.find("<!-- benchmarks:begin"), text.find(README_END)
    if start < 0 or end < start:
        print(f"{_DOCS} has no {README_BEGIN} ... {README_END} section", file=sys.stderr)
        return 1
    out = json.loads(results.read_text())
    _judge(out)
    results.write_text(json.dumps(out, indent=1) + "\n")
    command = out.get("command", "python -m benchmarks")
    (_HERE / "RESULTS.md").write_text(_PREAMBLE + _header(out, command) + _text(out)[0])
    section = readme_section(out)
    _DOCS.write_text(text[:start] + section + text[end + len(README_END) :])
    print(f"{_DOCS.name} performance section rewritten from {results}", file=sys.stderr)
    return 0


def _header(out: dict[str, Any], command: str) -> str:
    m = out["machine"]
    versions = ", ".join(f"{k} {v}" for k, v in m["versions"].items())
    return (
        f"Command: `{command}` (from the repository root; {out['seconds']:.0f} s)\n\n"
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['platform']}, Python {m['python']}; "
        f"load average {m['load_average_at_start'][0]:.1f} at start, "
        f"{m['load_average_at_end'][0]:.1f} at end. {m['date']}, tooltap {m['tooltap_commit']}; "
        f"{versions}.\n\n"
    )


if __name__ == "__main__":
    sys.exit(main())
