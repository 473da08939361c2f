"""The figures as text tables (stdout, RESULTS.md) and the targets of issue 6, checked."""

from __future__ import annotations

import os
import platform
import subprocess
import time
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["machine", "tables", "targets"]

_ROOT = Path(__file__).resolve().parent.parent

#: Issue 6: added client CPU per SSE event; ratio to the bare SDK (streamed); per whole body.
TARGET_US_PER_EVENT = 2.0
TARGET_RATIO = 1.03
TARGET_MS_PER_BODY = 0.1


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
    for name in ("openai", "anthropic", "google-genai", "httpx2", "jiter", "opentelemetry-sdk"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
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


def tables(results: dict[str, Any]) -> str:
    """Markdown tables of every section present in ``results``."""
    out: list[str] = []
    cases = results.get("cases")
    if cases:
        rows = [
            [
                c["case"],
                str(c["events"] or "-"),
                _num(c["bare_cpu_ms"], ".2f"),
                _num(c["tooltap_cpu_ms"], ".2f"),
                _num(c["ratio"], ".3f"),
                _num(c["added_cpu_ms"], "+.3f"),
                _num(c["added_us_per_event"], "+.2f"),
                _num(c["bare_ttfc_ms"], ".1f") + " / " + _num(c["tooltap_ttfc_ms"], ".1f"),
                _num(c.get("bare_peak_kib"), ".0f")
                + " / "
                + _num(c.get("tooltap_peak_kib"), ".0f"),
            ]
            for c in cases
        ]
        header = [
            "case",
            "SSE events",
            "bare CPU ms/req",
            "tooltap CPU ms/req",
            "ratio",
            "added ms/req",
            "added µs/event",
            "TTFC ms bare / tooltap",
            "peak KiB bare / tooltap",
        ]
        samples = cases[0]["samples"]
        out.append(f"### Client CPU per request (best of {samples} interleaved rounds)\n")
        out.append(_table(header, rows))
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
    memory = results.get("memory")
    if memory:
        out.append("\n### Memory\n")
        turns = memory.get("sequential")
        if turns:
            first, last = turns["samples"][0], turns["samples"][-1]
            start, end = turns.get("rss_window_turns", (first["turns"], last["turns"]))
            out.append(
                f"- {turns['turns']} sequential turns (openai, streamed, instrumented): RSS "
                f"{first['rss_kib']} KiB at turn {first['turns']}; "
                f"{turns['rss_growth_kib_per_1000_turns_second_half']:+.0f} KiB per 1000 turns "
                f"from turn {start} to {end} (before tracemalloc starts); "
                f"{turns['gc_objects_growth_per_1000_turns_second_half']:+.0f} gc objects per "
                f"1000 turns over the second half; open tool spans at the end: "
                f"{last['open_tool_spans']}; bytes tooltap's code allocated and still held "
                f"over the last tenth: {turns['tooltap_bytes_held_after_last_tenth']}"
                + (
                    f" (largest lines: {'; '.join(turns['tooltap_lines_held_after_last_tenth'][:3])})."
                    if turns.get("tooltap_lines_held_after_last_tenth")
                    else "."
                )
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
            f"\n### Profile: {profile['case']} (cProfile; {profile['bare_ms']:.1f} ms bare, "
            f"{profile['tooltap_ms']:.1f} ms instrumented per request)\n"
        )
        out.append(_table(["component", "added ms/request"], rows))
    checks = results.get("targets")
    if checks:
        rows = [
            [t["target"], t["case"], t["value"], "met" if t["met"] else "MISSED"] for t in checks
        ]
        out.append("\n### Targets of issue 6\n")
        out.append(_table(["target", "case", "measured", ""], rows))
    return "\n".join(out) + "\n"


def targets(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each case against the targets that apply to it."""
    checks: list[dict[str, Any]] = []
    for c in cases:
        if c["dialect"] == "":
            checks.append(
                {
                    "target": "non-LLM traffic: no measurable cost",
                    "case": c["case"],
                    "value": f"{c['added_cpu_ms'] * 1000:+.0f} µs/req ({c['ratio']:.3f}x)",
                    "met": c["ratio"] <= 1.02,
                }
            )
        elif c["streamed"]:
            per_event = c["added_us_per_event"]
            checks.append(
                {
                    "target": f"≤ {TARGET_US_PER_EVENT:g} µs added per SSE event",
                    "case": c["case"],
                    "value": f"{per_event:+.2f} µs",
                    "met": per_event <= TARGET_US_PER_EVENT,
                }
            )
            if "no SDK" not in c["case"]:
                checks.append(
                    {
                        "target": f"≤ {(TARGET_RATIO - 1) * 100:g}% over the bare SDK",
                        "case": c["case"],
                        "value": f"{(c['ratio'] - 1) * 100:+.1f}%",
                        "met": c["ratio"] <= TARGET_RATIO,
                    }
                )
            bare, inst = c["bare_ttfc_ms"], c["tooltap_ttfc_ms"]
            if bare is not None and inst is not None:
                checks.append(
                    {
                        "target": "TTFC unchanged (within 1 ms or 10%)",
                        "case": c["case"],
                        "value": f"{inst - bare:+.2f} ms",
                        "met": inst - bare <= max(1.0, 0.1 * bare),
                    }
                )
        else:
            checks.append(
                {
                    "target": f"≤ {TARGET_MS_PER_BODY:g} ms added per non-streamed call",
                    "case": c["case"],
                    "value": f"{c['added_cpu_ms']:+.3f} ms",
                    "met": c["added_cpu_ms"] <= TARGET_MS_PER_BODY,
                }
            )
    return checks
