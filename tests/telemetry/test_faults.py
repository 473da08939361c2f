"""Simulator faults over raw clients: each shows up as the right error class or problem."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from opentelemetry.trace import StatusCode

import tooltap
from tests.telemetry.support import Recorder, attrs, first_body, post, second_body, url
from tooltap.simulator import Fault, Simulator


def _run(
    sim: Simulator, dialect: str, fault: Fault | None, *, stream: bool, **extra: Any
) -> tuple[int, bytes]:
    if fault is not None:
        sim.inject(fault, dialect=dialect)
    return post(
        "httpx2", url(sim, dialect, stream), first_body(dialect, stream, **extra), stream=stream
    )


def _span(rec: Recorder) -> dict[str, Any]:
    (span,) = rec.inference()
    return attrs(span)


@pytest.mark.parametrize(
    ("dialect", "fault", "status", "error_type", "retryable"),
    [
        ("openai.chat", Fault("rate_limit", retry_after=0.25), 429, "rate_limited", True),
        ("anthropic.messages", Fault("insufficient_balance"), 429, "insufficient_balance", False),
        ("google.genai", Fault("server_error", status=500), 500, "server_error", True),
        ("anthropic.messages", Fault("overloaded"), 529, "overloaded", True),
        ("openai.responses", Fault("insufficient_balance"), 429, "insufficient_balance", False),
    ],
)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_error_status(rec: Recorder, sim: Simulator, dialect: str, fault: Fault, status: int,
                      error_type: str, retryable: bool, stream: bool) -> None:  # fmt: skip
    got, _ = _run(sim, dialect, fault, stream=stream)
    assert got == status
    (span,) = rec.inference()
    assert attrs(span)["error.type"] == error_type
    assert span.status.status_code is StatusCode.ERROR
    (event,) = [e for e in span.events if e.name == "gen_ai.client.attempt.failed"]
    ev = dict(event.attributes or {})
    assert ev["http.response.status_code"] == status and ev["tooltap.retryable"] is retryable
    if fault.kind == "rate_limit":
        assert ev["tooltap.retry_after"] == pytest.approx(0.25)
    assert rec.total("tooltap.provider.errors", error__type=error_type) == 1
    assert rec.total("gen_ai.client.operation.duration", error__type=error_type) == 1


@pytest.mark.parametrize(
    ("dialect", "error_type"),
    [("openai.chat", "server_error"), ("anthropic.messages", "overloaded"),
     ("google.genai", "server_error"), ("openai.responses", "server_error")],
)  # fmt: skip
def test_error_event_mid_stream(
    rec: Recorder, sim: Simulator, dialect: str, error_type: str
) -> None:
    status, _ = _run(sim, dialect, Fault("error_event"), stream=True)
    assert status == 200
    assert _span(rec)["error.type"] == error_type
    assert _span(rec)["gen_ai.response.finish_reasons"] == ("error",)  # not the provider's last
    kinds = [
        dict(e.attributes or {}).get("tooltap.problem.kind") for e in rec.inference()[0].events
    ]
    assert "error_event" in kinds
    assert rec.total("tooltap.stream.problems", tooltap__problem__kind="error_event") == 1
    assert any(e.problem.kind == "error_event" for e in rec.of(tooltap.ToolCallProblem))


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_invalid_json_arguments(rec: Recorder, sim: Simulator, stream: bool) -> None:
    _run(sim, "openai.chat", Fault("invalid_json_args"), stream=stream)
    assert rec.total("tooltap.tool_calls", tooltap__outcome="invalid_json") == 1
    assert rec.total("tooltap.tool_calls", tooltap__outcome="ok") == 1
    assert len(rec.of(tooltap.ToolCallReceived)) == 1  # the broken call never becomes a call


def test_truncated_arguments(rec: Recorder, sim: Simulator) -> None:
    _run(sim, "openai.responses", Fault("truncate_args"), stream=True)
    assert _span(rec)["error.type"] == "truncated_stream"
    assert rec.total("tooltap.tool_calls", tooltap__outcome="truncated_json") == 1


def test_google_calls_without_ids_are_matched(rec: Recorder, sim: Simulator) -> None:
    dialect = "google.genai"
    first = first_body(dialect, True)
    sim.inject(Fault("no_ids"), dialect=dialect)
    _, raw = post("httpx2", url(sim, dialect, True), first, stream=True)
    calls = list(tooltap.core.parse_response(raw, dialect).calls)
    assert [c.call_id for c in calls] == [None, None]
    status, _ = post(
        "httpx2", url(sim, dialect, False), second_body(dialect, first, calls), stream=False
    )
    assert status == 200
    tools = rec.tools()
    assert sorted(attrs(t)["tooltap.result"] for t in tools) == ["ok", "ok"]
    assert {link.context.span_id for link in rec.inference()[1].links} == {
        t.context.span_id for t in tools
    }


def test_forced_tool_choice_ignored(rec: Recorder, sim: Simulator) -> None:
    choice = {"type": "tool", "name": "lookup_demo_value"}
    _run(sim, "anthropic.messages", Fault("ignore_tool_choice"), stream=True, tool_choice=choice)
    _run(sim, "anthropic.messages", None, stream=True, tool_choice=choice)
    assert rec.total("tooltap.forced_tool_choice", tooltap__honored=False) == 1
    assert rec.total("tooltap.forced_tool_choice", tooltap__honored=True) == 1


def test_stall_until_client_timeout(rec: Recorder, sim: Simulator) -> None:
    sim.inject(Fault("stall", seconds=2), dialect="openai.chat")
    with httpx2.Client(timeout=0.3) as client, pytest.raises(httpx2.ReadTimeout):
        client.post(url(sim, "openai.chat", True), json=first_body("openai.chat", True))
    assert _span(rec)["error.type"] == "timeout"


def test_reset_before_response(rec: Recorder, sim: Simulator) -> None:
    sim.inject(Fault("reset"), dialect="anthropic.messages")
    with httpx2.Client(timeout=5) as client, pytest.raises(httpx2.TransportError):
        client.post(
            url(sim, "anthropic.messages", False), json=first_body("anthropic.messages", False)
        )
    assert _span(rec)["error.type"] == "connection_error"


def test_one_byte_chunks_give_the_same_calls(rec: Recorder, sim: Simulator) -> None:
    _, raw = _run(sim, "anthropic.messages", Fault("chunk_size", size=1), stream=True)
    assert [e.call for e in rec.of(tooltap.ToolCallReceived)] == list(
        tooltap.core.parse_response(raw, "anthropic.messages").calls
    )
    assert len(rec.of(tooltap.ToolCallReceived)) == 2


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_limits_option_reaches_the_parser(recorder: Recorder, sim: Simulator, stream: bool) -> None:
    recorder.instrument(limits=tooltap.core.Limits(max_argument_bytes=8))
    _run(sim, "anthropic.messages", None, stream=stream)
    assert recorder.total("tooltap.tool_calls", tooltap__outcome="oversized_arguments") == 2
    assert recorder.of(tooltap.ToolCallReceived) == []
