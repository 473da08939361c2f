"""``python -m benchmarks [--smoke] [--json PATH]``: the issue-6 benchmark, in one command.

1. End to end: the real openai, anthropic and google-genai clients (streamed and not,
   with the SDK stream helpers) and raw httpx2 against the provider simulator (a
   subprocess), bare and instrumented in this one process, interleaved round by round.
2. Parser micro-benchmark: tooltap's SSE decoder and reducers vs the SDKs' decoding.
3. Memory: sequential turns, and concurrent async streams held open.
4. Long conversations: tooltap's per-request cost as the re-sent history grows.

Prints Markdown tables and writes every figure as JSON. ``--smoke`` is a CI-sized run of
a few seconds on a smaller workload (figures for every case, no thresholds).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from ._cases import CASES, NON_LLM, RAW, Case
from ._e2e import measure
from ._history import history_table, measure_history
from ._memory import concurrent_streams, sequential_turns
from ._otel import Toggle
from ._parsers import Stream, corpus_streams, measure_parsers
from ._profile import profile_case
from ._report import machine, tables, targets
from ._sim import SimProcess

_HERE = Path(__file__).resolve().parent

#: Simulator workloads: issue 6's (3 parallel calls, 2,000-byte arguments, 4-character
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
    cases: tuple[Case, ...] = CASES + RAW + NON_LLM
    if args.only:
        cases = tuple(c for c in cases if any(word in c.name for word in args.only))
    workload = SMOKE_WORKLOAD if args.smoke else WORKLOAD
    with SimProcess(**workload) as sim:
        streams, events = _recorded(sim.url)
        out["workload"] = {**workload, "events": events}
        rounds = args.rounds or (1 if args.smoke else 8)
        results = measure(
            cases, sim.url, toggle, rounds=rounds, events=events, peak=not args.no_peak
        )
    out["cases"] = [r.summary() for r in results]
    out["targets"] = targets(out["cases"])
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
    ]
    cases = [c for c in CASES + RAW if any(word in c.name for word in wanted)]
    with SimProcess(**(SMOKE_WORKLOAD if args.smoke else WORKLOAD)) as sim:
        return [profile_case(c, sim.url, toggle, 3 if c.streamed else 20) for c in cases]


def main(argv: list[str] | None = None) -> int:
    """Run the sections asked for; print the tables; write the JSON."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="CI-sized run (seconds)")
    parser.add_argument("--json", type=Path, help="where to write the figures")
    parser.add_argument("--rounds", type=int, help="interleaved bare/tooltap rounds")
    parser.add_argument("--only", nargs="*", help="cases whose name contains one of these")
    parser.add_argument(
        "--skip", nargs="*", default=[], choices=["e2e", "parsers", "memory", "history"]
    )
    parser.add_argument("--no-peak", action="store_true", help="skip the tracemalloc pass")
    parser.add_argument(
        "--profile", nargs="*", help="cases to profile (cProfile, by component) after the run"
    )
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", DeprecationWarning)
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
            out["parsers"] = measure_parsers(streams + corpus_streams(), budget)
        if "memory" not in args.skip:
            _memory(args, toggle, out)
        if "history" not in args.skip:
            out["history"] = measure_history(20 if args.smoke else 200)
        if args.profile is not None:
            out["profiles"] = _profiles(args, toggle)
    finally:
        toggle.close()
    out["machine"]["load_average_at_end"] = os.getloadavg()
    out["seconds"] = time.monotonic() - started
    text = tables(out)
    if "history" in out:
        text += "\n\n" + history_table(out["history"]) + "\n"
    print(text)
    print(f"({out['seconds']:.0f} s; load average {out['machine']['load_average_at_end']})")
    default = _HERE / "results" / ("smoke.json" if args.smoke else "latest.json")
    path = args.json or default
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1) + "\n")
    command = "python -m benchmarks " + " ".join(argv if argv is not None else sys.argv[1:])
    path.with_suffix(".md").write_text(_header(out, command.strip()) + text)
    print(f"figures written to {path} and {path.with_suffix('.md')}", file=sys.stderr)
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
