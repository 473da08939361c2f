"""The provider simulator in a subprocess, so its CPU never counts as the client's.

``python -m benchmarks._sim --calls 3 --arg-bytes 2000 --fragment 4`` serves the
benchmark's main workload and prints the base URL on its first stdout line.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
from pathlib import Path
from types import TracebackType
from typing import Any, Self

__all__ = ["SimProcess", "tool_args"]

_ROOT = Path(__file__).resolve().parent.parent
_WORDS = (
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
    "india", "juliett", "kilo", "lima", "mike", "november", "oscar", "papa",
)  # fmt: skip


def tool_args(size: int, seed: int) -> dict[str, Any]:
    """Arguments whose compact JSON text is exactly ``size`` bytes (ASCII, a few escapes)."""
    head: dict[str, Any] = {"path": f"notes/{seed}.md", "mode": "append", "lines": [seed, 2]}
    words: list[str] = []
    n, length = seed, 0
    while length < size:
        words.append(_WORDS[n % len(_WORDS)])
        length += len(words[-1]) + 1
        n = (n * 7 + 3) % 1_000_003
    body = " ".join(words)
    args = {**head, "content": body}
    over = len(json.dumps(args, separators=(",", ":"))) - size
    args["content"] = body[: len(body) - over] if over > 0 else body
    args["content"] = args["content"].replace(" echo ", ' "echo" ', 1)  # one escaped quote
    while len(json.dumps(args, separators=(",", ":"))) > size:
        args["content"] = args["content"][:-1]
    return args


def _serve(argv: list[str]) -> None:
    from tooltap.simulator import Simulator

    parser = argparse.ArgumentParser(prog="python -m benchmarks._sim")
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--arg-bytes", type=int, default=2000)
    parser.add_argument("--fragment", type=int, default=4)
    parser.add_argument("--final-text", type=int, default=0, help="characters of final text")
    parser.add_argument("--numbered", type=int, default=0, help="1: ids call_0, call_1...")
    options = parser.parse_args(argv)
    calls = [(f"write_note_{i}", tool_args(options.arg_bytes, i)) for i in range(options.calls)]
    text = ("lorem ipsum " * (options.final_text // 12 + 1))[: options.final_text] or None
    ids = "numbered" if options.numbered else "unique"
    with Simulator(calls=calls, final_text=text, fragment=options.fragment, ids=ids) as sim:
        print(sim.url, flush=True)
        sys.stdin.read()  # serve until the parent closes our stdin


class SimProcess:
    """Start the simulator subprocess; ``url`` is its base URL; ``close()`` stops it."""

    def __init__(self, **options: int) -> None:
        argv = [sys.executable, "-m", "benchmarks._sim"]
        for key, value in options.items():
            argv += [f"--{key.replace('_', '-')}", str(value)]
        self._proc = subprocess.Popen(
            argv, cwd=_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline().strip()
        if not line.startswith("http://"):
            self.close()
            raise RuntimeError(f"simulator did not start: {line!r}")
        self.url = line
        self.pid = self._proc.pid

    def close(self) -> None:
        """Close stdin (the server exits) and reap the process."""
        proc = self._proc
        if proc.stdin is not None and not proc.stdin.closed:
            proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


if __name__ == "__main__":
    threading.current_thread().name = "benchmarks-sim"
    _serve(sys.argv[1:])
