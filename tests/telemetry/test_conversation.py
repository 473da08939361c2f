"""The seed conversation over raw httpx/httpx2 clients (sync and async, streamed and not) to the
simulator: one inference span per request, one ``execute_tool`` span per call id, links, metrics.
"""

from __future__ import annotations

import pytest
from opentelemetry.trace import StatusCode

import tooltap
from tests.telemetry.support import (
    DIALECTS,
    TOOL,
    Recorder,
    attrs,
    exchange,
    first_body,
    second_body,
    url,
)
from tooltap.simulator import Simulator

PROVIDER = {
    "openai.chat": "openai",
    "openai.responses": "openai",
    "anthropic.messages": "anthropic",
    "google.genai": "gcp.gen_ai",  # loopback host, /v1beta/models path -> gcp.gemini below
}


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
@pytest.mark.parametrize("dialect", DIALECTS)
async def test_seed_conversation(
    rec: Recorder, sim: Simulator, dialect: str, lib: str, is_async: bool, stream: bool
) -> None:
    """Height and weight asked in one turn; both tool spans end when results are sent."""
    target = url(sim, dialect, stream)
    first = first_body(dialect, stream)
    status, raw = await exchange(is_async, lib, target, first, stream=stream)
    assert status == 200
    calls = list(tooltap.core.parse_response(raw, dialect).calls)  # what the app assembled
    assert sorted(c.args["key"] for c in calls) == ["height", "weight"]
    assert [
        (e.call.call_id, e.call.name, e.call.args) for e in rec.of(tooltap.ToolCallReceived)
    ] == [(c.call_id, c.name, c.args) for c in calls]
    assert rec.tools() == []  # open until the results are sent

    status, raw = await exchange(
        is_async, lib, target, second_body(dialect, first, calls), stream=stream
    )
    assert status == 200, raw
    assert b"170" in raw and b"70" in raw

    turn1, turn2 = rec.inference()
    provider = "gcp.gemini" if dialect == "google.genai" else PROVIDER[dialect]
    for span in (turn1, turn2):
        a = attrs(span)
        assert a["gen_ai.provider.name"] == provider
        assert a["gen_ai.request.model"]
        assert span.name == f"{a['gen_ai.operation.name']} {a['gen_ai.request.model']}"
        assert a["server.address"] == "127.0.0.1"
        assert "error.type" not in a
        assert span.status.status_code is StatusCode.UNSET
    assert attrs(turn1)["gen_ai.response.finish_reasons"] == ("tool_call",)
    tools = rec.tools()
    assert sorted(attrs(t)["gen_ai.tool.call.id"] for t in tools) == sorted(
        str(c.call_id) for c in calls
    )
    for span in tools:
        a = attrs(span)
        assert span.name == f"execute_tool {TOOL}"
        assert span.parent is not None and span.parent.span_id == turn1.context.span_id
        assert a["tooltap.result"] == "ok" and a["tooltap.outcome"] == "ok"
        assert a["gen_ai.provider.name"] == provider
        assert span.end_time is not None and span.end_time >= turn2.start_time
    assert {link.context.span_id for link in turn2.links} == {t.context.span_id for t in tools}
    assert all(
        dict(link.attributes or {}) == {"tooltap.link": "tool_result"} for link in turn2.links
    )

    assert rec.total("tooltap.tool_calls", tooltap__outcome="ok", gen_ai__tool__name=TOOL) == 2
    assert rec.total("tooltap.tool_results", tooltap__result="ok") == 2
    assert rec.total("tooltap.tool_call.duration") == 2
    assert rec.total("gen_ai.client.operation.duration", gen_ai__provider__name=provider) == 2
    assert rec.total("gen_ai.client.token.usage", gen_ai__token__type="input") == 2
    assert rec.total("gen_ai.client.operation.time_to_first_chunk") == (2 if stream else 0)
    for name in ("tooltap.tool_calls", "tooltap.tool_results"):
        for point_attrs, _ in rec.points(name):
            assert "gen_ai.request.model" not in point_attrs and "server.port" not in point_attrs
    sent = rec.of(tooltap.ToolResultSent)
    assert sorted(str(e.call_id) for e in sent) == sorted(str(c.call_id) for c in calls)
    assert all(e.outcome == "ok" and e.duration is not None and not e.is_error for e in sent)
