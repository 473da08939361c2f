"""`tooltap demo`, the main job, run as a user runs it: a subprocess, real SDKs, real sockets."""

from __future__ import annotations

import os
import re
import subprocess
import sys


def test_demo_runs_every_scenario_and_reports_each_call_id() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TOOLTAP_"))}
    proc = subprocess.run(
        [sys.executable, "-m", "tooltap", "demo"],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out, progress = proc.stdout, proc.stderr
    assert "UNEXPECTED" not in progress
    assert re.search(r"\[18/18\]", progress)
    rows = re.findall(
        r"^(openai|anthropic|gcp\.\w+)\s+lookup_demo_value\s+(\S+(?: id\))?)\s+(\w+)", out, re.M
    )
    outcomes = [outcome for _, _, outcome in rows]
    assert outcomes.count("ok") >= 20
    # The abandoned pair, and the complete first call of the cut stream: a correct
    # harness runs nothing from a truncated response, so that call is never answered.
    assert outcomes.count("orphaned") == 3
    assert {"truncated_json", "invalid_json"} <= set(outcomes)
    call_ids = [cid for _, cid, outcome in rows if outcome == "ok" and cid != "(no id)"]
    assert len(call_ids) == len(set(call_ids)), "one row per call id"
    assert sum(1 for _, cid, _ in rows if cid == "(no id)") >= 2  # Google calls without ids
    assert "truncated_stream" in out and "overloaded_error" in out
    assert re.search(r"^  duplicate: lookup_demo_value call_\w+$", out, re.M)
    assert re.search(r"\d+ inference spans \(\d+ failed, [1-9]\d* retries\)", out)
