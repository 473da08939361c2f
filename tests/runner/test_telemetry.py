"""With tooltap instrumented, each call id has ONE execute_tool span carrying the handler run."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from opentelemetry.trace import StatusCode

import tooltap
from tests.recorder import Recorder
from tests.runner.loops import LOOPS
from tooltap._telemetry.semconv import EVENT_TOOL_IN_DOUBT as EVENT_IN_DOUBT
from tooltap._telemetry.semconv import EVENT_TOOL_REPLAYED as EVENT_REPLAYED
from tooltap._telemetry.semconv import EVENT_TOOL_RETRY as EVENT_RETRY
from tooltap._telemetry.semconv import TOOLTAP_IN_DOUBT_REASON as IN_DOUBT_REASON
from tooltap._telemetry.semconv import TOOLTAP_TOOL_ATTEMPTS as ATTEMPTS
from tooltap.harness import RetryPolicy, ToolRegistry
from tooltap.simulator import Simulator

HANDLER_SECONDS = 0.05


def slow_lookup(fail_first: int = 0) -> ToolRegistry:
    reg = ToolRegistry(retry=RetryPolicy(attempts=3, initial_delay=0.001))
    seen: list[str] = []

    @reg.tool(schema={"type": "object", "properties": {"key": {"type": "string"}}})
    def lookup_demo_value(key: str) -> str:
        seen.append(key)
        time.sleep(HANDLER_SECONDS)
        if seen.count(key) <= fail_first:
            raise ConnectionError("busy")
        return {"height": "170 cm", "weight": "70 kg"}[key]

    return reg


@pytest.mark.parametrize("dialect", list(LOOPS))
def test_one_span_per_call_id_with_the_handler_duration(
    rec: Recorder, sim: Simulator, dialect: str
) -> None:
    conversation = LOOPS[dialect](sim, slow_lookup(fail_first=1)).converse()
    assert conversation.final_text == "You are 170 cm tall and weigh 70 kg."
    ids = [c.call_id for c in conversation.steps[0].parsed.calls]
    found = rec.tools()
    assert sorted(s.attributes["gen_ai.tool.call.id"] for s in found) == sorted(ids)
    for span in found:
        attrs = span.attributes or {}
        assert attrs["gen_ai.tool.name"] == "lookup_demo_value"
        assert attrs["tooltap.tool.handler.duration"] >= 2 * HANDLER_SECONDS  # two attempts
        assert attrs[ATTEMPTS] == 2
        assert attrs["tooltap.tool.side_effects"] is False
        assert [e.name for e in span.events].count(EVENT_RETRY) == 1
        assert span.status.status_code is not StatusCode.ERROR
        assert "gen_ai.tool.call.result" not in attrs  # content capture is opt-in


def test_handler_failure_sets_error_type_on_the_same_span(rec: Recorder, sim: Simulator) -> None:
    reg = ToolRegistry()

    @reg.tool(schema={"type": "object", "properties": {"key": {"type": "string"}}})
    def lookup_demo_value(key: str) -> str:
        raise PermissionError("no access")

    conversation = LOOPS["openai.chat"](sim, reg).converse()
    assert [o.status for o in conversation.results[0].outcomes] == ["error", "error"]
    found = rec.tools()
    assert len(found) == 2
    for span in found:
        assert span.status.status_code is StatusCode.ERROR
        assert (span.attributes or {}).get("error.type") == "PermissionError"
        assert (span.attributes or {})[ATTEMPTS] == 3


def test_replayed_call_is_marked_on_its_span(rec: Recorder) -> None:
    saved: list[Any] = []
    reg = ToolRegistry()
    reg.add(lambda key, value: saved.append(value), name="save_measurement", side_effects=True)
    with Simulator(calls=[("save_measurement", {"key": "weight", "value": 70})]) as sim:
        loop = LOOPS["anthropic.messages"](sim, reg)
        response = loop.request()
        parsed = tooltap.core.parse_response(response, loop.dialect)
        first = reg.run_sync(parsed)
        again = reg.run_sync(parsed)  # the same response delivered twice
        loop.keep(response)
        loop.history += again.messages
        loop.request()
    assert saved == [70]
    assert again.outcomes[0].status == "replayed" and first.outcomes[0].status == "ok"
    (span,) = rec.tools()
    attrs = span.attributes or {}
    assert attrs["gen_ai.tool.call.id"] == parsed.calls[0].call_id
    assert attrs["tooltap.tool.side_effects"] is True
    assert attrs["tooltap.tool.replayed"] is True
    assert [e.name for e in span.events] == [EVENT_REPLAYED]


def test_a_side_effect_in_doubt_is_marked_on_its_span(rec: Recorder) -> None:
    started: list[int] = []
    reg = ToolRegistry(peer_wait=0.05)

    @reg.tool(side_effects=True, timeout=0.05)
    async def save_measurement(key: str, value: int) -> str:
        started.append(value)
        await asyncio.sleep(5)  # the confirmation never comes in time
        return "saved"

    with Simulator(calls=[("save_measurement", {"key": "weight", "value": 70})]) as sim:
        loop = LOOPS["anthropic.messages"](sim, reg)
        response = loop.request()
        parsed = tooltap.core.parse_response(response, loop.dialect)
        first = reg.run_sync(parsed)  # times out: in doubt
        again = reg.run_sync(parsed)  # the same response delivered twice: not run again
        loop.keep(response)
        loop.history += again.messages
        loop.request()
    assert started == [70]
    assert [first.outcomes[0].status, again.outcomes[0].status] == ["in_doubt", "in_doubt"]
    (span,) = rec.tools()
    in_doubt = [e for e in span.events if e.name == EVENT_IN_DOUBT]
    assert [(e.attributes or {})[IN_DOUBT_REASON] for e in in_doubt] == ["timeout", "pending"]
    assert span.status.status_code is StatusCode.ERROR
    assert (span.attributes or {})["error.type"] == "timeout"


def test_arguments_and_results_only_under_the_content_opt_in(
    recorder: Recorder, sim: Simulator
) -> None:
    recorder.instrument(capture_content="SPAN_ONLY")
    conversation = LOOPS["openai.responses"](sim, slow_lookup()).converse()
    outputs = {o.call_id: o.output for o in conversation.results[0].outcomes}
    found = recorder.tools()
    assert len(found) == 2
    for span in found:
        attrs = span.attributes or {}
        assert attrs["gen_ai.tool.call.result"] == outputs[attrs["gen_ai.tool.call.id"]]
        assert json.loads(str(attrs["gen_ai.tool.call.arguments"]))["key"] in ("height", "weight")


@pytest.mark.parametrize("dialect", ["openai.chat", "google.genai"])
def test_spans_the_handler_starts_nest_under_its_execute_tool_span(
    recorder: Recorder, sim: Simulator, dialect: str
) -> None:
    """Sync handlers run in threads (concurrent turn): the call's span is current there too."""
    tracer = recorder.tracer_provider.get_tracer("app")
    reg = ToolRegistry()

    @reg.tool(schema={"type": "object", "properties": {"key": {"type": "string"}}})
    def lookup_demo_value(key: str) -> str:
        with tracer.start_as_current_span(f"db.read {key}"):
            return {"height": "170 cm", "weight": "70 kg"}[key]

    recorder.instrument(capture_content="SPAN_ONLY")
    conversation = LOOPS[dialect](sim, reg).converse()
    assert conversation.final_text == "You are 170 cm tall and weigh 70 kg."
    by_key = {
        json.loads(str((s.attributes or {})["gen_ai.tool.call.arguments"]))["key"]: s
        for s in recorder.tools()
    }
    assert sorted(by_key) == ["height", "weight"]
    for key, tool_span in by_key.items():
        (child,) = [s for s in recorder.spans() if s.name == f"db.read {key}"]
        assert child.parent is not None and child.parent.span_id == tool_span.context.span_id
