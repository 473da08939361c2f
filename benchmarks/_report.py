"""The figures as Markdown (stdout, RESULTS.md, the README's section) and the targets,
checked by code: a verdict is computed from the run's own figures, never written by hand.

Verdicts: ``met``, ``MISSED``, or ``inconclusive`` where the instrumented run came out
cheaper than the bare one (a ratio below 1, a negative added cost): the machine's noise
was larger than the effect, which that run then cannot bound. Against the peers: ``met``
when tooltap's best sample is below the best peer's by more than the noise (the gap between
the two least samples of either), ``inconclusive`` within it or when a peer is missing.
"""

from __future__ import annotations

import contextlib
import os
import platform
import subprocess
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from ._e2e import MORE_ROUNDS, SETTLED, cpu_figures
from ._peers import PEERS

__all__ = ["README_BEGIN", "README_END", "machine", "readme_section", "tables", "targets"]

_ROOT = Path(__file__).resolve().parent.parent

#: A streamed SDK case: instrumented client CPU over the bare SDK's, at most.
TARGET_RATIO = 1.05
#: A whole body: tooltap's own added CPU (over OpenTelemetry's no-op providers), at most;
#: the OpenTelemetry SDK's work on the spans and metric points comes on top, reported.
TARGET_OWN_MS = 0.15
#: Cases with their own bound on the added CPU per request (all-in), by name fragment.
TARGET_ADDED_MS = {"long conversation": 0.3}
#: Long conversations, counted by valgrind (openai SDK, not streamed): what tooltap adds
#: per request may grow by less than this many instructions from 10 to 200 turns.
TARGET_HISTORY_GROWTH = 0.5e6
#: A gateway forwarding a stream (no SDK): tooltap's added CPU per event, at most this
#: share of httpx's own per event (the bare run's).
TARGET_GATEWAY_SHARE = 0.20
#: Traffic that is not LLM traffic: ratio over bare, at most.
TARGET_NON_LLM_RATIO = 1.02
#: Time to first chunk: the instrumented best within this many ms or this share of bare.
TTFC_MS, TTFC_SHARE = 1.0, 0.10
#: Peak memory of a request (tracemalloc) unchanged: instrumented within this many KiB or
#: this share of bare.
PEAK_KIB, PEAK_SHARE = 64, 0.10
#: Memory flat over sequential turns: growth per 1,000 turns over the second half, at most.
FLAT_RSS_KIB, FLAT_GC_OBJECTS = 64, 16
README_BEGIN = "<!-- benchmarks:begin (python -m benchmarks --docs writes this section) -->"
README_END = "<!-- benchmarks:end -->"


