"""anthropic's own OpenTelemetry tests give the same results with tooltap instrumented.

``anthropic_upstream/test_open_telemetry.py`` is anthropic's module, unchanged (see its
SOURCES.md). It runs three times in subprocesses against the installed anthropic:
bare, with tooltap instrumented, and with tooltap capturing content. Every test must
end the same way in all three, and tooltap must have recorded operations in the two
instrumented runs (it took part, not just loaded).

One difference is inherent and checked as such: anthropic promises that a client
whose traces are turned off calls nothing of ``opentelemetry.trace``; tooltap, which
the application turned on, then traces the call with a span of its own, and starting
a span calls ``trace.get_current_span``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

import tooltap

UPSTREAM = Path(__file__).parent / "anthropic_upstream"
#: Tests that fail instrumented because tooltap traces a client whose own traces are off.
TOOLTAP_TRACES_UNTRACED_CLIENT = "TestTracingFailures::test_disabled_spans_call_nothing_of_"


def _run(mode: str, tmp: Path) -> tuple[dict[str, str], dict[str, int]]:
    """Outcome of every test of anthropic's module, by id, and tooltap's report, in ``mode``."""
    junit, report = tmp / f"{mode}.xml", tmp / f"{mode}.json"
    src = Path(tooltap.__file__).resolve().parent.parent
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join((str(src), str(UPSTREAM))),
        "TOOLTAP_UPSTREAM": mode,
        "TOOLTAP_UPSTREAM_REPORT": str(report),
    }
    env.pop("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", None)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", "pytest.ini"]
    done = subprocess.run(  # a failing test exits non-zero: the outcomes are read below
        [*command, f"--junitxml={junit}", "test_open_telemetry.py"],
        check=False,
        cwd=UPSTREAM,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert junit.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    outcomes: dict[str, str] = {}
    for case in ElementTree.parse(junit).iter("testcase"):
        kinds = {child.tag for child in case} & {"failure", "error", "skipped"}
        test_id = f"{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}"
        outcomes[test_id] = kinds.pop() if kinds else "passed"
    tooltap_report = json.loads(report.read_text()) if report.exists() else {}
    return outcomes, tooltap_report


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, tuple[dict[str, str], dict[str, int]]]:
    tmp = tmp_path_factory.mktemp("anthropic_upstream")
    return {mode: _run(mode, tmp) for mode in ("off", "on", "content")}


def test_the_bare_run_runs_anthropics_tests(
    runs: dict[str, tuple[dict[str, str], dict[str, int]]],
) -> None:
    bare, report = runs["off"]
    passed = [t for t, outcome in bare.items() if outcome == "passed"]
    assert len(passed) > 0.9 * len(bare) > 0  # the module ran here, not a broken setup
    assert report == {}  # bare: tooltap was not instrumented


@pytest.mark.parametrize("mode", ["on", "content"])
def test_instrumented_runs_end_every_test_as_the_bare_run(
    runs: dict[str, tuple[dict[str, str], dict[str, int]]], mode: str
) -> None:
    bare, _ = runs["off"]
    instrumented, report = runs[mode]
    assert report["operations"] > 100  # tooltap recorded the calls of anthropic's tests
    assert instrumented.keys() == bare.keys()
    differ = {t: (bare[t], instrumented[t]) for t in bare if bare[t] != instrumented[t]}
    inherent = {t: v for t, v in differ.items() if t.startswith(TOOLTAP_TRACES_UNTRACED_CLIENT)}
    assert differ == inherent
    assert all(v == ("passed", "failure") for v in inherent.values())
