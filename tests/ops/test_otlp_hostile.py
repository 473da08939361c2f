"""Hostile model output exported over real OTLP/protobuf: the batch arrives whole.

A tool name with a lone surrogate and 10,000 characters, a 1 MB call id with another,
and arguments holding NaN, through the real transport tap, exported by the real OTLP
HTTP exporter to a receiver that decodes it with opentelemetry-proto; the app's own span
is in the same batch.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

import tooltap
from tests.ops.otlp_receiver import Received, attributes, http_receiver
from tests.reliability.support import Canned, ReplayServer
from tooltap._telemetry import sanitize
from tooltap._telemetry import semconv as sc

NAME = "\ud800" + "n" * 10_000
CALL_ID = "call_\udfff" + "i" * 1_000_000
RESULT_ID = "call_ok"


def _body() -> bytes:
    calls = [
        {"id": CALL_ID, "type": "function",
         "function": {"name": NAME, "arguments": '{"x": NaN, "y": -Infinity, "s": "\\ud800"}'}},
        {"id": RESULT_ID, "type": "function",
         "function": {"name": "lookup", "arguments": '{"key": "a"}'}},
    ]  # fmt: skip
    message = {"role": "assistant", "content": None, "tool_calls": calls}
    choice = {"index": 0, "message": message, "finish_reason": "tool_calls"}
    body = {"id": "chatcmpl-\ud800", "object": "chat.completion", "model": "gpt-4o",
            "choices": [choice]}  # fmt: skip
    return json.dumps(body).encode()  # ASCII: the surrogates travel as \\u escapes


@pytest.fixture
def exported() -> Iterator[Received]:
    with http_receiver() as (endpoint, received):
        provider = TracerProvider()
        provider.add_span_processor(
            BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces", timeout=10))
        )
        meters = MeterProvider()
        replay = ReplayServer().start()
        try:
            replay.canned = Canned(200, [("content-type", "application/json")], [_body()])
            tooltap.instrument(
                tracer_provider=provider, meter_provider=meters, capture_content="SPAN_ONLY"
            )
            app = provider.get_tracer("the-app")
            with app.start_as_current_span("app work"), httpx.Client(timeout=10) as client:
                request = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
                response = client.post(f"{replay.url}/v1/chat/completions", json=request)
                assert response.content == _body()  # the app's bytes, unchanged
            tooltap.flush()
            assert provider.force_flush(15_000)
        finally:
            tooltap.uninstrument()
            replay.stop()
            provider.shutdown()
            meters.shutdown()
        yield received


def test_hostile_names_ids_and_values_export_with_the_apps_spans(exported: Received) -> None:
    spans = {span.name: span for span in exported.spans()}
    assert "app work" in spans  # the app's own span: the batch was not lost
    assert "chat gpt-4o" in spans
    tools = [s for s in exported.spans() if attributes(s).get(sc.GEN_AI_OPERATION_NAME)
             == sc.OPERATION_EXECUTE_TOOL]  # fmt: skip
    hostile = next(s for s in tools if attributes(s)[sc.GEN_AI_TOOL_CALL_ID] != RESULT_ID)
    got = attributes(hostile)
    name = got[sc.GEN_AI_TOOL_NAME]
    assert name.startswith("\ufffdnnn") and name.endswith(sanitize.MARK)
    assert len(name) == sanitize.NAME_CHARS
    assert hostile.name == f"execute_tool {name}"
    call_id = got[sc.GEN_AI_TOOL_CALL_ID]
    assert call_id.startswith("call_\ufffdiii") and len(call_id) == sanitize.ID_CHARS
    assert got[sc.TOOLTAP_TRUNCATED] == 2
    arguments = json.loads(got[sc.GEN_AI_TOOL_CALL_ARGUMENTS])  # valid JSON
    assert arguments == {"x": "NaN", "y": "-Infinity", "s": "\ufffd"}
    assert any(attributes(s).get(sc.GEN_AI_TOOL_CALL_ID) == RESULT_ID for s in tools)
    chat = attributes(spans["chat gpt-4o"])
    assert chat[sc.GEN_AI_RESPONSE_ID] == "chatcmpl-\ufffd"
