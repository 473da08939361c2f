"""The full attribute key set of every point of every tooltap metric, after fault-heavy
traffic through the real SDKs: each metric always carries the same keys."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import types

import tooltap
from tests.ops import traffic
from tests.reliability.support import Canned, ReplayServer
from tests.telemetry.support import Recorder
from tooltap._telemetry import semconv as sc
from tooltap.simulator import Simulator

CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"
OPERATION = {sc.GEN_AI_OPERATION_NAME, sc.GEN_AI_PROVIDER_NAME, sc.GEN_AI_REQUEST_MODEL,
             sc.SERVER_ADDRESS, sc.SERVER_PORT}  # fmt: skip
TOOL = {sc.GEN_AI_OPERATION_NAME, sc.GEN_AI_PROVIDER_NAME, sc.GEN_AI_TOOL_NAME}
#: Metric -> the key sets its points may have (an operation's error.type only if it failed).
EXPECTED: dict[str, list[set[str]]] = {
    sc.OPERATION_DURATION: [OPERATION, OPERATION | {sc.ERROR_TYPE}],
    sc.TOKEN_USAGE: [OPERATION | {sc.GEN_AI_TOKEN_TYPE}],
    sc.TIME_TO_FIRST_CHUNK: [OPERATION],
    sc.RETRIES: [OPERATION | {sc.ERROR_TYPE}],
    sc.PROVIDER_ERRORS: [OPERATION | {sc.ERROR_TYPE, sc.TOOLTAP_RETRYABLE}],
    sc.STREAM_PROBLEMS: [OPERATION | {sc.TOOLTAP_PROBLEM_KIND}],
    sc.FORCED_TOOL_CHOICE: [OPERATION | {sc.TOOLTAP_HONORED}],
    sc.TOOL_CALLS: [TOOL | {sc.TOOLTAP_OUTCOME}],
    sc.TOOL_RESULTS: [TOOL | {sc.TOOLTAP_RESULT}],
    sc.TOOL_CALL_DURATION: [TOOL | {sc.TOOLTAP_RESULT}],
}
#: Not reached by the SDK traffic: the harness's handler runs, tooltap's own faults.
UNREACHED = {sc.EXECUTE_TOOL_DURATION, sc.INTERNAL_ERRORS}


@pytest.fixture(scope="module")
def points() -> Iterator[dict[str, list[dict[str, Any]]]]:
    recorder = Recorder()
    recorder.instrument(stream_buffered_wait=traffic.BUFFERED_WAIT)
    try:
        with Simulator() as sim:
            summary = traffic.run("faults", sim, 0)
        assert summary["failed"] < summary["steps"]
        _not_delivered()
        tooltap.flush()
        found: dict[str, list[dict[str, Any]]] = {}
        data = recorder.reader.get_metrics_data()
        for rm in data.resource_metrics if data else ():
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    found.setdefault(metric.name, []).extend(
                        dict(p.attributes) for p in metric.data.data_points
                    )
        yield found
    finally:
        tooltap.uninstrument()


def _not_delivered() -> None:
    """A Google body with a BOM: tooltap parses its calls, the SDK raises on it."""
    body = b"\xef\xbb\xbf" + (CORPUS / "google" / "json_parallel_3calls.body").read_bytes()
    replay = ReplayServer().start()
    try:
        replay.canned = Canned(200, [("content-type", "application/json")], [body])
        client = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=replay.url))
        no_afc = types.AutomaticFunctionCallingConfig(disable=True)
        config = types.GenerateContentConfig(automatic_function_calling=no_afc)
        with pytest.raises(ValueError, match="BOM"):
            client.models.generate_content(model="gemini-2.0-flash", contents="x", config=config)
    finally:
        replay.stop()


def test_every_metric_is_covered(points: dict[str, list[dict[str, Any]]]) -> None:
    assert set(sc.METRICS) == set(EXPECTED) | UNREACHED
    assert set(EXPECTED) <= set(points), set(EXPECTED) - set(points)


@pytest.mark.parametrize("metric", sorted(EXPECTED))
def test_every_point_has_the_full_key_set(
    metric: str, points: dict[str, list[dict[str, Any]]]
) -> None:
    shapes = [set(p) for p in points[metric]]
    assert shapes and all(keys in EXPECTED[metric] for keys in shapes), shapes


def test_not_delivered_calls_carry_the_operation_name(
    points: dict[str, list[dict[str, Any]]],
) -> None:
    undelivered = [p for p in points[sc.TOOL_CALLS]
                   if p[sc.TOOLTAP_OUTCOME] == sc.RESULT_NOT_DELIVERED]  # fmt: skip
    assert undelivered
    assert all(p[sc.GEN_AI_OPERATION_NAME] == sc.OPERATION_EXECUTE_TOOL for p in undelivered)
