"""The Grafana dashboard: Grafana's own schema (tsc), and only metrics tooltap emits."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import yaml

from tests.ops.support import DASHBOARDS, ROOT, TOOLS, ensure_tool
from tooltap._telemetry import semconv

SCHEMA_DIR = TOOLS / "grafana-schema"
TYPES = Path(__file__).with_name("dashboard_types.ts")
TSCONFIG = {
    "compilerOptions": {
        "strict": True,
        "noEmit": True,
        "skipLibCheck": True,
        "module": "esnext",
        "moduleResolution": "bundler",
        "target": "es2022",
    },
    "files": ["check.ts"],
}
#: PromQL words that are not metric names.
PROMQL_WORDS = {
    "sum", "rate", "increase", "histogram_quantile", "sort_desc", "vector", "and", "or",
    "unless", "offset", "by", "on", "group_left", "bool", "label_values", "timestamp", "max",
    "max_over_time",
}  # fmt: skip
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


def dashboard() -> dict[str, Any]:
    board: dict[str, Any] = json.loads((DASHBOARDS / "tooltap.json").read_text())
    return board


def tsc(board_json: str, name: str) -> subprocess.CompletedProcess[str]:
    """Type-check ``board_json`` against Grafana's dashboard types with tsc."""
    tsc_bin = ensure_tool("get-grafana-schema", SCHEMA_DIR / "node_modules" / ".bin" / "tsc")
    workdir = SCHEMA_DIR / "checks" / name
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    (workdir / "tsconfig.json").write_text(json.dumps(TSCONFIG))
    source = TYPES.read_text() + f"\nexport const dashboard: TooltapDashboard = {board_json};\n"
    (workdir / "check.ts").write_text(source)
    return subprocess.run(
        [str(tsc_bin), "-p", str(workdir)], check=False, capture_output=True, text=True, timeout=180
    )


def expressions() -> list[str]:
    """Every PromQL expression the dashboard (targets, variables) and the alert rules use."""
    board = dashboard()
    exprs = [t["expr"] for p in board["panels"] for t in p.get("targets", [])]
    exprs += [v["query"]["query"] for v in board["templating"]["list"] if v["type"] == "query"]
    rules = yaml.safe_load((DASHBOARDS / "alerts.yml").read_text())
    exprs += [r["expr"] for g in rules["groups"] for r in g["rules"]]
    return exprs


def names_in(expr: str) -> tuple[set[str], set[str]]:
    """(metric names, label names) used by a PromQL expression."""
    labels = set(
        re.findall(r"([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)", " ".join(re.findall(r"\{[^}]*\}", expr)))
    )
    for group in re.findall(r"\b(?:by|on|without|ignoring|group_left)\s*\(([^)]*)\)", expr):
        labels |= {part.strip() for part in group.split(",") if part.strip()}
    labels |= set(re.findall(r"label_values\([^,]+,\s*(\w+)\)", expr))
    bare = re.sub(r"\{[^}]*\}|\[[^\]]*\]|\"[^\"]*\"", " ", expr)
    bare = re.sub(r"\b(?:by|on|without|ignoring|group_left)\s*\([^)]*\)", " ", bare)
    bare = re.sub(r"label_values\(([^,]+),\s*\w+\)", r"\1", bare)
    bare = re.sub(r"\b\d+(?:\.\d+)?[smhdwy]?\b|\$\w+", " ", bare)  # numbers, durations, variables
    return set(re.findall(r"[a-zA-Z_:][\w:]*", bare)) - PROMQL_WORDS, labels


def emitted_metric_names() -> set[str]:
    names = {"up"}
    for otel_name, prom_name in semconv.PROMETHEUS_NAMES.items():
        if semconv.METRICS[otel_name][0] == "histogram":
            names |= {prom_name + suffix for suffix in HISTOGRAM_SUFFIXES}
        else:
            names.add(prom_name)
    return names


def emitted_label_names() -> set[str]:
    attributes = [v for k, v in vars(semconv).items() if k.isupper() and isinstance(v, str)]
    sanitized = {re.sub(r"[^a-zA-Z0-9]", "_", a) for a in attributes if "." in a and " " not in a}
    return sanitized | {"job", "instance", "le", "otel_scope_name"}  # the last: the exporter's


def test_prometheus_names_follow_the_exporter() -> None:
    """semconv.PROMETHEUS_NAMES is what opentelemetry-exporter-prometheus really produces."""
    from opentelemetry.exporter.prometheus._mapping import map_unit, sanitize_full_name

    for otel_name, (kind, unit, _) in semconv.METRICS.items():
        suffix = map_unit(unit)
        expected = sanitize_full_name(otel_name) + (f"_{suffix}" if suffix else "")
        expected += "_total" if kind == "counter" else ""
        assert semconv.PROMETHEUS_NAMES[otel_name] == expected


