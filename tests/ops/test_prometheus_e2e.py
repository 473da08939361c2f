"""A real Prometheus scrapes tooltap's /metrics, fed by the instrumented SDKs.

Two runs of ``traffic.py`` in their own processes: a fault-heavy mix and a healthy one.
After the fault-heavy run every dashboard query returns data and the alerts (with
``for:`` shortened to seconds) go pending/firing; after the healthy run none does.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.ops.support import (
    DASHBOARDS,
    GRAFANA_VARS,
    PYTHON,
    ROOT,
    dashboard_targets,
    free_port,
    http_json,
    poll,
    process,
    prom_query,
    prometheus,
    shortened_rules,
    wait_for,
)

JOB = "tooltap-agent"
ALL_ALERTS = {
    "TooltapToolCallFailureRatioHigh",
    "TooltapTruncatedStreams",
    "TooltapBufferedStreams",
    "TooltapProviderErrorRatioHigh",
    "TooltapInsufficientBalance",
    "TooltapRetryStorm",
    "TooltapOrphanedToolCalls",
    "TooltapForcedToolChoiceIgnored",
}


@dataclass
class Run:
    alerts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    panels: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    variables: dict[str, list[str]] = field(default_factory=dict)
    done: dict[str, Any] = field(default_factory=dict)


def variable_queries() -> list[tuple[str, str, str]]:
    """(name, metric selector, label) of each ``label_values`` variable."""
    board = json.loads((DASHBOARDS / "tooltap.json").read_text())
    found = []
    for variable in board["templating"]["list"]:
        if variable["type"] != "query":
            continue
        match = re.fullmatch(r"label_values\((.+), (\w+)\)", variable["query"]["query"])
        assert match, variable["query"]
        selector = match.group(1)
        for name, value in GRAFANA_VARS.items():
            selector = selector.replace(name, value)
        found.append((variable["name"], selector, match.group(2)))
    return found


def _active(url: str) -> dict[str, list[dict[str, Any]]]:
    body = http_json(url + "/api/v1/alerts")
    alerts: dict[str, list[dict[str, Any]]] = {}
    for alert in (body or {}).get("data", {}).get("alerts", []):
        alerts.setdefault(alert["labels"]["alertname"], []).append(alert)
    return alerts


def _scraped_after(url: str, moment: float) -> bool:
    result = prom_query(url, f'timestamp(up{{job="{JOB}"}}) > {moment}')
    return bool(result) and float(result[0]["value"][1]) > moment


def _evaluated_after(url: str, moment: float) -> bool:
    body = http_json(url + "/api/v1/rules") or {}
    groups = body.get("data", {}).get("groups", [])
    return bool(groups) and all(_epoch(g["lastEvaluation"]) > moment for g in groups)


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(
        re.sub(r"(\.\d{6})\d*", r"\1", stamp.replace("Z", "+00:00"))
    ).timestamp()


def run_mix(mix: str, prometheus_bin: Path, workdir: Path, expect_alerts: bool) -> Run:
    metrics_port = free_port()
    rules = shortened_rules(workdir / "rules.yml")
    run = Run()
    with prometheus(prometheus_bin, workdir, metrics_port, rules, JOB) as url:
        args = [PYTHON, str(ROOT / "tests/ops/traffic.py"), "--mix", mix]
        args += ["--prometheus-port", str(metrics_port), "--hold"]
        with process(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as traffic:
            assert traffic.stdout is not None
            line = traffic.stdout.readline()  # blocks until the mix is done (bounded below)
            assert line.startswith("{"), f"traffic failed: {line!r}"
            run.done = json.loads(line)
            finished = time.time()
            wait_for(lambda: _scraped_after(url, finished + 1), 30, "a scrape after the run")
            if expect_alerts:
                poll(lambda: set(_active(url)) >= ALL_ALERTS, 30)  # the test shows any missing
            else:  # several evaluations well past the `for:` of every rule
                settled = time.time() + 4
                wait_for(lambda: _evaluated_after(url, settled), 30, "rule evaluations")
            run.alerts = _active(url)
            for title, expr in dashboard_targets():
                run.panels[title] = prom_query(url, expr)
            for name, selector, label in variable_queries():
                body = http_json(f"{url}/api/v1/series?match[]={_quote(selector)}") or {}
                run.variables[name] = sorted({s.get(label, "") for s in body.get("data", [])})
    return run


def _quote(text: str) -> str:
    return quote(text, safe="")


@pytest.fixture(scope="module")
def faults(prometheus_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    return run_mix("faults", prometheus_bin, tmp_path_factory.mktemp("faults"), True)


@pytest.fixture(scope="module")
def healthy(prometheus_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    return run_mix("healthy", prometheus_bin, tmp_path_factory.mktemp("healthy"), False)


def _finite(series: list[dict[str, Any]]) -> bool:
    return any(math.isfinite(float(s["value"][1])) for s in series)


def test_every_dashboard_query_returns_data_after_the_fault_heavy_run(faults: Run) -> None:
    assert len(faults.panels) >= 20
    empty = [title for title, series in faults.panels.items() if not _finite(series)]
    assert empty == [], f"panels without data: {empty}"


def test_dashboard_variables_list_real_values(faults: Run) -> None:
    assert faults.variables["job"] == [JOB]
    assert {"openai", "anthropic"} <= set(faults.variables["provider"])
    assert faults.variables["tool"] == ["lookup_demo_value"]


def test_fault_heavy_run_drives_every_alert(faults: Run) -> None:
    assert set(faults.alerts) == ALL_ALERTS
    for name, alerts in faults.alerts.items():
        assert all(a["state"] in ("pending", "firing") for a in alerts), name
        assert all(a["labels"]["job"] == JOB for a in alerts), name
    balance = faults.alerts["TooltapInsufficientBalance"]
    assert {a["labels"]["gen_ai_provider_name"] for a in balance} == {"openai", "anthropic"}
    assert all(a["labels"]["severity"] == "critical" for a in balance)
    classes = {a["labels"]["error_type"] for a in faults.alerts["TooltapProviderErrorRatioHigh"]}
    assert "rate_limited" in classes and "insufficient_balance" not in classes
    storm = {a["labels"]["gen_ai_provider_name"] for a in faults.alerts["TooltapRetryStorm"]}
    assert "openai" in storm


def test_healthy_run_stays_quiet(healthy: Run) -> None:
    assert healthy.alerts == {}
    calls = healthy.panels["Tool-call rate by provider, tool and outcome / A"]
    assert calls and {s["metric"]["tooltap_outcome"] for s in calls} == {"ok"}
    assert healthy.panels["Provider errors by class / A"] == []
    assert healthy.panels["Orphaned and duplicate results / A"] == []
