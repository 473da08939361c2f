"""A pending tool span: tooltap's own (started at receipt) or a framework's, decided once."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

import tooltap
from tests.recorder import Recorder
from tooltap import ToolCallReceived
from tooltap._core.model import ToolCall
from tooltap._telemetry import adoption
from tooltap._telemetry.adoption import Adoption
from tooltap._telemetry.config import Config
from tooltap._telemetry.config_env import environment_options
from tooltap._telemetry.foreign_tool_span import adopt
from tooltap._telemetry.pending_span import PendingToolSpan, adopted_result
from tooltap._telemetry.telemetry import get_telemetry

ATTRIBUTES = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "lookup",
    "gen_ai.tool.call.id": "call_1",
    "gen_ai.conversation.id": "c1",
    "tooltap.outcome": "invalid_json",
    "error.type": "invalid_json",
}


def _setup() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def test_unadopted_span_starts_at_receipt_with_everything_replayed() -> None:
    provider, exporter = _setup()
    before = time.time_ns()
    pending = PendingToolSpan(provider.get_tracer("t"), "execute_tool lookup", None, ATTRIBUTES)
    pending.add_event("tooltap.tool.retry", {"tooltap.tool.attempts": 1}, timestamp=before + 5)
    pending.set_attribute("tooltap.result", "error")
    pending.set_status(Status(StatusCode.ERROR, "invalid_json"))
    time.sleep(0.01)
    pending.end()
    (span,) = exporter.get_finished_spans()
    assert span.name == "execute_tool lookup"
    assert span.start_time is not None and before <= span.start_time < before + 10_000_000
    assert dict(span.attributes or {}) == {**ATTRIBUTES, "tooltap.result": "error"}
    assert [(e.name, e.timestamp) for e in span.events] == [("tooltap.tool.retry", before + 5)]
    assert span.status.status_code is StatusCode.ERROR
    assert not pending.is_recording()


def test_adopted_span_gets_tooltaps_attributes_and_keeps_its_own() -> None:
    provider, exporter = _setup()
    tracer = provider.get_tracer("framework")
    pending = PendingToolSpan(provider.get_tracer("t"), "execute_tool lookup", None, ATTRIBUTES)
    pending.add_event("tooltap.tool.retry", {"tooltap.tool.attempts": 1})
    theirs = tracer.start_span("execute_tool lookup", attributes={"gen_ai.tool.name": "theirs"})
    assert pending.adopt(theirs)
    assert not pending.adopt(tracer.start_span("other"))
    assert pending.get_span_context() == theirs.get_span_context()
    pending.set_attribute("tooltap.tool.side_effects", True)
    pending.set_status(Status(StatusCode.ERROR, "mine"))
    theirs.end()
    pending.set_attribute("tooltap.result", "ok")  # the framework's span has ended
    pending.end()
    (span,) = exporter.get_finished_spans()
    assert span is not None and span.name == "execute_tool lookup"
    assert dict(span.attributes or {}) == {
        "gen_ai.tool.name": "theirs",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.conversation.id": "c1",
        "tooltap.outcome": "invalid_json",
        "tooltap.tool.side_effects": True,
    }
    assert [e.name for e in span.events] == ["tooltap.tool.retry"]
    assert span.status.status_code is StatusCode.UNSET


def test_a_span_whose_context_was_read_is_tooltaps_own() -> None:
    provider, exporter = _setup()
    pending = PendingToolSpan(provider.get_tracer("t"), "execute_tool lookup", None, ATTRIBUTES)
    event = ToolCallReceived(ToolCall("lookup", {}, "openai", "call_1", 0), pending)
    context = event.span_context
    assert context is not None and context.is_valid
    assert not pending.adopt(provider.get_tracer("framework").start_span("x"))
    pending.end()
    assert [s.context.span_id for s in exporter.get_finished_spans()] == [context.span_id]


def test_a_received_event_read_after_adoption_names_the_frameworks_span() -> None:
    provider, _ = _setup()
    pending = PendingToolSpan(provider.get_tracer("t"), "execute_tool lookup", None, ATTRIBUTES)
    event = ToolCallReceived(ToolCall("lookup", {}, "openai", "call_1", 0), pending)
    theirs = provider.get_tracer("framework").start_span("execute_tool lookup")
    assert pending.adopt(theirs)
    assert event.span_context == theirs.get_span_context()


def test_adoption_modes(monkeypatch: pytest.MonkeyPatch) -> None:
    """auto: pending only while a framework span records; on: whenever hooked; off: never."""
    provider, _ = _setup()
    hooked = [False]
    monkeypatch.setattr(adoption, "_probe", lambda: hooked[0])
    auto, on, off = Adoption(Config().adopt_tool_spans), Adoption(True), Adoption(False)
    assert (auto.mode, on.mode, off.mode) == ("auto", "on", "off")
    assert [m.adopts for m in (auto, on, off)] == [True, True, False]
    assert [m.pending() for m in (auto, on, off)] == [False, False, False]  # nothing hooked
    hooked[0] = True
    assert [m.pending() for m in (auto, on, off)] == [False, True, False]
    run = provider.get_tracer("framework").start_span("agent run")
    for mode in (auto, off):
        mode.framework_span(run)
    assert [m.pending() for m in (auto, on, off)] == [True, True, False]
    run.end()
    assert [m.pending() for m in (auto, on, off)] == [False, True, False]


@pytest.mark.parametrize(
    ("text", "setting"),
    [("auto", None), ("AUTO", None), ("1", True), ("on", True), ("0", False), ("off", False)],
)
def test_adoption_variable(text: str, setting: bool | None) -> None:
    options, _ = environment_options({"TOOLTAP_ADOPT_TOOL_SPANS": text}, (), pytest.fail)
    assert options["adopt_tool_spans"] == ("TOOLTAP_ADOPT_TOOL_SPANS", setting)


def test_pending_span_knows_its_parent_without_being_made() -> None:
    """Flush keeps a live response's calls by their parent: a pending span has it too."""
    provider, exporter = _setup()
    tracer = provider.get_tracer("t")
    inference = tracer.start_span("chat")
    under = PendingToolSpan(tracer, "execute_tool lookup", trace.set_span_in_context(inference), {})
    assert under.parent == inference.get_span_context()
    assert PendingToolSpan(tracer, "execute_tool lookup", None, {}).parent is None
    assert exporter.get_finished_spans() == ()  # neither was made


