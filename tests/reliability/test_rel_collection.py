"""A body the garbage collector frees while the OpenTelemetry SDK holds a lock.

The collector runs finalizers (and closes generators) inside whatever code allocated:
here the SDK creating a histogram aggregation under its lock. Settling the body there
would record on that histogram and wait on the lock forever; tooltap keeps the work for
the next safe point instead (the next operation, ``flush``, exit). Runs in a subprocess:
a hang is a deadlock, caught by the timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

APP = Path(__file__).with_name("collection_app.py")
SRC = Path(__file__).resolve().parent.parent.parent / "src"


@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
def test_a_body_collected_under_the_sdks_lock_settles_later_without_deadlock(lib: str) -> None:
    env = {**os.environ, "PYTHONFAULTHANDLER": "1"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    try:
        done = subprocess.run(
            [sys.executable, str(APP), lib],
            env=env, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the app hung (deadlock):\n{exc.stderr!r}")
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout)
    assert seen["collected"] and seen["body_freed"]  # the collection ran under the lock
    assert seen["ended_before_flush"] == 2  # the first and last requests'; the dropped waits
    assert seen["ended_after_flush"] == 3
    assert seen["closed_early"] == [False, False, True]  # the dropped body's, once
