"""A real Prometheus scrapes ``tooltap demo --serve``: the main job feeds the dashboard.

The demo runs as a user runs it (a subprocess, real SDKs against the simulator) and
keeps its ``/metrics`` endpoint up; a real Prometheus with the shipped alert rules
(``for:`` shortened) scrapes it. Every dashboard panel's PromQL must return data,
and the demo's faults must drive alerts.
"""

from __future__ import annotations

import math
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.ops.support import (
    PYTHON,
    dashboard_targets,
    free_port,
    http_json,
    process,
    prom_query,
    prometheus,
    shortened_rules,
    wait_for,
)

JOB = "tooltap-agent"


def _active_alerts(url: str) -> set[str]:
    body = http_json(url + "/api/v1/alerts") or {}
    return {a["labels"]["alertname"] for a in body.get("data", {}).get("alerts", [])}


def _finite(series: list[dict[str, Any]]) -> bool:
    return any(math.isfinite(float(s["value"][1])) for s in series)


def test_demo_feeds_every_dashboard_panel_and_alerts(prometheus_bin: Path, tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TOOLTAP_"))}
    out = tmp_path / "demo.out"
    rules = shortened_rules(tmp_path / "rules.yml")
    with prometheus(prometheus_bin, tmp_path, port, rules, JOB) as url, out.open("wb") as sink:
        args = [PYTHON, "-m", "tooltap", "demo", "--serve", "--port", str(port)]
        with process(args, stdout=sink, stderr=subprocess.STDOUT, env=env) as demo:
            wait_for(
                lambda: b"Serving http://" in out.read_bytes() or demo.poll() is not None,
                150,
                "the demo to finish its run",
            )
            assert demo.poll() is None, out.read_text()
            finished = time.time()
            wait_for(
                lambda: _finite(prom_query(url, f'timestamp(up{{job="{JOB}"}}) > {finished + 1}')),
                30,
                "a scrape after the run",
            )
            # Counters are scraped once before the run's end and after; a few more
            # scrapes let the rate-based panels and the rules see the increase.
            alerts = wait_for(lambda: _active_alerts(url) or None, 30, "an alert to fire")
            panels = {title: prom_query(url, expr) for title, expr in dashboard_targets()}
    assert "Serving http://127.0.0.1:" in out.read_text()
    assert len(panels) >= 20
    empty = [title for title, series in panels.items() if not series]
    assert empty == [], f"panels without data after a demo run: {empty}"
    assert "TooltapInsufficientBalance" in alerts  # the demo's Google 429: page at once