def test_a_tracer_that_fails_leaves_a_non_recording_span(
    caplog: pytest.LogCaptureFixture,
) -> None:
    provider, exporter = _setup()
    tracer = provider.get_tracer("t")

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("tracer")

    pending = PendingToolSpan(tracer, "execute_tool lookup", None, ATTRIBUTES)
    pending.set_attribute("tooltap.result", "ok")
    tracer.start_span = broken  # type: ignore[method-assign]
    caplog.set_level(logging.DEBUG, "tooltap")
    assert not pending.get_span_context().is_valid
    pending.end()  # no raise, nothing made
    assert exporter.get_finished_spans() == ()
    (record,) = [r for r in caplog.records if r.exc_info]
    assert "pending_span" in record.getMessage()


def test_a_child_of_a_pending_span_without_a_parent_nests_under_it() -> None:
    """The harness runs a handler in the span: made then, with the context of its receipt."""
    provider, exporter = _setup()
    tracer = provider.get_tracer("t")
    pending = PendingToolSpan(tracer, "execute_tool lookup", None, ATTRIBUTES)

    def handler() -> None:
        with trace.use_span(pending, end_on_exit=False):
            tracer.start_span("handler").end()

    worker = threading.Thread(target=handler, daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive()
    pending.end()
    spans = {s.name: s for s in exporter.get_finished_spans()}
    tool, child = spans["execute_tool lookup"], spans["handler"]
    assert tool.parent is None
    assert child.parent is not None and tool.context is not None
    assert child.parent.span_id == tool.context.span_id


def test_a_framework_span_without_an_id_is_adopted_by_name_and_arguments(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """google-adk knows the call id only when the tool has returned."""
    monkeypatch.setattr(adoption, "_probe", lambda: True)
    recorder.instrument(adopt_tool_spans=True)
    tel = get_telemetry()
    assert tel is not None
    call = ToolCall("lookup", {"key": "height"}, "openai", "call_1", 0)
    entry = tel.lifecycle.received(call, parent=None, provider="openai", label="lookup")
    assert isinstance(entry.span, PendingToolSpan)
    tracer = recorder.tracer_provider.get_tracer("framework")
    other = tracer.start_span("execute_tool lookup")
    assert adopt(other, None, "lookup", {"key": "weight"}) is None  # another call's arguments
    assert adopt(other, None, None, None) is None  # nothing to match by
    theirs = tracer.start_span("execute_tool lookup")
    assert adopt(theirs, None, "lookup", {"key": "height"}) is entry.span
    assert entry.span.adopted is theirs
    other.end()
    theirs.end()
    tooltap.flush()
    (adopted,) = [s for s in recorder.tools() if s.name == "execute_tool lookup" and
                  (s.attributes or {}).get("tooltap.tool_span") == "adopted"]  # fmt: skip
    assert (adopted.attributes or {})["gen_ai.tool.call.id"] == "call_1"


def test_identical_calls_each_adopt_their_own_framework_span(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two calls of one response with the same name and arguments, run at once by a
    framework that knows no id (google-adk): each framework span becomes one call's."""
    monkeypatch.setattr(adoption, "_probe", lambda: True)
    recorder.instrument(adopt_tool_spans=True)
    tel = get_telemetry()
    assert tel is not None
    entries = [
        tel.lifecycle.received(
            ToolCall("lookup", {"key": "height"}, "openai", f"call_{i}", i),
            parent=None,
            provider="openai",
            label="lookup",
        )
        for i in range(2)
    ]
    tracer = recorder.tracer_provider.get_tracer("framework")
    first, second = tracer.start_span("execute_tool lookup"), tracer.start_span("x")
    assert adopt(first, None, "lookup", {"key": "height"}) is entries[0].span
    assert adopt(second, None, "lookup", {"key": "height"}) is entries[1].span


def test_the_adopted_result_event_carries_sanitized_names() -> None:
    provider, exporter = _setup()
    pending = PendingToolSpan(provider.get_tracer("t"), "execute_tool x", None, ATTRIBUTES)
    assert pending.adopt(provider.get_tracer("framework").start_span("execute_tool x"))
    request = provider.get_tracer("t").start_span("chat")
    adopted_result(pending, request, "call_\ud800", "look\ud800up" * 100, "ok", 1.0)
    request.end()
    (event,) = next(s for s in exporter.get_finished_spans() if s.name == "chat").events
    attributes = dict(event.attributes or {})
    assert attributes["gen_ai.tool.call.id"] == "call_\ufffd"
    name = attributes["gen_ai.tool.name"]
    assert isinstance(name, str) and "\ud800" not in name and len(name) < 600
    assert attributes["tooltap.truncated"] == 1
