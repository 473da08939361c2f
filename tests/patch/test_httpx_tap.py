"""The tap inside an SDK-owned Operation (the contract the SDK wrappers rely on), and httpx
aliasing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import httpx2

import tooltap
from tests.telemetry.support import Recorder, attrs, first_body, url
from tooltap._telemetry.operation import Operation, current_operation, get_telemetry
from tooltap._telemetry.settlement import Event, State
from tooltap.simulator import Fault, Simulator

DIALECT = "openai.chat"


def _sdk_op(stream: bool) -> Operation:
    tel = get_telemetry()
    assert tel is not None
    return Operation(tel, dialect=DIALECT, request_model="gpt-4o", server_address="127.0.0.1",
                     server_port=None, stream=stream, owner="sdk")  # fmt: skip


def test_streamed_body_holds_the_sdk_operation_until_it_ends(rec: Recorder, sim: Simulator) -> None:
    op = _sdk_op(True)
    with httpx2.Client() as client:
        token = current_operation.set(op)
        try:
            request = client.build_request(
                "POST", url(sim, DIALECT, True), json=first_body(DIALECT, True)
            )
            response = client.send(request, stream=True)
        finally:
            current_operation.reset(token)
        assert op.state is State.HELD and not op.ended  # the body outlives the SDK call
        op.report(Event.SDK_RETURNED)  # what the SDK wrapper reports as the call returns
        assert op.state is State.STREAMING and not op.ended
        response.read()
    assert op.ended
    (span,) = rec.inference()
    assert span.context.span_id == op.span.get_span_context().span_id
    assert len(rec.of(tooltap.ToolCallReceived)) == 2


def test_body_read_inside_the_call_leaves_the_end_to_the_sdk(rec: Recorder, sim: Simulator) -> None:
    op = _sdk_op(False)
    with httpx2.Client() as client:
        token = current_operation.set(op)
        try:
            client.post(url(sim, DIALECT, False), json=first_body(DIALECT, False))
        finally:
            current_operation.reset(token)
    assert op.state is State.CALLING and not op.ended and rec.inference() == []
    op.report(Event.SDK_RETURNED)
    (span,) = rec.inference()
    assert attrs(span)["gen_ai.response.finish_reasons"] == ("tool_call",)


def test_retried_attempts_are_one_span(rec: Recorder, sim: Simulator) -> None:
    sim.inject(Fault("rate_limit", retry_after=0.01), dialect=DIALECT)
    op = _sdk_op(False)
    with httpx2.Client() as client:
        token = current_operation.set(op)
        try:
            for attempt in range(2):  # what an SDK's retry loop does
                response = client.post(
                    url(sim, DIALECT, False),
                    json=first_body(DIALECT, False),
                    headers={"x-stainless-retry-count": str(attempt)},
                )
        finally:
            current_operation.reset(token)
    op.end()
    assert response.status_code == 200
    (span,) = rec.inference()
    a = attrs(span)
    assert a["http.request.resend_count"] == 1 and "error.type" not in a
    assert [e.name for e in span.events] == ["gen_ai.client.attempt.failed"]
    assert rec.total("tooltap.retries", error__type="rate_limited") == 1
    assert rec.total("gen_ai.client.operation.duration") == 1


def test_alias_httpx_is_wrapped_once(sim: Simulator) -> None:
    code = f"""
        import httpx2
        httpx2.alias_httpx()
        import httpx, wrapt
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        import tooltap
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        tooltap.instrument(tracer_provider=provider)
        assert httpx.Client is httpx2.Client
        send = httpx.Client.__dict__["send"]
        assert not isinstance(send.__wrapped__, wrapt.FunctionWrapper)
        httpx.post({url(sim, DIALECT, False)!r}, json={{"model": "m", "messages": []}})
        print(len(exporter.get_finished_spans()))
    """
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
        check=True,
    )
    assert out.stdout.strip() == "1"
