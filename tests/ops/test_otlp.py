"""OTLP export from the standard env reaches a receiver that decodes it with opentelemetry-proto.

Fault-heavy traffic (the instrumented SDKs against the simulator) exports over
http/protobuf and over grpc; the example agents also run unchanged under
``opentelemetry-instrument``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from opentelemetry.proto.trace.v1 import trace_pb2

from tests.ops.otlp_receiver import Received, attributes, grpc_receiver, http_receiver
from tests.ops.support import PYTHON, ROOT, free_port, process, wait_for
from tooltap._telemetry import semconv as sc

SERVICE = "tooltap-ops-test"
ENV = {
    "OTEL_SERVICE_NAME": SERVICE,
    "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=ops",
    "OTEL_EXPORTER_OTLP_HEADERS": "x-ops-token=not-a-secret",
    "OTEL_METRIC_EXPORT_INTERVAL": "1000",
}
RECEIVERS: dict[str, Callable[[], AbstractContextManager[tuple[str, Received]]]] = {
    "http/protobuf": http_receiver,
    "grpc": grpc_receiver,
}
CALL_ID_KEYS = {sc.GEN_AI_TOOL_CALL_ID, sc.GEN_AI_RESPONSE_ID}


def clean_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TOOLTAP_"))}
    return {**env, **ENV, **extra}


@pytest.fixture(scope="module", params=sorted(RECEIVERS))
def exported(request: pytest.FixtureRequest) -> Iterator[tuple[str, Received]]:
    protocol: str = request.param
    with RECEIVERS[protocol]() as (endpoint, received):
        env = clean_env(
            {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": protocol}
        )
        args = [PYTHON, str(ROOT / "tests/ops/traffic.py"), "--mix", "faults", "--pace", "0"]
        result = subprocess.run(
            args, env=env, capture_output=True, text=True, timeout=180, check=False
        )
        assert result.returncode == 0, result.stderr
        assert '"done"' in result.stdout
        yield protocol, received


def test_every_tooltap_metric_arrives(exported: tuple[str, Received]) -> None:
    _, received = exported
    # no internal error happened; the example agents run their tools without the harness
    expected = set(sc.METRICS) - {sc.INTERNAL_ERRORS, sc.EXECUTE_TOOL_DURATION}
    assert expected <= received.metric_names()


def test_resource_and_headers_come_from_the_standard_env(exported: tuple[str, Received]) -> None:
    _, received = exported
    resources = received.resources()
    assert resources and all(r["service.name"] == SERVICE for r in resources)
    assert all(r["deployment.environment"] == "ops" for r in resources)
    assert all(h.get("x-ops-token") == "not-a-secret" for h in received.headers)


def test_metrics_carry_no_call_ids_and_link_to_traces(exported: tuple[str, Received]) -> None:
    _, received = exported
    span_traces = {span.trace_id for span in received.spans()}
    exemplar_traces = set()
    for name in sc.METRICS:
        for metric in received.metrics_named(name):
            data = getattr(metric, metric.WhichOneof("data"))
            for point in data.data_points:
                assert not CALL_ID_KEYS & set(attributes(point)), name
                exemplar_traces |= {e.trace_id for e in point.exemplars}
    assert exemplar_traces and exemplar_traces <= span_traces


def test_inference_and_execute_tool_spans_with_call_ids_and_links(
    exported: tuple[str, Received],
) -> None:
    _, received = exported
    spans = received.spans()
    by_id = {span.span_id: span for span in spans}
    inference = [s for s in spans if s.kind == trace_pb2.Span.SPAN_KIND_CLIENT]
    tools = [s for s in spans if s.name == "execute_tool lookup_demo_value"]
    assert {"chat gpt-4o-mini", "generate_content gemini-2.5-flash"} <= {s.name for s in inference}
    # the anthropic SDK's own span ("anthropic.messages.create") is adopted, not doubled
    providers = {attributes(s)[sc.GEN_AI_PROVIDER_NAME] for s in inference}
    assert {"openai", "anthropic"} <= providers
    assert tools and all(s.kind == trace_pb2.Span.SPAN_KIND_INTERNAL for s in tools)
    for tool in tools:
        attrs = attributes(tool)
        assert attrs[sc.GEN_AI_OPERATION_NAME] == "execute_tool"
        assert attrs[sc.GEN_AI_TOOL_CALL_ID]
        assert by_id[tool.parent_span_id].kind == trace_pb2.Span.SPAN_KIND_CLIENT
    results = {attributes(t)[sc.TOOLTAP_RESULT] for t in tools}
    assert {"ok", "orphaned"} <= results
    linked = {
        link.span_id
        for span in inference
        for link in span.links
        if attributes(link).get(sc.TOOLTAP_LINK) == sc.LINK_TOOL_RESULT
    }
    answered = {t.span_id for t in tools if attributes(t)[sc.TOOLTAP_RESULT] == "ok"}
    assert answered and answered <= linked


@pytest.mark.parametrize("agent", ["openai_agent", "anthropic_agent", "google_agent"])
@pytest.mark.parametrize("stream", ["0", "1"])
def test_example_agents_run_unchanged_under_opentelemetry_instrument(
    agent: str, stream: str, tmp_path: Path
) -> None:
    port = free_port()
    sim_args = [PYTHON, "-m", "tooltap.simulator", "--port", str(port)]
    with (
        process(sim_args, stdout=subprocess.PIPE, text=True) as sim,
        http_receiver() as (endpoint, received),
    ):
        assert sim.stdout is not None
        assert "listening" in sim.stdout.readline()
        env = clean_env(
            {
                "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
                "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",  # the distro defaults to grpc
                "OTEL_METRICS_EXPORTER": "otlp",
                "OTEL_LOGS_EXPORTER": "none",
                "AGENT_STREAM": stream,
                "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
                "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
                "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{port}",
            }
        )
        instrument = str(Path(sys.executable).with_name("opentelemetry-instrument"))
        script = str(ROOT / "examples" / "agents" / f"{agent}.py")
        result = subprocess.run(
            [instrument, PYTHON, script],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert "170 cm" in result.stdout
        wait_for(lambda: received.spans(), 10, "spans")
    names = [s.name for s in received.spans()]
    assert names.count("execute_tool lookup_demo_value") == 2
    assert sum(1 for s in received.spans() if s.kind == trace_pb2.Span.SPAN_KIND_CLIENT) == 2
    assert {"tooltap.tool_calls", "tooltap.tool_results"} <= received.metric_names()
