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
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out, progress = proc.stdout, proc.stderr
    assert "UNEXPECTED" not in progress
    assert re.search(r"\[21/21\]", progress)
    found = re.findall(
        r"^(\S.*?)\s{2,}(openai|anthropic|gcp\.\w+)\s+lookup_demo_value\s+(\S+(?: id\))?)"
        r"\s+(\w+(?: \(\w+\))?)\s+(never a call|\d+\.\d ms(?: until flush)?)",
        out,
        re.MULTILINE,
    )
    # each call sits in its conversation's trace: the scenario comes from the root span
    scenarios = {scenario for scenario, *_ in found}
    assert "?" not in scenarios and len(scenarios) >= 10
    assert all(t.endswith("until flush") for _, _, _, o, t in found if o == "orphaned")
    rows = [row[1:] for row in found]
    outcomes = [outcome for _, _, outcome, _ in rows]
    assert outcomes.count("ok") >= 20
    # The abandoned pair, and the complete first call of the cut stream: a correct
    # harness runs nothing from a truncated response, so that call is never answered.
    assert outcomes.count("orphaned") == 3
    # Truncated calls never fully arrived; the invalid-JSON call did: it has its span,
    # ended by the error result the harness sent under its id.
    assert outcomes.count("truncated_json") == 2
    assert [(o, t.endswith("ms")) for _, _, o, t in rows if "invalid_json" in o] == [
        ("error (invalid_json)", True)
    ]
    call_ids = [cid for _, cid, _, _ in rows if cid != "(no id)"]
    # One row per delivered call: two conversations at once numbering their ids the same
    # way each have their own call_0 and call_1, both ok; every other id is unique.
    shared = [(cid, o) for _, cid, o, _ in rows if re.fullmatch(r"call_\d", cid)]
    assert sorted(shared) == [("call_0", "ok")] * 2 + [("call_1", "ok")] * 2
    unique = [cid for cid in call_ids if not re.fullmatch(r"call_\d", cid)]
    assert len(unique) == len(set(unique)), "one row per call id"
    assert sum(1 for _, cid, _, _ in rows if cid == "(no id)") >= 2  # Google calls without ids
    assert {p for p, _, _, _ in rows} == {"openai", "anthropic", "gcp.gemini"}
    assert "unknown_call" not in out  # every result answered a call id tooltap knew
    assert "truncated_stream" in out and "overloaded_error" in out
    assert re.search(r"stream_buffered \d+ events at once after 2\.\d+s", out)
    assert re.search(r"^  duplicate: lookup_demo_value call_\w+$", out, re.MULTILINE)
    assert re.search(r"\d+ inference spans \(\d+ failed, [1-9]\d* retries\)", out)


def test_version_flag_prints_the_package_version() -> None:
    import tooltap

    proc = subprocess.run(
        [sys.executable, "-m", "tooltap", "--version"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"tooltap {tooltap.__version__}"


BLOCK_SDK = """
import sys
from importlib.abc import MetaPathFinder


class NoSdk(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry.sdk" or name.startswith("opentelemetry.sdk."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoSdk())
from tooltap._cli import main
main(["demo"])
"""


def test_demo_without_the_sdk_says_what_to_install() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", BLOCK_SDK], check=False, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert 'pip install ".[sdk,otlp,prometheus]"' in proc.stderr


def test_simulator_port_in_use_says_to_choose_another() -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "tooltap.simulator", "--port", str(port)],
            check=False, capture_output=True, text=True, timeout=30,
        )  # fmt: skip
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and "--port" in proc.stderr
