"""One body misused from two threads or two asyncio tasks: the app sees what it sees bare.

While a reader is blocked inside the body, another thread closes the body's iterator,
closes the response, or reads too; the same over asyncio tasks. Each scenario runs in a
fresh interpreter under ``PYTHONMALLOC=debug`` (a use-after-free aborts it), bare and
instrumented, and both must report the same: the interpreter's own "generator already
executing" / "asynchronous generator is already running" errors where the bare body's
generator raises them, every chunk read, and (instrumented) one inference span each.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

APP = Path(__file__).with_name("tap_concurrency_app.py")
SRC = Path(__file__).resolve().parent.parent.parent / "src"


def _run(lib: str, mode: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONMALLOC": "debug", "PYTHONFAULTHANDLER": "1"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, str(APP), lib, mode],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"{mode} app died ({done.returncode}):\n{done.stderr[-3000:]}"
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
def test_misuse_from_two_threads_or_tasks_behaves_as_bare(lib: str) -> None:
    bare, tapped = _run(lib, "bare"), _run(lib, "tooltap")
    assert set(tapped) == set(bare)
    for name, seen in tapped.items():
        assert seen.pop("spans") == 1, name  # the response's inference span, ended once
        assert seen == bare[name], name
    raised = {name: seen["other"] for name, seen in bare.items()}
    assert raised["two concurrent readers"] == ["ValueError", "generator already executing"]
    assert raised["close the iterator while a reader is blocked"] == [
        "ValueError",
        "generator already executing",
    ]
    assert raised["two concurrent reader tasks"] == [
        "RuntimeError",
        "anext(): asynchronous generator is already running",
    ]
    assert all(seen["reader"] is None and seen["chunks"] > 10 for seen in bare.values())
