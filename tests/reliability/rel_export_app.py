"""A tiny app for the exporter tests, run in its own process: ``python rel_export_app.py N [T]``.

tooltap is instrumented with ``export=True``, so it builds the exporters the ``OTEL_*`` /
``TOOLTAP_PROMETHEUS_*`` environment asks for. The app makes N streamed tool-calling
requests to an in-process simulator on a bare HTTP client, timing each, then prints one
JSON line. With T, it calls ``tooltap._telemetry.export.shutdown(timeout=T)`` itself and
reports how long that took; else it leaves the flush to the atexit hook. Its last line
is ``done <time.time()>``, so the parent can time the exit that follows.
"""

from __future__ import annotations

import json
import sys
import time

import httpx2

import tooltap
from tooltap._telemetry import export
from tooltap.simulator import Simulator

BODY = {
    "model": "gpt-4o",
    "stream": True,
    "messages": [{"role": "user", "content": "How tall am I, and how much do I weigh?"}],
    "tools": [{"type": "function", "function": {"name": "lookup_demo_value", "parameters": {}}}],
}


def main(calls: int, shutdown_timeout: float | None) -> None:
    tooltap.instrument(export=True)
    durations: list[float] = []
    with Simulator() as sim, httpx2.Client(timeout=30) as client:
        for _ in range(calls):
            started = time.perf_counter()
            with client.stream("POST", sim.openai_base_url + "/chat/completions", json=BODY) as r:
                body = b"".join(r.iter_bytes())
            durations.append(time.perf_counter() - started)
            assert r.status_code == 200 and b"lookup_demo_value" in body
            time.sleep(0.02)  # an app doing other work between calls: exports get their turn
    started = time.perf_counter()
    tooltap.flush(timeout_millis=500)
    report: dict[str, object] = {
        "durations": durations,
        "flush": time.perf_counter() - started,
        "prometheus": export.prometheus_address(),
    }
    if shutdown_timeout is not None:
        started = time.perf_counter()
        export.shutdown(timeout=shutdown_timeout)
        report["shutdown"] = time.perf_counter() - started
    print(json.dumps(report), flush=True)
    print(f"done {time.time()}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else None)
