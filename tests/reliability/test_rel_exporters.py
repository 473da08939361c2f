"""Exporters: a broken backend never slows the app down or holds its exit.

Each case runs ``rel_export_app.py`` in its own process (tooltap builds its exporters from
the environment), all cases at once, against a backend that is: healthy (the baseline),
down (a closed port), refusing (503 to every export, or a reset on connect), hanging
(accepts the connection and never answers), over OTLP http/protobuf and grpc; or, for
Prometheus, a port already taken. Exports are made frequent (100 ms batches, 200 ms
metric interval) so they hit the broken backend while the app works, and the exporters
keep their default 10 s timeout, so a call that waited on one would show.

The app must: make every call at the baseline's pace (median within 3x + 50 ms, none over
2 s); flush within its 0.5 s bound; ``export.shutdown(timeout=1)`` within ~1 s; exit,
flushing at exit, within ``SHUTDOWN_TIMEOUT`` (5 s) plus slack.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tooltap._telemetry.export import SHUTDOWN_TIMEOUT

APP = Path(__file__).parent / "rel_export_app.py"
CALLS = 40
SLACK = 3.0  # seconds of scheduling noise allowed on a shared machine


class _Sink(BaseHTTPRequestHandler):
    """An OTLP/HTTP backend: 200 (healthy) or 503 (refusing) to every export."""

    protocol_version = "HTTP/1.1"
    status = 200

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(self.status)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        """Silent."""


class _Refusing(_Sink):
    status = 503


class _Raw(threading.Thread):
    """A TCP listener that resets every connection, or accepts and never answers."""

    def __init__(self, mode: str) -> None:
        super().__init__(daemon=True)
        self.mode = mode
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        self.stopped = False

    def run(self) -> None:
        while not self.stopped:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self.mode == "reset":
                conn.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                )
                conn.close()
            else:
                self.held.append(conn)  # hang: never read, never answer

    def stop(self) -> None:
        self.stopped = True
        self.sock.close()
        for conn in self.held:
            conn.close()


@dataclass
class Backends:
    """The loopback backends every case points at."""

    healthy: ThreadingHTTPServer
    refusing: ThreadingHTTPServer
    reset: _Raw
    hanging: _Raw
    taken: socket.socket
    closed_port: int
    threads: list[threading.Thread] = field(default_factory=list)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def backends() -> Iterator[Backends]:
    healthy = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    refusing = ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    found = Backends(healthy, refusing, _Raw("reset"), _Raw("hang"), taken, _free_port())
    for server in (healthy, refusing):
        thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        thread.start()
        found.threads.append(thread)
    found.reset.start()
    found.hanging.start()
    try:
        yield found
    finally:
        for server in (healthy, refusing):
            server.shutdown()
            server.server_close()
        found.reset.stop()
        found.hanging.stop()
        taken.close()


def _otlp(port: int, protocol: str = "http/protobuf") -> dict[str, str]:
    return {
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}",
        "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
    }


def _cases(b: Backends) -> dict[str, dict[str, str]]:
    return {
        "healthy": _otlp(b.healthy.server_address[1]),
        "http_down": _otlp(b.closed_port),
        "http_refusing": _otlp(b.refusing.server_address[1]),
        "http_reset": _otlp(b.reset.port),
        "http_hanging": _otlp(b.hanging.port),
        "grpc_down": _otlp(b.closed_port, "grpc"),
        "grpc_hanging": _otlp(b.hanging.port, "grpc"),
        "prometheus_taken": {"TOOLTAP_PROMETHEUS_PORT": str(b.taken.getsockname()[1])},
    }


@dataclass
class Run:
    """What one app process reported, and how long its exit took."""

    report: dict[str, Any]
    exit_seconds: float
    returncode: int


def _start(env: dict[str, str], explicit: bool) -> subprocess.Popen[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TOOLTAP_PROM"))}
    full.update(
        OTEL_BSP_SCHEDULE_DELAY="100",
        OTEL_METRIC_EXPORT_INTERVAL="200",
        OTEL_SERVICE_NAME="tooltap-reliability",
        **env,
    )
    args = [sys.executable, str(APP), str(CALLS), *(["1.0"] if explicit else [])]
    return subprocess.Popen(
        args, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _finish(process: subprocess.Popen[str]) -> Run:
    assert process.stdout is not None
    report: dict[str, Any] = {}
    done: float | None = None
    for line in process.stdout:
        if line.startswith("{"):
            report = json.loads(line)
        elif line.startswith("done "):
            done = float(line.split()[1])
            break
    try:
        returncode = process.wait(60)
    finally:
        if process.poll() is None:
            process.kill()
    exited = time.time()
    _, stderr = process.communicate()
    assert done is not None and report, f"the app failed: {stderr[-2000:]}"
    return Run(report, exited - done, returncode)


@pytest.mark.parametrize("explicit", [False, True], ids=["exit_flush", "explicit_shutdown"])
def test_broken_backends_do_not_slow_the_app(backends: Backends, explicit: bool) -> None:
    cases = _cases(backends)
    processes = {name: _start(env, explicit) for name, env in cases.items()}
    with ThreadPoolExecutor(len(processes)) as pool:  # each exit timed as it happens
        runs = dict(zip(processes, pool.map(_finish, processes.values()), strict=True))

    base = statistics.median(runs["healthy"].report["durations"])
    for name, run in runs.items():
        durations = run.report["durations"]
        assert run.returncode == 0, name
        assert len(durations) == CALLS
        assert statistics.median(durations) < 3 * base + 0.05, (
            name,
            statistics.median(durations),
            base,
        )
        assert max(durations) < 2.0, (name, max(durations))
        assert run.report["flush"] < 2 * 0.5 + SLACK, (name, run.report["flush"])
        if explicit:
            assert run.report["shutdown"] < 1.0 + SLACK, (name, run.report["shutdown"])
            assert run.exit_seconds < SLACK, (name, run.exit_seconds)
        else:
            assert run.exit_seconds < SHUTDOWN_TIMEOUT + SLACK, (name, run.exit_seconds)
    assert runs["prometheus_taken"].report["prometheus"] is None  # not started; the app went on
