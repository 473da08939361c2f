"""start/stop leave nothing behind; big streams stay cheap; the CLI serves until interrupted."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any

import httpx2
import pytest

from tests.simulator.support import simulator_threads
from tooltap.simulator import Fault, Simulator


def _open_fds() -> set[str]:
    return {
        os.readlink(f"/proc/self/fd/{fd}")
        for fd in os.listdir("/proc/self/fd")
        if os.path.exists(f"/proc/self/fd/{fd}")
    }


def test_stop_closes_idle_and_stalled_connections_and_joins_threads() -> None:
    before = {s for s in _open_fds() if s.startswith("socket:")}
    threads_before = set(simulator_threads())  # the shared simulator of the test run
    sim = Simulator().start()
    port = int(sim.url.rsplit(":", 1)[1])
    idle = socket.create_connection(("127.0.0.1", port))  # keep-alive, no request yet
    stalled = socket.create_connection(("127.0.0.1", port))
    sim.inject(Fault("stall", seconds=30))
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}]}).encode()
    stalled.sendall(
        b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\n\r\n%b" % (len(body), body)
    )
    stalled.settimeout(5)
    assert stalled.recv(4096).startswith(b"HTTP/1.1 200 OK")  # headers, then the stall
    assert len(set(simulator_threads()) - threads_before) == 3  # accept loop + 2 connections
    started = time.monotonic()
    sim.stop()
    assert time.monotonic() - started < 2
    assert set(simulator_threads()) - threads_before == set()
    for client in (idle, stalled):
        client.settimeout(5)
        assert client.recv(1) == b""  # the server closed its end
        client.close()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2)
    after = {s for s in _open_fds() if s.startswith("socket:")}
    assert after <= before
    sim.stop()  # idempotent


def test_start_twice_is_an_error_and_url_needs_a_start() -> None:
    sim = Simulator()
    with pytest.raises(RuntimeError):
        _ = sim.url
    with sim:
        with pytest.raises(RuntimeError):
            sim.start()
        assert sim.openai_base_url == sim.url + "/v1"
        assert sim.anthropic_base_url == sim.google_base_url == sim.url


def test_keep_alive_serves_many_requests_on_one_connection(sim: Simulator) -> None:
    ports = set()
    with httpx2.Client(verify=False) as client:
        for _ in range(5):
            with client.stream("POST", sim.url + "/v1/messages", json={"messages": []}) as resp:
                ports.add(resp.extensions["network_stream"].get_extra_info("client_addr")[1])
                assert resp.read() and resp.status_code == 200
    assert len(sim.requests) == 5 and len(ports) == 1


def test_big_stream_for_benchmarks(http: httpx2.Client) -> None:
    calls = [(f"tool_{n}", {"text": chr(ord("a") + n) * 2000}) for n in range(3)]
    with Simulator(calls=calls, fragment=4) as sim:
        body = {
            "model": "m",
            "messages": [{"role": "user", "content": "x"}],
            "tools": [{"type": "function", "function": {"name": f"tool_{n}"}} for n in range(3)],
            "stream": True,
        }
        started = time.monotonic()
        with http.stream("POST", sim.openai_base_url + "/chat/completions", json=body) as resp:
            lines = [line for line in resp.iter_lines() if line.startswith("data: ")]
        elapsed = time.monotonic() - started
    deltas = [json.loads(line[6:]) for line in lines[:-1]]
    args = "".join(
        c["function"]["arguments"]
        for d in deltas
        for choice in d["choices"]
        for c in choice["delta"].get("tool_calls", [])
    )
    assert 1500 <= len(lines) <= 1520
    assert len(args) == sum(len(json.dumps(a, separators=(",", ":"))) for _, a in calls)
    assert elapsed < 10


@pytest.mark.parametrize("sigint", [signal.SIG_DFL, signal.SIG_IGN], ids=["default", "ignored"])
def test_cli_prints_the_url_and_serves(http: httpx2.Client, sigint: Any) -> None:
    """Ctrl-C stops it, also when its parent left SIGINT ignored (a background job)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tooltap.simulator", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, sigint),  # noqa: PLW1509
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        url = line.split(" on ", 1)[1].strip()
        assert url.startswith("http://127.0.0.1:")
        response = http.post(url + "/v1/messages", json={"model": "m", "messages": []})
        assert response.json()["type"] == "message"
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=10)
    assert process.returncode == 0


def test_concurrent_clients(sim: Simulator, http: httpx2.Client) -> None:
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(3):
                r = http.post(sim.url + "/v1/messages", json={"model": "m", "messages": []})
                assert r.status_code == 200
        except BaseException as exc:  # noqa: BLE001 - collected for the main thread
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(sim.requests) == 18
