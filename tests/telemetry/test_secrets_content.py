"""No credential is ever recorded; content only under the capture opt-in."""

from __future__ import annotations

import json
from typing import Any

import pytest

import tooltap
from tests.telemetry.support import DIALECTS, Recorder, attrs, first_body, post, second_body, url
from tooltap._telemetry.config import Config, capture_mode_from
from tooltap._telemetry.execution import tool_execution
from tooltap.simulator import Simulator

CANARY = "sk-CANARY-7f3a9c"
CONTENT_KEYS = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments",
                "gen_ai.tool.call.result")  # fmt: skip


def _everything(rec: Recorder) -> str:
    """Every attribute value tooltap emitted (spans, events, links, metrics, logs), as text."""
    parts: list[Any] = []
    for span in rec.spans():
        parts += [span.name, attrs(span)]
        parts += [dict(e.attributes or {}) for e in span.events]
        parts += [dict(link.attributes or {}) for link in span.links]
    for name in (
        "tooltap.tool_calls",
        "gen_ai.client.operation.duration",
        "tooltap.provider.errors",
    ):
        parts += [a for a, _ in rec.points(name)]
    parts += [dict(r.log_record.attributes or {}) for r in rec.logs.get_finished_logs()]
    return json.dumps(parts, default=str)


def _with_query(target: str, query: str) -> str:
    return target + ("&" if "?" in target else "?") + query if query else target


def _conversation(sim: Simulator, dialect: str, headers: dict[str, str], query: str = "") -> None:
    """Turn 1 streamed, the harness runs both calls, turn 2 whole."""
    first = first_body(dialect, True)
    target = _with_query(url(sim, dialect, True), query)
    _, raw = post("httpx2", target, first, stream=True, headers=headers)
    calls = list(tooltap.core.parse_response(raw, dialect).calls)
    for call in calls:
        with tool_execution(call) as execution:
            execution.record_result({"value": "170 cm"}, is_error=False)
    second = {
        k: v for k, v in second_body(dialect, first, calls).items() if not k.startswith("stream")
    }
    target = _with_query(url(sim, dialect, False), query)
    post("httpx2", target, second, stream=False, headers=headers)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_no_credential_in_any_mode(recorder: Recorder, sim: Simulator, dialect: str) -> None:
    recorder.instrument(capture_content="SPAN_AND_EVENT")  # the most verbose mode
    headers = {"Authorization": f"Bearer {CANARY}", "x-api-key": CANARY, "x-goog-api-key": CANARY}
    _conversation(sim, dialect, headers, f"key={CANARY}" if dialect == "google.genai" else "")
    emitted = _everything(recorder)
    assert "lookup_demo_value" in emitted and "170 cm" in emitted  # content was captured...
    assert CANARY not in emitted  # ...credentials never
    assert "url.full" not in emitted
    assert all(attrs(s)["tooltap.request.conflicting_auth"] is True for s in recorder.inference())


def test_single_auth_header_is_not_flagged(rec: Recorder, sim: Simulator) -> None:
    post("httpx2", url(sim, "openai.chat", False), first_body("openai.chat", False), stream=False,
         headers={"Authorization": f"Bearer {CANARY}"})  # fmt: skip
    (span,) = rec.inference()
    assert "tooltap.request.conflicting_auth" not in attrs(span)


def test_no_content_by_default(rec: Recorder, sim: Simulator) -> None:
    _conversation(sim, "anthropic.messages", {})
    emitted = _everything(rec)
    assert not any(key in emitted for key in CONTENT_KEYS)
    assert "170 cm" not in emitted and "height" not in emitted
    assert rec.logs.get_finished_logs() == ()


def test_span_only(recorder: Recorder, sim: Simulator) -> None:
    recorder.instrument(capture_content="SPAN_ONLY")
    _conversation(sim, "openai.responses", {})
    turn1, turn2 = recorder.inference()
    out = json.loads(attrs(turn1)["gen_ai.output.messages"])
    assert out[0]["role"] == "assistant" and out[0]["finish_reason"] == "tool_call"
    assert [p["arguments"] for p in out[0]["parts"] if p["type"] == "tool_call"] == [
        {"key": "height"}, {"key": "weight"}]  # fmt: skip
    inputs = json.loads(attrs(turn2)["gen_ai.input.messages"])
    responses = [p for m in inputs for p in m["parts"] if p["type"] == "tool_call_response"]
    assert len(responses) == 2 and all(p["id"].startswith("call_") for p in responses)
    text = json.loads(attrs(turn2)["gen_ai.output.messages"])[0]["parts"][0]
    assert text["type"] == "text" and "170" in text["content"]
    for span in recorder.tools():
        assert json.loads(attrs(span)["gen_ai.tool.call.arguments"])["key"] in ("height", "weight")
        assert json.loads(attrs(span)["gen_ai.tool.call.result"]) == {"value": "170 cm"}
    assert recorder.logs.get_finished_logs() == ()


def test_event_only(recorder: Recorder, sim: Simulator) -> None:
    recorder.instrument(capture_content="EVENT_ONLY")
    _conversation(sim, "google.genai", {})
    assert not any(key in _everything_spans(recorder) for key in CONTENT_KEYS)
    logs = recorder.logs.get_finished_logs()
    assert {r.log_record.event_name for r in logs} == {"gen_ai.client.inference.operation.details"}
    keys = {k for r in logs for k in (r.log_record.attributes or {})}
    assert {"gen_ai.input.messages", "gen_ai.output.messages"} <= keys
    span_ids = {s.context.span_id for s in recorder.inference()}
    assert {r.log_record.span_id for r in logs} <= span_ids


def _everything_spans(rec: Recorder) -> str:
    return json.dumps([attrs(s) for s in rec.spans()], default=str)


def test_env_opt_in(recorder: Recorder, sim: Simulator, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_only")
    recorder.instrument()
    post("httpx2", url(sim, "openai.chat", False), first_body("openai.chat", False), stream=False)
    (span,) = recorder.inference()
    assert "gen_ai.input.messages" in attrs(span)


@pytest.mark.parametrize(
    ("value", "mode"),
    [
        (None, "NO_CONTENT"),
        ("SPAN_AND_EVENT", "SPAN_AND_EVENT"),
        ("event_only", "EVENT_ONLY"),
        ("true", "SPAN_ONLY"),
        ("false", "NO_CONTENT"),
        ("bogus", "NO_CONTENT"),
        (True, "SPAN_ONLY"),
    ],
)
def test_capture_mode_parsing(value: object, mode: str) -> None:
    assert capture_mode_from(value) == mode
    env = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": str(value)}
    assert Config.from_options({}, env).capture_content == capture_mode_from(str(value))
