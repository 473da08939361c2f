"""The shipped alert rules: promtool check and unit tests, and a rules file Prometheus loads."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.ops.support import DASHBOARDS, GRAFANA_VARS, promtool_run

ALERTS = 8


def rules() -> list[dict[str, Any]]:
    loaded = yaml.safe_load((DASHBOARDS / "alerts.yml").read_text())
    return [r for g in loaded["groups"] for r in g["rules"]]


def test_promtool_check_rules(promtool: Path) -> None:
    result = promtool_run(promtool, "check", "rules", "alerts.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {ALERTS} rules found" in result.stdout


def test_promtool_unit_tests_pass(promtool: Path) -> None:
    result = promtool_run(promtool, "test", "rules", "alerts_test.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_every_alert_has_a_firing_and_a_quiet_unit_test() -> None:
    names = {r["alert"] for r in rules()}
    tests = yaml.safe_load((DASHBOARDS / "alerts_test.yml").read_text())["tests"]
    cases = [case for test in tests for case in test["alert_rule_test"]]
    firing = {c["alertname"] for c in cases if c["exp_alerts"]}
    quiet = {c["alertname"] for c in cases if not c["exp_alerts"]}
    assert len(names) == ALERTS
    assert firing == names
    assert quiet == names


@pytest.mark.parametrize(
    ("good", "bad", "alert"),
    [
        # the failure-ratio threshold raised
        (") > 0.10\n", ") > 0.30\n", "TooltapToolCallFailureRatioHigh"),
        # another instrumentation's histograms counted with tooltap's
        ('{otel_scope_name="tooltap"}', "", "TooltapProviderErrorRatioHigh"),
        # retries no retry can fix counted in the storm
        (
            'error_type!~"insufficient_balance|auth_error|permission_denied|not_found|bad_request|'
            'content_filter"',
            'error_type!=""',
            "TooltapRetryStorm",
        ),
        # truncated arguments looked for on the stream-problem counter
        (
            'tooltap_tool_calls_total{tooltap_outcome="truncated_json"}',
            'tooltap_stream_problems_total{tooltap_problem_kind="truncated_json"}',
            "TooltapTruncatedStreams",
        ),
        # a first appearance not counted (increase() alone)
        (
            'tooltap_stream_problems_total{tooltap_problem_kind="stream_buffered"}\n'
            "                unless",
            'tooltap_stream_problems_total{tooltap_problem_kind="none"}\n                unless',
            "TooltapBufferedStreams",
        ),
    ],
)
def test_a_broken_rule_fails_the_unit_tests(
    promtool: Path, tmp_path: Path, good: str, bad: str, alert: str
) -> None:
    """The unit tests can fail: each of these regressions makes them fail for its alert."""
    text = (DASHBOARDS / "alerts.yml").read_text()
    assert good in text
    (tmp_path / "alerts.yml").write_text(text.replace(good, bad))
    (tmp_path / "alerts_test.yml").write_text((DASHBOARDS / "alerts_test.yml").read_text())
    result = promtool_run(promtool, "test", "rules", "alerts_test.yml", cwd=tmp_path)
    assert result.returncode != 0
    assert f"alertname: {alert}," in result.stdout + result.stderr


def test_balance_page_without_its_success_check_resolves_too_early(
    promtool: Path, tmp_path: Path
) -> None:
    """Only 'a refusal in the last 5 minutes': the page resolves while the account is empty."""
    text = (DASHBOARDS / "alerts.yml").read_text()
    start = text.index("alert: TooltapInsufficientBalance")
    cut, end = text.index("          or\n          (\n", start), text.index("        for:", start)
    (tmp_path / "alerts.yml").write_text(text[:cut] + text[end:])
    (tmp_path / "alerts_test.yml").write_text((DASHBOARDS / "alerts_test.yml").read_text())
    result = promtool_run(promtool, "test", "rules", "alerts_test.yml", cwd=tmp_path)
    assert result.returncode != 0
    assert "alertname: TooltapInsufficientBalance, time: 24m" in result.stdout + result.stderr


def test_insufficient_balance_pages_at_once() -> None:
    rule = next(r for r in rules() if r["alert"] == "TooltapInsufficientBalance")
    assert rule["for"] == "0m"
    assert rule["labels"]["severity"] == "critical"


def _slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_alert_links_to_its_runbook_section() -> None:
    readme = (DASHBOARDS / "README.md").read_text()
    runbooks = readme[readme.index("\n## Runbooks\n") :]
    sections = dict(re.findall(r"\n### (\S+)\n(.*?)(?=\n### |\n## |\Z)", runbooks, re.S))
    for rule in rules():
        url = rule["annotations"]["runbook_url"]
        assert url.endswith("dashboards/README.md#" + _slug(rule["alert"])), url
        body = sections[rule["alert"]]
        for part in ("**Meaning**", "**First checks**", "**What to do**"):
            assert part in body, (rule["alert"], part)


def _stat_panels() -> list[tuple[str, str]]:
    board = json.loads((DASHBOARDS / "tooltap.json").read_text())
    found = []
    for panel in board["panels"]:
        if panel["type"] == "stat":
            expr = panel["targets"][0]["expr"]
            for name, value in GRAFANA_VARS.items():
                expr = expr.replace(name, value)
            found.append((panel["title"], expr))
    return found


@pytest.mark.parametrize(("title", "expr"), _stat_panels())
def test_range_totals_count_a_series_born_inside_the_range(
    promtool: Path, tmp_path: Path, title: str, expr: str
) -> None:
    """A short-lived process's counter appears once, at 1: the stat panels count it.

    Three series over a 5-minute range: one born at 1 inside it, one unchanged since
    before it, one growing by 1 a minute (5 in the range): 6, where increase() says 5.
    """
    metric = re.search(r"\b(tooltap_\w+_total)\{", expr)
    assert metric is not None, expr
    labels = 'job="tooltap-agent",gen_ai_provider_name="openai",gen_ai_tool_name="t",'
    labels += 'tooltap_outcome="invalid_json",tooltap_component="tap_stream"'
    series = [("new", "_x20 1x10"), ("old", "4x30"), ("growing", "0+1x30")]
    plain = re.sub(r"\(\((\w+\{[^}]*\}) unless \1 offset 5m\) or (increase\(\1\[5m\]\))\)",
                   r"\2", expr)  # fmt: skip
    assert plain != expr
    case = {
        "rule_files": [],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    {"series": f'{metric.group(1)}{{{labels},s="{name}"}}', "values": values}
                    for name, values in series
                ],
                "promql_expr_test": [
                    {"expr": e, "eval_time": "22m", "exp_samples": [{"labels": "{}", "value": v}]}
                    for e, v in ((expr, 6), (plain, 5))
                ],
            }
        ],
    }  # fmt: skip
    (tmp_path / "totals_test.yml").write_text(yaml.safe_dump(case))
    result = promtool_run(promtool, "test", "rules", "totals_test.yml", cwd=tmp_path)
    assert result.returncode == 0, title + "\n" + result.stdout + result.stderr
