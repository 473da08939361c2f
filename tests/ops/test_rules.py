"""The shipped alert rules: promtool check and unit tests, and a rules file Prometheus loads."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.ops.support import DASHBOARDS, promtool_run


def test_promtool_check_rules(promtool: Path) -> None:
    result = promtool_run(promtool, "check", "rules", "alerts.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 7 rules found" in result.stdout


def test_promtool_unit_tests_pass(promtool: Path) -> None:
    result = promtool_run(promtool, "test", "rules", "alerts_test.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_every_alert_has_a_firing_and_a_quiet_unit_test() -> None:
    rules = yaml.safe_load((DASHBOARDS / "alerts.yml").read_text())
    names = {r["alert"] for g in rules["groups"] for r in g["rules"]}
    tests = yaml.safe_load((DASHBOARDS / "alerts_test.yml").read_text())["tests"]
    cases = [case for test in tests for case in test["alert_rule_test"]]
    firing = {c["alertname"] for c in cases if c["exp_alerts"]}
    quiet = {c["alertname"] for c in cases if not c["exp_alerts"]}
    assert firing == names
    assert quiet == names


def test_a_broken_threshold_fails_the_unit_tests(promtool: Path, tmp_path: Path) -> None:
    """The unit tests can fail: raise the failure-ratio threshold and they do."""
    text = (DASHBOARDS / "alerts.yml").read_text()
    assert ") > 0.10\n" in text
    (tmp_path / "alerts.yml").write_text(text.replace(") > 0.10\n", ") > 0.30\n"))
    (tmp_path / "alerts_test.yml").write_text((DASHBOARDS / "alerts_test.yml").read_text())
    result = promtool_run(promtool, "test", "rules", "alerts_test.yml", cwd=tmp_path)
    assert result.returncode != 0
    assert "TooltapToolCallFailureRatioHigh" in result.stdout + result.stderr


def test_insufficient_balance_pages_at_once() -> None:
    rules = yaml.safe_load((DASHBOARDS / "alerts.yml").read_text())
    rule = next(
        r for g in rules["groups"] for r in g["rules"] if r["alert"] == "TooltapInsufficientBalance"
    )
    assert rule["for"] == "0m"
    assert rule["labels"]["severity"] == "critical"
