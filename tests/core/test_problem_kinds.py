"""The problem-kind table: every kind has its facts, and the layers' sets are read off it."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import yaml

from tooltap._core.errors import classify_problem
from tooltap._core.model import PROBLEM_KINDS as MODEL_KINDS
from tooltap._core.model import Problem
from tooltap._core.problems import (
    BROKEN_CALL_KINDS,
    CALL_OUTCOME_KINDS,
    ERROR_KINDS,
    PROBLEM_KINDS,
    PROBLEMS,
    UNPARSED_KINDS,
    ProblemKind,
)

ROOT = Path(__file__).resolve().parents[2]


def test_every_kind_has_its_facts_in_order() -> None:
    assert tuple(PROBLEMS) == PROBLEM_KINDS == get_args(ProblemKind) == MODEL_KINDS
    assert all(facts.meaning for facts in PROBLEMS.values())


def test_the_layers_sets_are_the_tables() -> None:
    assert {"invalid_json", "unexpected_shape", "oversized_arguments"} == BROKEN_CALL_KINDS
    assert BROKEN_CALL_KINDS | {"truncated_json"} == UNPARSED_KINDS
    assert set(CALL_OUTCOME_KINDS) == {"undeclared_tool", "invalid_tool_name", "schema_violation"}
    assert all(PROBLEMS[k].counted == "tool_calls" for k in CALL_OUTCOME_KINDS)


def test_error_kinds_are_the_ones_that_fail_a_response() -> None:
    failing = {k for k in PROBLEM_KINDS if classify_problem(Problem(k)) is not None}
    assert failing == ERROR_KINDS == {"truncated_stream", "error_event"}


def test_each_alert_named_exists_and_watches_its_kind() -> None:
    rules = yaml.safe_load((ROOT / "dashboards" / "alerts.yml").read_text())
    alerts = {r["alert"]: r["expr"] for g in rules["groups"] for r in g["rules"] if "alert" in r}
    for kind, facts in PROBLEMS.items():
        if facts.alert is not None:
            assert facts.alert in alerts, (kind, facts.alert)
            assert kind in alerts[facts.alert] or facts.counted == "tool_calls", kind


def test_the_core_guide_lists_every_kind() -> None:
    guide = (ROOT / "docs" / "CORE.md").read_text()
    assert [k for k in PROBLEM_KINDS if f"`{k}`" not in guide] == []
