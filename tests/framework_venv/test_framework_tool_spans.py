"""strands-agents and google-adk with global providers: one ``execute_tool`` span per call id.

These frameworks pin OpenTelemetry and google-genai majors the project's own venv cannot
hold, so ``scripts/test-framework-venvs`` runs this folder in ``.venv-frameworks`` (the
main run leaves it out: ``tests/conftest.py``). Each case is one agent run in a process
of its own (``apps.py``: the global providers can be set once), the real framework
against the loopback simulator: strands through its OpenAI model, ADK through Gemini
(google-genai at the simulator's base URL).
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from typing import Any

import pytest

FRAMEWORKS = {"strands": "strands.telemetry.tracer", "adk": "gcp.vertex.agent"}
ANSWER = "You are 170 cm tall and weigh 70 kg."


@cache
def run(framework: str, traced: bool, fault: str = "none") -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "tests.framework_venv.apps", framework,
         "on" if traced else "off", fault],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _only_span(result: dict[str, Any], call_id: str) -> dict[str, Any]:
    spans = result["tool_spans"].get(call_id, [])
    assert len(spans) == 1, spans
    only: dict[str, Any] = spans[0]
    return only


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_the_frameworks_span_is_adopted(framework: str) -> None:
    result = run(framework, traced=True)
    assert result["answer"].strip() == ANSWER
    assert len(result["received"]) == 2
    for call_id in result["received"]:
        span = _only_span(result, call_id)
        assert span["scope"] == FRAMEWORKS[framework]
        assert span["tooltap.tool_span"] == "adopted"
        assert span["tooltap.outcome"] == "ok"


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_tracing_off_gets_tooltaps_span(framework: str) -> None:
    result = run(framework, traced=False)
    assert result["answer"].strip() == ANSWER
    assert len(result["received"]) == 2
    for call_id in result["received"]:
        span = _only_span(result, call_id)
        assert span["scope"] == "tooltap"
        assert span["tooltap.result"] == "ok"


@pytest.mark.parametrize("traced", [True, False], ids=["traced", "untraced"])
@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_invalid_arguments_stay_visible(framework: str, traced: bool) -> None:
    """strands runs the call (its validation fails) in its adopted span; google-genai
    refuses the Gemini response (arguments must be an object), so ADK never runs it and
    the span is tooltap's, ``not_delivered``."""
    result = run(framework, traced, "invalid_json_args")
    ((kind, call_id),) = result["problems"]
    assert kind == "invalid_json"
    span = _only_span(result, call_id)
    assert span["tooltap.outcome"] == "invalid_json"
    adopted = framework == "strands" and traced
    assert span["scope"] == (FRAMEWORKS[framework] if adopted else "tooltap")
    if framework == "adk":
        assert result["answer"] == "raised ValidationError"
        assert span["tooltap.result"] == "not_delivered"


@pytest.mark.parametrize("fault", ["none", "invalid_json_args"])
@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_metrics_are_the_same_traced_or_not(framework: str, fault: str) -> None:
    traced, untraced = (
        run(framework, True, fault)["metrics"],
        run(framework, False, fault)["metrics"],
    )
    assert traced == untraced
    assert any(name == "tooltap.tool_calls" for (name, _), _ in traced)
