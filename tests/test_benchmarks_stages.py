"""The stage counts (``benchmarks._stages``): every stage names a live function of tooltap's,
routing it keeps the case working, and a stage counted under valgrind is a real share of
the loop it runs in."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import _instructions, _stages
from benchmarks._replay import record
from benchmarks._sim import SimProcess

ROOT = Path(__file__).resolve().parent.parent
CASE = "google generate_content"
SMALL = {"calls": 2, "arg_bytes": 200, "fragment": 16}


@pytest.mark.parametrize(("stage", "target"), _stages.STAGES)
def test_every_stage_is_a_function_of_tooltaps(stage: str, target: str) -> None:
    owner, name = _stages.resolve(target)
    function = getattr(owner, name)
    module = getattr(function, "__module__", "") or ""
    assert module.startswith("tooltap."), (stage, module)


def test_a_missing_stage_is_an_error() -> None:
    with pytest.raises(LookupError):
        _stages.resolve("tooltap._telemetry.calls:Calls.no_such_stage")


def test_a_routed_stage_is_called_and_keeps_the_case_working(tmp_path: Path) -> None:
    """The child, with the stage routed, runs the case's requests to the end, and the stage
    ran through the route (no valgrind: the route alone is checked)."""
    target = "tooltap._telemetry.calls:Calls.received"
    with SimProcess(**SMALL) as sim:
        recorded = tmp_path / "responses.pickle"
        record(_instructions._case(CASE), sim.url, recorded)
        env = {"TOOLTAP_BENCH_REPLAY": str(recorded), "PYTHONHASHSEED": "0"}
        child = ["--child", CASE, "tooltap-noop", "2", sim.url, target]
        run = subprocess.run(
            [sys.executable, "-m", "benchmarks._stages", *child],
            cwd=ROOT,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert run.returncode == 0, run.stderr[-2000:]
    found = _stages._CALLS.search(run.stdout)
    assert found is not None, run.stdout[-2000:]
    assert int(found.group(1)) >= 2  # the calls of each of the 2 counted requests


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="counts need valgrind")
def test_a_stage_counts_a_share_of_the_loop(tmp_path: Path) -> None:
    with SimProcess(**SMALL) as sim:
        recorded = tmp_path / "responses.pickle"
        record(_instructions._case(CASE), sim.url, recorded)
        args = (CASE, "tooltap-noop", 1, sim.url, recorded)
        received, calls = _stages._count(*args, "tooltap._telemetry.calls:Calls.received")
        loop, _ = _stages._count(*args, None)
    assert 0 < received < loop
    assert calls >= 1
