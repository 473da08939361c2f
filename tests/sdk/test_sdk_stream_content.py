"""Under content capture, a streamed answer's text is recorded like a whole body's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

import tooltap
from tests.recorder import Recorder
from tests.sdk.drivers import DRIVERS
from tooltap.simulator import Simulator

STREAMING = ["openai.chat", "openai.responses", "anthropic", "google"]


@pytest.fixture
def capturing(rec: Recorder) -> Iterator[Recorder]:
    """``rec`` re-instrumented with content on spans."""
    tooltap.uninstrument()
    tooltap.instrument(
        tracer_provider=rec.tracer_provider,
        meter_provider=rec.meter_provider,
        capture_content="SPAN_ONLY",
    )
    yield rec


def _output(span: Any) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = json.loads(span.attributes["gen_ai.output.messages"])
    return messages


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("name", STREAMING)
async def test_final_text_is_recorded(
    capturing: Recorder, sim: Simulator, name: str, stream: bool
) -> None:
    driver = DRIVERS[name]
    client = driver.client(sim, sync=True)
    first = await driver.turn1(client, stream)
    text = await driver.turn2(client, stream, first)
    assert text
    calls_span, answer_span = sorted(capturing.inference(), key=lambda s: s.start_time)
    (answer,) = _output(answer_span)
    assert [p for p in answer["parts"] if p["type"] == "text"] == [
        {"type": "text", "content": text}
    ]
    (calls,) = _output(calls_span)
    assert {p["type"] for p in calls["parts"]} >= {"tool_call"}


@pytest.mark.parametrize("name", STREAMING)
async def test_tool_definitions_are_recorded(
    capturing: Recorder, sim: Simulator, name: str
) -> None:
    driver = DRIVERS[name]
    await driver.raw(driver.client(sim, sync=True), True)
    (span,) = capturing.inference()
    definitions = json.loads(span.attributes["gen_ai.tool.definitions"])
    assert [(d["type"], d["name"]) for d in definitions] == [("function", "lookup_demo_value")]
    assert definitions[0]["parameters"]["required"] == ["key"]


async def test_no_tool_definitions_without_capture(rec: Recorder, sim: Simulator) -> None:
    driver = DRIVERS["openai.chat"]
    await driver.raw(driver.client(sim, sync=True), True)
    (span,) = rec.inference()
    assert "gen_ai.tool.definitions" not in (span.attributes or {})
    assert "gen_ai.output.messages" not in (span.attributes or {})
