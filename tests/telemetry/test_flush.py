"""``tooltap.flush()`` and ``uninstrument()`` end every open span exactly once.

Inference spans whose body the app dropped unclosed end at flush and at exit, as
closed early.

Each open span (a wire call, a broken call, a call only the harness saw) ends as
``orphaned`` once: one export, one ``tooltap.tool_results{result=orphaned}`` point, no
"ended span" warning from the SDK, whatever the order of flush, uninstrument and
results racing from other threads.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading

import pytest

import tooltap
from tests.telemetry.support import LIBS, Recorder, attrs, first_body, turn, url
from tooltap import Problem, ToolCall
from tooltap._telemetry.execution import tool_execution
from tooltap._telemetry.operation import Operation, get_telemetry
from tooltap._telemetry.settlement import Event
from tooltap.core import RequestInfo
from tooltap.simulator import Simulator


def call(call_id: str, index: int = 0) -> ToolCall:
    return ToolCall("lookup", {"key": call_id}, "openai", call_id, index, dialect="openai.chat")


def ended_span_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "ended span" in r.getMessage()]


@pytest.mark.parametrize("order", [("flush", "flush", "uninstrument"), ("uninstrument", "flush"),
                                   ("flush", "uninstrument", "uninstrument")])  # fmt: skip
def test_every_open_span_ends_once(
    rec: Recorder, caplog: pytest.LogCaptureFixture, order: tuple[str, ...]
) -> None:
    bad = Problem("invalid_json", 1, "bad", "Expecting value", "lookup", "{x")
    turn((call("a"),), problems=(bad,))
    with tool_execution(call("harness-only")):
        pass
    with caplog.at_level(logging.WARNING):
        for how in order:
            getattr(tooltap, how)()
    assert ended_span_warnings(caplog) == []
    spans = rec.tools()
    assert sorted(attrs(s)["gen_ai.tool.call.id"] for s in spans) == ["a", "bad", "harness-only"]
    assert len({s.context.span_id for s in spans}) == 3
    assert {attrs(s)["tooltap.result"] for s in spans} == {"orphaned"}
    assert rec.total("tooltap.tool_results", tooltap__result="orphaned") == 3
    assert rec.total("tooltap.tool_results") == 3


def test_results_racing_flush_end_each_span_once(
    rec: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    ids = [f"c{i}" for i in range(300)]
    turn(tuple(call(cid, i) for i, cid in enumerate(ids)))
    start = threading.Barrier(3)

    def answer(part: list[str]) -> None:
        start.wait()
        for cid in part:
            turn(results=(cid,))

    def flush() -> None:
        start.wait()
        tooltap.flush()

    threads = [threading.Thread(target=answer, args=(ids[::2],)),
               threading.Thread(target=answer, args=(ids[1::2],)),
               threading.Thread(target=flush)]  # fmt: skip
    with caplog.at_level(logging.WARNING):
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        tooltap.uninstrument()
    assert ended_span_warnings(caplog) == []
    spans = rec.tools()
    assert sorted(attrs(s)["gen_ai.tool.call.id"] for s in spans) == sorted(ids)
    ok = rec.total("tooltap.tool_results", tooltap__result="ok")
    orphaned = rec.total("tooltap.tool_results", tooltap__result="orphaned")
    assert ok + orphaned == len(ids)  # each id ended once: answered or orphaned, never both
    assert sum(1 for s in spans if attrs(s)["tooltap.result"] == "ok") == ok


def test_flush_leaves_nothing_open_for_the_next_instrumentation(recorder: Recorder) -> None:
    recorder.instrument()
    turn((call("a"),))
    tooltap.uninstrument()
    recorder.instrument()
    tooltap.flush()
    assert [attrs(s)["tooltap.result"] for s in recorder.tools()] == ["orphaned"]


@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
def test_flush_ends_an_abandoned_stream_inference_span(
    rec: Recorder, sim: Simulator, lib: str, caplog: pytest.LogCaptureFixture
) -> None:
    client = LIBS[lib].Client(timeout=10)
    target = url(sim, "openai.chat", True)
    request = client.build_request("POST", target, json=first_body("openai.chat", True))
    response = client.send(request, stream=True)
    chunks = response.iter_raw()
    assert next(chunks)  # the app reads one chunk, then breaks out without close()
    assert rec.inference() == []
    with caplog.at_level(logging.WARNING):
        tooltap.flush()
        tooltap.flush()
    (span,) = rec.inference()
    assert attrs(span)["tooltap.stream.closed_early"] is True
    assert rec.total("gen_ai.client.operation.duration") == 1
    assert ended_span_warnings(caplog) == []
    response.close()  # the app finishing later changes nothing
    client.close()
    assert len(rec.inference()) == 1


ABANDONING_APP = """
import httpx2
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
import tooltap
from tooltap.simulator import Simulator


class Print(SpanExporter):
    def export(self, spans):
        for span in spans:
            print("exported", span.name, dict(span.attributes).get("tooltap.stream.closed_early"),
                  flush=True)
        return SpanExportResult.SUCCESS


provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(Print()))
tooltap.instrument(tracer_provider=provider)
sim = Simulator().__enter__()
client = httpx2.Client(timeout=10)
body = {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
request = client.build_request("POST", sim.openai_base_url + "/chat/completions", json=body)
kept = client.send(request, stream=True)
chunks = kept.iter_raw()
next(chunks)  # then abandoned, never closed: the process exits with it still referenced
print("exiting", flush=True)
"""


def test_exit_ends_an_abandoned_stream_inference_span() -> None:
    result = subprocess.run(
        [sys.executable, "-c", ABANDONING_APP], capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "exiting"
    assert "exported chat gpt-4o True" in lines[1:]


def test_a_retired_telemetry_ends_each_late_call_at_once(rec: Recorder) -> None:
    """A response tapped just before uninstrument() records into the retired telemetry:
    its calls end there and then, as orphaned, instead of staying open for good."""
    tel = get_telemetry()
    assert tel is not None
    op = Operation(tel, dialect="openai.chat", request_model="m", server_address="h",
                   server_port=1, stream=True, owner="transport")  # fmt: skip
    op.begin_attempt(RequestInfo("openai.chat", model="m"), {})
    tooltap.uninstrument()
    op.calls_received([call("late")])  # the body goes on after the retirement
    op.report(Event.BODY_ENDED)
    assert len(tel.lifecycle) == 0
    (span,) = rec.tools()
    assert attrs(span)["tooltap.result"] == "orphaned"
    assert len(rec.inference()) == 1