def test_every_metric_and_label_the_dashboard_and_rules_name_is_emitted() -> None:
    metrics, labels = set(), set()
    for expr in expressions():
        found_metrics, found_labels = names_in(expr)
        metrics |= found_metrics
        labels |= found_labels
    assert metrics - emitted_metric_names() == set()
    assert labels - emitted_label_names() == set()
    # the check itself sees what it should
    assert {"tooltap_tool_calls_total", "tooltap_tool_call_duration_seconds_bucket"} <= metrics
    assert {"tooltap_outcome", "gen_ai_provider_name", "error_type"} <= labels


def test_every_gen_ai_selector_is_tooltaps_scope() -> None:
    """Other instrumentations record the same gen_ai_client_* names under their own scope."""
    selectors = [
        s for e in expressions() for s in re.findall(r"gen_ai_client_\w+(?:\{[^}]*\})?", e)
    ]
    assert len(selectors) > 10
    unscoped = [s for s in selectors if 'otel_scope_name="tooltap"' not in s]
    assert unscoped == []


def test_name_check_catches_an_unknown_metric() -> None:
    found, labels = names_in(
        'sum by (tooltap_outcme) (rate(tooltap_tool_call_total{job=~"$job"}[5m]))'
    )
    assert found - emitted_metric_names() == {"tooltap_tool_call_total"}
    assert labels - emitted_label_names() == {"tooltap_outcme"}


def test_panels_use_the_datasource_variable() -> None:
    board = dashboard()
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert variables["DS_PROMETHEUS"]["type"] == "datasource"
    assert variables["DS_PROMETHEUS"]["query"] == "prometheus"
    panels = [p for p in board["panels"] if p["type"] != "row"]
    assert len({p["id"] for p in board["panels"]}) == len(board["panels"])
    for panel in panels:
        assert panel["datasource"] == {"type": "prometheus", "uid": "${DS_PROMETHEUS}"}
        assert all(t["datasource"] == panel["datasource"] for t in panel["targets"])


def test_panels_cover_the_questions_operators_ask() -> None:
    titles = " | ".join(p["title"] for p in dashboard()["panels"]).lower()
    for topic in (
        "tool-call rate", "failure ratio", "stream problems", "provider errors", "retries",
        "orphaned and duplicate", "forced tool_choice", "turnaround", "operation latency",
        "tokens", "worst tools", "retries per operation", "buffered streams", "unanswered",
    ):  # fmt: skip
        assert topic in titles, topic
    links = [
        link["url"]
        for panel in dashboard()["panels"]
        for link in panel.get("fieldConfig", {}).get("defaults", {}).get("links", [])
    ]
    assert any("/search?service=" in url for url in links)  # Jaeger
    assert any("traceql" in url for url in links)  # Tempo


def test_error_links_search_tooltaps_error_type() -> None:
    """The metrics' error classes are on every inference span as ``tooltap.error.type``."""
    (panel,) = [p for p in dashboard()["panels"] if p["title"] == "Provider errors by class"]
    urls = [unquote(link["url"]) for link in panel["fieldConfig"]["defaults"]["links"]]
    assert len(urls) == 2
    assert all("tooltap.error.type" in url for url in urls)
    assert not any('"error.type"' in url or "span.error.type" in url for url in urls)


@pytest.mark.slow
def test_dashboard_type_checks_against_grafana_schema() -> None:
    result = tsc((DASHBOARDS / "tooltap.json").read_text(), "shipped")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("good", "bad", "error"),
    [
        ('"gridPos"', '"gridPoss"', "gridPoss"),  # a panel key
        ('"legendFormat"', '"legendFromat"', "legendFromat"),  # a Prometheus query key
        ('"drawStyle": "line"', '"drawStyle": "lines"', '"lines"'),  # an enum value
        ('"reduceOptions"', '"reduceOption"', "reduceOption"),  # stat panel options
    ],
)
def test_schema_check_catches_a_misspelled_key(good: str, bad: str, error: str) -> None:
    text = (DASHBOARDS / "tooltap.json").read_text()
    assert good in text
    result = tsc(text.replace(good, bad, 1), "negative")
    assert result.returncode != 0
    assert error in result.stdout


def test_dashboard_json_is_provisionable() -> None:
    """Grafana's file provisioning reads plain JSON with a uid and no numeric id."""
    board = dashboard()
    assert board["uid"] == "tooltap-tool-calls"
    assert "id" not in board
    assert (ROOT / "examples/compose/grafana/dashboards.yml").exists()