def machine() -> dict[str, Any]:
    """Where and when the figures were taken."""
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=_ROOT,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        commit = ""
    versions: dict[str, str | None] = {}
    peers = dict.fromkeys(i.distribution for p in PEERS for i in p.instrumentors)
    for name in ("openai", "anthropic", "google-genai", "httpx2", "jiter", "opentelemetry-sdk"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    for name in peers:  # the installed ones
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[name] = metadata.version(name)
    return {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "load_average_at_start": os.getloadavg(),
        "tooltap_commit": commit,
        "versions": versions,
    }


def _num(value: Any, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _verdict(value: float | None, bound: float, floor: float) -> str:
    """``met`` / ``MISSED`` against ``bound``; ``inconclusive`` below ``floor`` (or no figure)."""
    if value is None or value < floor:
        return "inconclusive"
    return "met" if value <= bound else "MISSED"


def _worst(verdicts: list[str]) -> str:
    for verdict in ("MISSED", "inconclusive", "met"):
        if verdict in verdicts:
            return verdict
    return "-"


def _noise(samples: list[float]) -> float | None:
    """How well a best sample is pinned: the gap to the next least (None below two)."""
    low = sorted(samples)[:2]
    return low[1] - low[0] if len(low) == 2 else None


def best_peer(c: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The peer with the least CPU on case ``c`` (None if no peer was measured on it)."""
    peers = c.get("peers") or {}
    if not peers:
        return None
    name = min(peers, key=lambda n: peers[n]["cpu_ms"])
    return name, peers[name]


def _peer_check(c: dict[str, Any]) -> tuple[str, str]:
    """(measured, verdict) of "ahead of the best peer" on a streamed SDK case."""
    found = best_peer(c)
    missing = [n for n, why in c.get("peers_not_measured", {}).items() if "not installed" in why]
    if found is None:
        return ("peers not installed" if missing else "no peer instruments this case"), (
            "inconclusive"
        )
    name, peer = found
    gap = peer["cpu_ms"] - c["tooltap_cpu_ms"]
    noises = [_noise(peer["cpu_ms_samples"]), _noise(c["cpu_ms_samples"]["tooltap"])]
    noise = max((n for n in noises if n is not None), default=None)
    value = f"{c['ratio']:.3f} vs {peer['ratio']:.3f} ({name})"
    if noise is not None:
        value += f"; noise ±{noise:.3f} ms"
    if noise is not None and abs(gap) <= noise:
        verdict = "inconclusive"
    else:
        verdict = "met" if gap > 0 else "MISSED"
    if missing and verdict == "met":
        value += f"; not installed: {', '.join(missing)}"
        verdict = "inconclusive"
    return value, verdict


def _unchanged(bare: float, inst: float, bound: float, share: float) -> str:
    """``met`` when ``inst`` exceeds ``bare`` by at most ``bound`` or ``share`` of it."""
    return "met" if inst - bare <= max(bound, share * bare) else "MISSED"


def _added_bound(case: str) -> float | None:
    return next((ms for part, ms in TARGET_ADDED_MS.items() if part in case), None)


def _cpu_checks(c: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(target, measured, verdict) of each CPU target that applies to the case ``c``."""
    name, kind, ratio = c["case"], c.get("kind", "sdk"), c["ratio"]
    bound = _added_bound(name)
    if kind == "non-llm":
        return [(
            f"non-LLM traffic: ratio ≤ {TARGET_NON_LLM_RATIO:g}",
            f"{c['added_cpu_ms'] * 1000:+.0f} µs/req ({ratio:.3f}x)",
            _verdict(ratio, TARGET_NON_LLM_RATIO, 1.0),
        )]  # fmt: skip
    if kind == "gateway":
        added, events = c["added_us_per_event"], c["events"]
        own = c["bare_cpu_ms"] * 1000 / events if events else None
        share = added / own if added is not None and own else None
        return [(
            f"gateway: added per event ≤ {TARGET_GATEWAY_SHARE:.0%} of httpx's own",
            f"{_num(added, '+.2f')} µs/event over {_num(own, '.2f')} µs/event "
            f"({_num(share, '.1%')})",
            _verdict(share, TARGET_GATEWAY_SHARE, 0.0),
        )]  # fmt: skip
    if bound is not None:
        return [(
            f"≤ {bound:g} ms added per request",
            f"{c['added_cpu_ms']:+.3f} ms",
            _verdict(c["added_cpu_ms"], bound, 0.0),
        )]  # fmt: skip
    if c["streamed"] and kind == "sdk":
        return [
            (
                f"ratio ≤ {TARGET_RATIO:g} over the bare SDK",
                f"{ratio:.3f} ({c['added_us_per_event']:+.2f} µs/event)",
                _verdict(ratio, TARGET_RATIO, 1.0),
            ),
            ("ahead of the best peer (ratio strictly lower)", *_peer_check(c)),
        ]
    if not c["streamed"]:
        own, otel = c.get("own_added_ms"), c.get("otel_sdk_ms")
        return [(
            f"≤ {TARGET_OWN_MS:g} ms of tooltap's own work (+ the OpenTelemetry SDK's)",
            f"own {_num(own, '+.3f')} ms + OpenTelemetry SDK {_num(otel, '+.3f')} ms",
            _verdict(own, TARGET_OWN_MS, 0.0),
        )]  # fmt: skip
    return []


def _second_least(c: dict[str, Any]) -> dict[str, Any]:
    """The case's figures taken from the second least sample of every mode."""
    figures = cpu_figures(c["cpu_ms_samples"], c.get("events"), list(c.get("peers") or {}), rank=1)
    peers = {
        name: {**peer, **figures["peers"][name]} for name, peer in (c.get("peers") or {}).items()
    }
    return {**c, **figures, "peers": peers}


def _unsettled(
    rows: list[tuple[str, str, str]], second: list[tuple[str, str, str]]
) -> list[tuple[str, str, str]]:
    """A case whose least samples did not settle: a verdict stands only where the second
    least samples give the same one."""
    out = []
    for (target, value, verdict), (_, _, other) in zip(rows, second, strict=True):
        if verdict == other:
            out.append((target, f"{value} (not settled; the second least samples agree)", verdict))
        else:
            note = f"{value} (not settled; the second least samples: {other})"
            out.append((target, note, "inconclusive"))
    return out


def targets(
    cases: list[dict[str, Any]], memory: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Each case against the targets that apply to it (and the memory run, if any)."""
    checks: list[dict[str, Any]] = []

    def check(target: str, case: str, value: str, verdict: str) -> None:
        checks.append({"target": target, "case": case, "value": value, "verdict": verdict})

    for c in cases:
        name = c["case"]
        rows = _cpu_checks(c)
        if c.get("settled") is False and "cpu_ms_samples" in c:
            rows = _unsettled(rows, _cpu_checks(_second_least(c)))
        for target, value, verdict in rows:
            check(target, name, value, verdict)
        if c.get("kind", "sdk") == "non-llm":
            continue
        bare, inst = c.get("bare_ttfc_ms"), c.get("tooltap_ttfc_ms")
        if c["streamed"] and bare is not None and inst is not None:
            target = f"TTFC unchanged (within {TTFC_MS:g} ms or {TTFC_SHARE:.0%})"
            verdict = _unchanged(bare, inst, TTFC_MS, TTFC_SHARE)
            check(target, name, f"{inst - bare:+.2f} ms", verdict)
        bare, inst = c.get("bare_peak_kib"), c.get("tooltap_peak_kib")
        if bare is not None and inst is not None:
            target = f"peak memory unchanged (within {PEAK_KIB} KiB or {PEAK_SHARE:.0%})"
            verdict = _unchanged(bare, inst, PEAK_KIB, PEAK_SHARE)
            check(target, name, f"{bare:.0f} → {inst:.0f} KiB ({inst - bare:+.0f})", verdict)
    turns = (memory or {}).get("sequential")
    if turns:
        rss = turns["rss_growth_kib_per_1000_turns_second_half"]
        objects = turns["gc_objects_growth_per_1000_turns_second_half"]
        left = turns["samples"][-1]["open_tool_spans"]
        flat = rss <= FLAT_RSS_KIB and objects <= FLAT_GC_OBJECTS and left == 0
        check(
            f"memory flat (per 1,000 turns ≤ {FLAT_RSS_KIB} KiB RSS, ≤ {FLAT_GC_OBJECTS} gc "
            "objects; no span left open)",
            f"{turns['turns']} sequential turns",
            f"{rss:+.0f} KiB, {objects:+.0f} objects, {left} open",
            "met" if flat else "MISSED",
        )
    return checks


def _case_rows(results: dict[str, Any]) -> list[list[str]]:
    by_case: dict[str, list[str]] = {}
    for t in results.get("targets", ()):
        by_case.setdefault(t["case"], []).append(t["verdict"])
    rows = []
    for c in results["cases"]:
        own, otel = c.get("own_added_ms"), c.get("otel_sdk_ms")
        rows.append(
            [
                c["case"],
                str(c["events"] or "-"),
                _num(c["bare_cpu_ms"], ".2f"),
                _num(c["tooltap_cpu_ms"], ".2f"),
                _num(c["ratio"], ".3f"),
                _num(c["added_cpu_ms"], "+.3f"),
                _num(c["added_us_per_event"], "+.2f"),
                "-" if own is None else f"{own:+.3f} / {otel:+.3f}",
                _num(c.get("bare_ttfc_ms"), ".1f") + " / " + _num(c.get("tooltap_ttfc_ms"), ".1f"),
                _num(c.get("bare_peak_kib"), ".0f")
                + " / "
                + _num(c.get("tooltap_peak_kib"), ".0f"),
                _best_peer_cell(c),
                _worst(by_case.get(c["case"], [])),
            ]
        )
    return rows


def _best_peer_cell(c: dict[str, Any]) -> str:
    found = best_peer(c)
    if found is not None:
        return f"{_num(found[1]['ratio'], '.3f')} ({found[0]})"
    reasons = c.get("peers_not_measured") or {}
    if not reasons:
        return "-"
    if all("not installed" in why for why in reasons.values()):
        return "peers not installed"
    return "not supported"


def _peer_table(cases: list[dict[str, Any]]) -> str | None:
    """Every peer's ratio over bare on every SDK case, or why it was not measured."""
    names = [p.name for p in PEERS]
    rows, notes = [], {}
    for c in cases:
        if not c.get("peers") and not c.get("peers_not_measured"):
            continue
        row = [c["case"]]
        for name in names:
            if name in c.get("peers", {}):
                row.append(_num(c["peers"][name]["ratio"], ".3f"))
            else:
                why = c.get("peers_not_measured", {}).get(name, "not run")
                mark = notes.setdefault(why, chr(ord("a") + len(notes)))
                row.append(f"not supported ({mark})")
        rows.append(row)
    if not rows:
        return None
    legend = "\n".join(f"- ({mark}) {why}" for why, mark in notes.items())
    return _table(["case", *names], rows) + ("\n\n" + legend if legend else "")


_CASE_HEADER = [
    "case",
    "SSE events",
    "bare CPU ms/req",
    "tooltap CPU ms/req",
    "ratio",
    "added ms/req",
    "added µs/event",
    "own / OpenTelemetry SDK ms",
    "TTFC ms bare / tooltap",
    "peak KiB bare / tooltap",
    "best peer ratio",
    "verdict",
]


def rounds_of(cases: list[dict[str, Any]]) -> str:
    """How many rounds the cases ran: "8", or "8 to 24" when some ran more to settle."""
    counts = [c["samples"] for c in cases]
    least, most = min(counts), max(counts)
    return str(least) if least == most else f"{least} to {most}"


def _settling_note(cases: list[dict[str, Any]]) -> str:
    """Which cases ran more rounds to settle, and which never did ("" when none)."""
    least = min(c["samples"] for c in cases)
    more = [f"{c['case']} ({c['samples']})" for c in cases if c["samples"] > least]
    unsettled = [c["case"] for c in cases if c.get("settled") is False]
    if not more and not unsettled:
        return ""
    text = (
        "A case runs more rounds until each of its modes has two least samples within "
        f"{SETTLED:.0%} of each other (up to {MORE_ROUNDS} times {least})"
    )
    text += f"; these ran more: {', '.join(more)}" if more else ""
    if unsettled:
        text += (
            f". Not settled: {', '.join(unsettled)}: a CPU verdict there stands only where "
            "the second least samples give the same, else it is inconclusive"
        )
    return text + ".\n"


def tables(results: dict[str, Any]) -> str:
    """Markdown tables of every section present in ``results``."""
    out: list[str] = []
    cases = results.get("cases")
    if cases:
        out.append(f"### Client CPU per request (best of {rounds_of(cases)} interleaved rounds)\n")
        out.append(_table(_CASE_HEADER, _case_rows(results)))
        settling = _settling_note(cases)
        if settling:
            out.append("\n" + settling)
        peers = _peer_table(cases)
        if peers:
            out.append("\n### Peer instrumentations (client CPU over bare, the same rounds)\n")
            out.append(peers)
            info = results.get("peer_instrumentations") or {}
            for name, left in (info.get("wrappers_left_by_uninstrument") or {}).items():
                out.append(
                    f"\n{name}'s `uninstrument()` left {len(left)} wrappers on the SDK "
                    f"(e.g. `{left[0]}`); the benchmark removes them after each of its rounds."
                )
    checks = results.get("targets")
    reasons = [why for c in cases or () for why in c.get("peers_not_measured", {}).values()]
    if reasons and all("not installed" in why for why in reasons):
        out.append("\nPeers not installed: `scripts/bench` runs this with them.")
    if checks:
        rows = [[t["target"], t["case"], t["value"], t["verdict"]] for t in checks]
        out.append("\n### Targets (verdicts computed from this run)\n")
        out.append(_table(["target", "case", "measured", "verdict"], rows))
    parsers = results.get("parsers")
    if parsers:
        rows = [
            [
                p["stream"],
                p["dialect"],
                p["decoder"],
                _num(p["mb_per_s"], ".1f"),
                _num(p["events_per_s"] / 1000, ".0f"),
                _num(p["us_per_event"], ".2f"),
            ]
            for p in parsers
        ]
        header = ["stream", "dialect", "decoder", "MB/s", "k events/s", "µs/event"]
        out.append("\n### Parser micro-benchmark (CPU, best run)\n")
        out.append(_table(header, rows))
    gains = results.get("fast_paths")
    if gains:
        rows = [
            [
                g["stream"],
                g["dialect"],
                _num(g["on_us_per_event"], ".2f"),
                _num(g["off_us_per_event"], ".2f"),
                _num(g["speedup"], ".1f"),
            ]
            for g in gains
        ]
        header = ["stream", "dialect", "on µs/event", "off µs/event", "times faster on"]
        out.append("\n### Fast paths on and off (`TOOLTAP_FAST_PATHS=0`), StreamParser\n")
        out.append(_table(header, rows))
    memory = results.get("memory")
    if memory:
        out.append("\n### Memory\n")
        turns = memory.get("sequential")
        if turns:
            first, last = turns["samples"][0], turns["samples"][-1]
            start, end = turns.get("rss_window_turns", (first["turns"], last["turns"]))
            held_lines = turns.get("tooltap_lines_held_after_last_tenth")
            out.append(
                f"- {turns['turns']} sequential turns (openai, streamed, instrumented): RSS "
                f"{first['rss_kib']} KiB at turn {first['turns']}; "
                f"{turns['rss_growth_kib_per_1000_turns_second_half']:+.0f} KiB per 1000 turns "
                f"from turn {start} to {end} (before tracemalloc starts); "
                f"{turns['gc_objects_growth_per_1000_turns_second_half']:+.0f} gc objects per "
                f"1000 turns over the second half; open tool spans at the end: "
                f"{last['open_tool_spans']}; bytes tooltap's code allocated and still held "
                f"over the last tenth: {turns['tooltap_bytes_held_after_last_tenth']}"
                + (f" (largest lines: {'; '.join(held_lines[:3])})." if held_lines else ".")
            )
        streams = memory.get("concurrent")
        if streams:
            out.append(
                f"- {streams['streams']} concurrent async streams held mid-arguments (after "
                f"{streams['held_after_chunks']} of {streams['chunks_per_stream']} chunks): "
                f"tooltap's code holds {streams['tooltap_code_bytes_per_open_stream']:.0f} B per "
                f"open stream; the process holds {streams['bare_bytes_per_open_stream']:.0f} B "
                f"bare vs {streams['tooltap_bytes_per_open_stream']:.0f} B instrumented "
                f"({streams['added_bytes_per_open_stream']:+.0f} B)."
            )
    for profile in results.get("profiles", ()):
        rows = [
            [row["component"], f"{row['ms']:+.2f}"]
            for row in profile["added_ms_by_component"]
            if abs(row["ms"]) >= 0.005
        ]
        out.append(
            f"\n### Profile: {profile['case']} (cProfile, inflated: read the split; "
            f"{profile['bare_ms']:.1f} ms bare, {profile['tooltap_ms']:.1f} ms instrumented "
            "per request)\n"
        )
        out.append(_table(["component", "added ms/request"], rows))
    return "\n".join(out) + "\n"


def readme_section(results: dict[str, Any]) -> str:
    """The performance section of ``docs/PERFORMANCE.md``, from one results file: every
    case with its verdict, then every target beside what this run measured."""
    m = results["machine"]
    columns = (0, 4, 5, 6, 7, 8, 10, 11)
    rows = [[r[i] for i in columns] for r in _case_rows(results)]
    header = [_CASE_HEADER[i] for i in columns]
    load = m.get("load_average_at_end", m["load_average_at_start"])
    checks = [
        [t["target"], t["case"], t["value"], t["verdict"]] for t in results.get("targets", ())
    ]
    return (
        f"{README_BEGIN}\n"
        f"tooltap {m['tooltap_commit']}, one run of `python -m benchmarks` ({m['date']}; "
        f"{m['cores']} cores, Python {m['python']}, load average "
        f"{m['load_average_at_start'][0]:.1f} at start, {load[0]:.1f} at end). Best of "
        f"{rounds_of(results['cases'])} interleaved rounds of client CPU; verdicts computed "
        "from this run against the targets below (`benchmarks/RESULTS.md` has the other "
        "sections):\n\n"
        + _table(header, rows)
        + "\nEach verdict is one of these targets, checked against this run:\n\n"
        + _table(["target", "case", "measured", "verdict"], checks)
        + f"\n{README_END}"
    )
