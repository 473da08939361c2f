"""On anthropic's adopted span anthropic's attributes win; tooltap adds only ``tooltap.*``.

Each scenario runs twice against the simulator with anthropic's tracing on: bare, then
with tooltap instrumented. Apart from tooltap's own ``tooltap.*`` attributes, the span
must hold exactly what anthropic recorded bare, with the same status.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import pytest
from opentelemetry.sdk.trace import ReadableSpan

import tooltap
from tests.loopback_capture import QuietHandler, serving
from tests.sdk.drivers import DRIVERS, USER
from tooltap._telemetry import semconv as sc
from tooltap.simulator import Fault, Simulator

#: Differ between two calls whatever records them.
VOLATILE = ("anthropic.request.id", "gen_ai.response.id", "gen_ai.response.time_to_first_chunk")
MESSAGE: dict[str, Any] = {  # anthropic's own test fixture: cached tokens on top of input
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-test",
    "content": [{"type": "text", "text": "Hi there"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_read_input_tokens": 2,
        "cache_creation_input_tokens": 3,
    },
}


def _request(**extra: Any) -> dict[str, Any]:
    request: dict[str, Any] = DRIVERS["anthropic"]._request([{"role": "user", "content": USER}])
    return {**request, **extra}


def _unary(client: Any) -> None:
    client.messages.create(**_request())


def _stream(client: Any) -> None:
    for _ in client.messages.create(**_request(), stream=True):
        pass


def _stream_closed_early(client: Any) -> None:
    stream = client.messages.create(**_request(), stream=True)
    next(iter(stream))
    stream.close()


def _raw_bytes(client: Any) -> None:
    with client.messages.with_streaming_response.create(**_request(), stream=True) as raw:
        for _ in raw.iter_bytes():
            pass


def _failing(client: Any) -> None:
    with pytest.raises(anthropic.APIStatusError):
        client.messages.create(**_request())


SCENARIOS: dict[str, tuple[Fault | None, Callable[[Any], None], str | None]] = {
    "unary": (None, _unary, None),
    "stream": (None, _stream, None),
    "stream_closed_early": (Fault("stall", seconds=1.0), _stream_closed_early, None),
    "stream_cut_short": (Fault("truncate_bytes", at=400), _stream, "truncated_stream"),
    "raw_bytes": (None, _raw_bytes, None),
    "overloaded": (Fault("overloaded"), _failing, "overloaded"),
    "billing": (Fault("insufficient_balance"), _failing, "insufficient_balance"),
}


class _Traced:
    """anthropic's tracing into the provider tooltap records into (the recorder's)."""

    def __init__(self, rec: Any) -> None:
        self.exporter = rec.exporter
        self.provider = rec.tracer_provider

    def client(self, base_url: str, **options: Any) -> anthropic.Anthropic:
        options.setdefault("open_telemetry", {"tracer_provider": self.provider})
        return anthropic.Anthropic(
            base_url=base_url, api_key="sk-ant-test", max_retries=0, **options
        )

    def last(self) -> ReadableSpan:
        """The last span anthropic ended (under its scope, or Vertex's: not tooltap's)."""
        return [
            s
            for s in self.exporter.get_finished_spans()
            if s.instrumentation_scope is not None and s.instrumentation_scope.name != "tooltap"
        ][-1]


def _anthropics(span: ReadableSpan) -> dict[str, Any]:
    return {k: v for k, v in (span.attributes or {}).items() if not k.startswith("tooltap.")}


def _same(bare: ReadableSpan, instrumented: ReadableSpan) -> None:
    a, b = _anthropics(bare), _anthropics(instrumented)
    assert a.keys() == b.keys()
    assert {k: v for k, v in a.items() if k not in VOLATILE} == {
        k: v for k, v in b.items() if k not in VOLATILE
    }
    assert (bare.status.status_code, bare.status.description) == (
        instrumented.status.status_code,
        instrumented.status.description,
    )


@pytest.fixture
def bare_first(rec: Any) -> Iterator[Any]:
    """``rec``, uninstrumented until the test calls ``rec.instrument()``."""
    tooltap.uninstrument()
    yield rec


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_anthropics_attributes_are_the_same_with_tooltap(
    bare_first: Any, sim: Simulator, name: str
) -> None:
    fault, scenario, error_type = SCENARIOS[name]
    traced = _Traced(bare_first)
    client = traced.client(sim.anthropic_base_url)
    spans = []
    for instrumented in (False, True):
        if instrumented:
            bare_first.instrument()
        sim.reset()
        if fault is not None:
            sim.inject(fault, dialect="anthropic.messages")
        scenario(client)
        spans.append(traced.last())
    bare, adopted = spans
    _same(bare, adopted)
    tooltap_attrs = {k for k in adopted.attributes or {} if k.startswith("tooltap.")}
    assert all(not k.startswith("tooltap.") for k in bare.attributes or {})
    assert adopted.attributes.get("tooltap.error.type") == error_type
    if error_type is not None:
        (point,) = bare_first.points("gen_ai.client.operation.duration")
        assert point[0]["error.type"] == error_type  # the metric: tooltap's vocabulary
    if name == "stream_closed_early":
        assert tooltap_attrs == {"tooltap.stream.closed_early"}


def test_error_type_on_tooltaps_own_span_too(rec: Any, sim: Simulator) -> None:
    sim.inject(Fault("insufficient_balance"), dialect="anthropic.messages")
    client = DRIVERS["anthropic"].client(sim, sync=True, max_retries=0)
    _failing(client)
    (span,) = rec.inference()
    assert span.instrumentation_scope.name == "tooltap"
    attrs = dict(span.attributes or {})
    assert attrs["error.type"] == attrs["tooltap.error.type"] == "insufficient_balance"


class _Cached(QuietHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        body = json.dumps(MESSAGE).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_cached_tokens_and_cache_names_are_anthropics(rec: Any) -> None:
    traced = _Traced(rec)
    with serving(_Cached) as url:
        traced.client(url).messages.create(**_request())
    attrs = dict(traced.last().attributes or {})
    assert attrs["gen_ai.usage.input_tokens"] == 15  # anthropic counts cached tokens in
    assert attrs["gen_ai.usage.cache_write.input_tokens"] == 3
    assert not [k for k in attrs if k.startswith("gen_ai.usage.cache_creation")]
    assert rec.total("gen_ai.client.token.usage", gen_ai__token__type="input") == 1


def test_tooltaps_own_span_has_one_cache_vocabulary(rec: Any) -> None:
    with serving(_Cached) as url:
        client = anthropic.Anthropic(base_url=url, api_key="k", open_telemetry=False)
        client.messages.create(**_request())
    (span,) = rec.inference()
    attrs = dict(span.attributes or {})
    assert span.instrumentation_scope.name == "tooltap"
    assert attrs[sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] == 3  # the conventions' name
    assert attrs["gen_ai.usage.cache_read.input_tokens"] == 2
    other = "gen_ai.usage.cache_write" if not sc.DRAFT_NAMES else "gen_ai.usage.cache_creation"
    assert not [k for k in attrs if k.startswith(other)]


def test_vertex_keeps_its_provider_name(rec: Any, sim: Simulator) -> None:
    traced = _Traced(rec)
    client = anthropic.AnthropicVertex(
        region="us-east5",
        project_id="project",
        access_token="token",
        base_url=sim.anthropic_base_url,
        max_retries=0,
        open_telemetry={"tracer_provider": traced.provider},
    )
    message = client.messages.create(**_request())  # the simulator serves Vertex paths
    assert [b.type for b in message.content] == ["tool_use", "tool_use"]
    assert dict(traced.last().attributes or {})["gen_ai.provider.name"] == "gcp.vertex_ai"
    (point,) = rec.points("gen_ai.client.operation.duration")
    assert point[0]["gen_ai.provider.name"] == "gcp.vertex_ai"


@pytest.mark.parametrize("content_mode", ["metadata_only", "content"])
def test_stop_sequences_and_messages_follow_anthropics_content_mode(
    rec: Any, sim: Simulator, content_mode: str
) -> None:
    tooltap.uninstrument()
    tooltap.instrument(  # tooltap captures content everywhere
        tracer_provider=rec.tracer_provider,
        meter_provider=rec.meter_provider,
        capture_content="SPAN_AND_EVENT",
    )
    traced = _Traced(rec)
    client = traced.client(
        sim.anthropic_base_url,
        open_telemetry={
            "tracer_provider": traced.provider,
            "traces": {"content_mode": content_mode},
        },
    )
    content = content_mode == "content"
    sim.inject(Fault("invalid_json_args"), dialect="anthropic.messages")
    _stream(client)  # events read without a stream helper: anthropic keeps no output
    attrs = dict(traced.last().attributes or {})
    assert ("gen_ai.request.stop_sequences" in attrs) is content
    assert ("gen_ai.input.messages" in attrs) is content
    assert "gen_ai.output.messages" not in attrs
    details = [
        (e.attributes or {}).get("tooltap.problem.detail")
        for e in traced.last().events
        if e.name == "tooltap.problem"
    ]
    assert details and all((d is not None) is content for d in details)

    sim.reset()
    _stream_closed_early(client)  # output the app never read
    assert "gen_ai.output.messages" not in dict(traced.last().attributes or {})


def test_stop_sequences_stay_off_under_tooltaps_default(rec: Any, sim: Simulator) -> None:
    traced = _Traced(rec)
    _unary(traced.client(sim.anthropic_base_url))
    assert "gen_ai.request.stop_sequences" not in dict(traced.last().attributes or {})
    assert "gen_ai.request.temperature" not in dict(traced.last().attributes or {})
