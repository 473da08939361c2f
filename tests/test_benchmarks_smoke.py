"""The benchmark's smoke run: it runs, and produces figures for every case.

No thresholds: timings on a shared CI machine say nothing. What must hold is that
``python -m benchmarks --smoke`` works from the repository root, drives every case
bare and instrumented, and writes every section of its JSON with real numbers.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks._cases import CASES, GATEWAY, NON_LLM, RAW
from benchmarks._peers import PEERS

ROOT = Path(__file__).resolve().parent.parent
DIALECTS = {"openai.chat", "openai.responses", "anthropic.messages", "google.genai"}


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def test_smoke_run_produces_figures_for_every_case(tmp_path: Path) -> None:
    out = tmp_path / "smoke.json"
    run = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--smoke", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads(out.read_text())
    assert "| case |" in run.stdout and "### Targets (verdicts computed" in run.stdout

    cases = {c["case"]: c for c in results["cases"]}
    assert set(cases) == {c.name for c in CASES + RAW + GATEWAY + NON_LLM}
    for name, case in cases.items():
        assert _positive(case["bare_cpu_ms"]) and _positive(case["tooltap_cpu_ms"]), name
        assert _positive(case["bare_peak_kib"]) and _positive(case["tooltap_peak_kib"]), name
        assert case["app_items"] > 0, name
        if case["streamed"]:
            assert case["events"] > 0 and case["added_us_per_event"] is not None, name
            assert _positive(case["bare_ttfc_ms"]) and _positive(case["tooltap_ttfc_ms"]), name
    events = results["workload"]["events"]
    assert set(events) == DIALECTS and all(n > 0 for n in events.values())
    assert events["openai.chat"] > 100  # the smoke workload still streams many deltas

    decoders = {(p["stream"], p["dialect"], p["decoder"]) for p in results["parsers"]}
    for stream in ("workload", "corpus"):
        for dialect in DIALECTS:
            assert (stream, dialect, "tooltap StreamParser") in decoders
            assert any(d == dialect and s == stream and "tooltap" not in n for s, d, n in decoders)
    assert all(
        _positive(p["mb_per_s"]) and _positive(p["events_per_s"]) for p in results["parsers"]
    )
    gains = {(g["stream"], g["dialect"]): g for g in results["fast_paths"]}
    streams = ("workload", "workload, reordered", "workload, reordered CRLF", "corpus")
    assert set(gains) == {  # every dialect with a fast path, on every stream
        (s, d) for s in streams for d in DIALECTS - {"google.genai"}
    }
    assert all(_positive(g["speedup"]) for g in gains.values())
    assert "### Fast paths on and off" in run.stdout

    turns = results["memory"]["sequential"]
    assert turns["turns"] >= 200 and len(turns["samples"]) >= 5
    assert turns["samples"][-1]["open_tool_spans"] == 0  # every call got its result
    streams = results["memory"]["concurrent"]
    assert streams["streams"] > 0 and streams["chunks_per_stream"] > streams["held_after_chunks"]
    assert _positive(streams["tooltap_code_bytes_per_open_stream"])

    checked = {t["case"] for t in results["targets"]}
    assert set(cases) <= checked
    assert {t["verdict"] for t in results["targets"]} <= {"met", "MISSED", "inconclusive"}
    for name, case in cases.items():  # a whole body: tooltap's own share and the SDK's
        if case["kind"] == "sdk" and not case["streamed"]:
            assert case["own_added_ms"] is not None and case["otel_sdk_ms"] is not None, name

    # every peer on every SDK case: measured in the same rounds, or the reason it was not
    peer_check = "ahead of the best peer (ratio strictly lower)"
    ahead = {t["case"]: t for t in results["targets"] if t["target"] == peer_check}
    for name, case in cases.items():
        measured, not_measured = case["peers"], case["peers_not_measured"]
        if case["kind"] != "sdk":
            assert not measured and not not_measured, name
            continue
        assert set(measured) | set(not_measured) == {p.name for p in PEERS}, name
        assert not set(measured) & set(not_measured), name
        assert all(why for why in not_measured.values()), name
        for peer in measured.values():
            assert _positive(peer["cpu_ms"]) and len(peer["cpu_ms_samples"]) == case["samples"]
        if case["streamed"]:
            assert ahead[name]["verdict"] in {"met", "MISSED", "inconclusive"}, name
