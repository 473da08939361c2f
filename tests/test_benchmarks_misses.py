"""The simulated misses (``benchmarks._misses``): callgrind's summary read by event name, the
requests alone counted bare and instrumented, and the table of what tooltap added."""

from __future__ import annotations

import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from benchmarks import _instructions, _misses
from benchmarks._replay import record
from benchmarks._sim import SimProcess

needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
CASE = "google generate_content"
SMALL = {"calls": 2, "arg_bytes": 200, "fragment": 16}


def _loop(iterations: int) -> dict[str, int]:
    """A ``functools.reduce`` loop of ``iterations`` steps, simulated alone."""
    code = f"import functools; functools.reduce(lambda a, b: a + b, range({iterations}), 0)"
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", "--cache-sim=yes", "--branch-sim=yes",
         "--toggle-collect=functools_reduce", "--callgrind-out-file=/dev/null",
         sys.executable, "-c", code],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return _misses.simulated(run.stderr)


@needs_valgrind
def test_the_simulated_events_are_read_off_callgrinds_summary() -> None:
    small, large = _loop(1_000), _loop(20_000)
    for counts in (small, large):
        assert set(_misses.EVENTS) <= set(counts)
        assert counts["Bim"] <= counts["Bi"] and counts["Bcm"] <= counts["Bc"]
        assert counts["I1mr"] <= counts["Ir"]
    assert large["Ir"] > 10 * small["Ir"]  # the loop alone: twenty times the steps


def test_a_summary_without_simulated_events_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="no simulated events"):
        _misses.simulated("==1== I   refs:      40,070,567\n")


def test_the_table_gives_each_event_and_what_tooltap_added() -> None:
    bare = {"Ir": 1000e6, "I1mr": 20e6, "D1mr": 10e6, "Bcm": 5e6, "Bim": 4e6}
    tooltap = {"Ir": 1020e6, "I1mr": 21e6, "D1mr": 10e6, "Bcm": 5.5e6, "Bim": 4.4e6}
    text = _misses.table("a case", bare, tooltap)
    assert "| instructions | 1000.00 | 1020.00 | +20.00 | +2.0% |" in text
    assert "| L1 instruction-cache misses | 20.00 | 21.00 | +1.00 | +5.0% |" in text
    assert "| L1 data-cache read misses | 10.00 | 10.00 | +0.00 | +0.0% |" in text
    assert "| mispredicted indirect branches | 4.00 | 4.40 | +0.40 | +10.0% |" in text


@pytest.mark.slow
@needs_valgrind
def test_the_requests_alone_are_simulated_bare_and_instrumented(tmp_path: Path) -> None:
    with SimProcess(**SMALL) as sim:
        recorded = tmp_path / "responses.pickle"
        record(_instructions._case(CASE), sim.url, recorded)
        with ThreadPoolExecutor(max_workers=2) as pool:  # the two processes side by side
            bare, tooltap = pool.map(
                lambda mode: _misses._count(CASE, mode, 1, sim.url, recorded), ("bare", "tooltap")
            )
    assert set(_misses.EVENTS) <= set(bare) and set(_misses.EVENTS) <= set(tooltap)
    assert tooltap["Ir"] > bare["Ir"] > 0  # tooltap's work on top of the SDK's
