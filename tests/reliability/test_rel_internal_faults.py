"""Internal faults: a tooltap component that raises never changes the app's result.

Each case makes one component raise on purpose (monkeypatch), then runs the same
requests through a real SDK as an uninstrumented baseline: a stream and a whole body
from a reseeded simulator. The app must see exactly the baseline; the fault must have
fired; tooltap must log it at debug (with the traceback) and count it in
``tooltap.internal_errors{tooltap.component}``; and no span may be left open or ended
twice. A reducer that raises on an event is caught by the core itself and recorded as
an ``unexpected_shape`` problem; an exporter that raises is contained by the
OpenTelemetry SDK's processor, which logs it (tooltap never sees it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from opentelemetry.sdk._logs import LogRecordProcessor
from opentelemetry.sdk._logs.export import LogRecordExportResult, SimpleLogRecordProcessor
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

import tooltap
from tests.reliability.apps import MODELS, App
from tests.reliability.support import Apps, Recorder, watched
from tooltap._core.dialects import (
    anthropic_items,
    google_items,
    openai_chat_items,
    openai_responses_items,
)
from tooltap._core.dialects import dialect as dialect_entry
from tooltap._core.stream import StreamParser
from tooltap._core.stream_items import ItemParser
from tooltap._telemetry import flight_writer
from tooltap._telemetry.flight import FlightRecorder, Recording
from tooltap._telemetry.telemetry import Telemetry, get_telemetry
from tooltap.simulator import Simulator, _scenario

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.usefixtures("frozen_heap")]


#: The readers of the items an SDK's stream loop decodes.
_ITEMS = (
    anthropic_items.Items,
    google_items.Items,
    openai_chat_items.Items,
    openai_responses_items.Items,
)


class InjectedFault(RuntimeError):
    """The failure each case injects into one tooltap component."""


@dataclass
class Fault:
    """How to break one component, and how tooltap must account for it."""

    inject: Callable[[pytest.MonkeyPatch, Recorder, Telemetry, Callable[..., Any]], None]
    component: str | None  # the tooltap.internal_errors label; None: not tooltap's to count
    options: dict[str, Any] | None = None


def _each_reducer(method: str) -> Callable[..., None]:
    def inject(mp: pytest.MonkeyPatch, cap: Recorder, tel: Telemetry, boom: Any) -> None:
        for dialect in MODELS:
            mp.setattr(dialect_entry(dialect).reducer, method, boom)

    return inject


def _parser_feed(mp: pytest.MonkeyPatch, cap: Recorder, tel: Telemetry, boom: Any) -> None:
    """Both ways a stream is parsed: its bytes, and (inside an SDK's loop) its items."""
    mp.setattr(StreamParser, "feed", boom)
    for items in _ITEMS:
        mp.setattr(items, "item", boom)


def _parser_close(mp: pytest.MonkeyPatch, cap: Recorder, tel: Telemetry, boom: Any) -> None:
    mp.setattr(StreamParser, "close", boom)
    mp.setattr(ItemParser, "close", boom)


def _reducer_event(mp: pytest.MonkeyPatch, cap: Recorder, tel: Telemetry, boom: Any) -> None:
    """A reducer's event, from the bytes (``event``) or from an SDK's item (``take``)."""
    for dialect in MODELS:
        mp.setattr(dialect_entry(dialect).reducer, "event", boom)
        mp.setattr(dialect_entry(dialect).reducer, "take", boom)


def _tool_spans_only(mp: pytest.MonkeyPatch, cap: Recorder, tel: Telemetry, boom: Any) -> None:
    start = tel.tracer.start_span

    def start_span(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("execute_tool"):
            boom()
        return start(name, *args, **kwargs)

    mp.setattr(tel.tracer, "start_span", start_span)


class _BrokenSpanExporter(SpanExporter):
    def __init__(self, boom: Callable[..., Any]) -> None:
        self.boom = boom

    def export(self, spans: Any) -> SpanExportResult:
        self.boom()
        return SpanExportResult.FAILURE


class _BrokenLogExporter:
    def __init__(self, boom: Callable[..., Any]) -> None:
        self.boom = boom

    def export(self, batch: Any) -> LogRecordExportResult:
        self.boom()
        return LogRecordExportResult.FAILURE

    def shutdown(self) -> None:
        """Nothing to release."""


def _add_processor(processor: Callable[[Any], Any], exporter: type, kind: str) -> Any:
    def inject(mp: pytest.MonkeyPatch, cap: Recorder, tel: Telemetry, boom: Any) -> None:
        provider = cap.tracer_provider if kind == "span" else cap.logger_provider
        adder = "add_span_processor" if kind == "span" else "add_log_record_processor"
        getattr(provider, adder)(processor(exporter(boom)))

    return inject


def _listener(mp: pytest.MonkeyPatch, cap: Recorder, tel: Telemetry, boom: Any) -> None:
    """Nothing to patch: the failing listener is passed to ``instrument`` (see below)."""


#: Replaced by the test's own temporary directory: the flight recorder's, keeping everything.
FLIGHT_DIR = object()
_FLIGHT = {"flight_recorder": FLIGHT_DIR, "flight_recorder_all": True}


def _flight_entries(mp: pytest.MonkeyPatch, cap: Recorder, tel: Telemetry, boom: Any) -> None:
    """Both ways into the flight recorder: a tapped body's recording, a body read whole."""
    mp.setattr(FlightRecorder, "begin", boom)
    mp.setattr(FlightRecorder, "whole", boom)


FAULTS: dict[str, Fault] = {
    "parser_feed": Fault(_parser_feed, "tap_stream"),
    "parser_close": Fault(_parser_close, "tap_stream"),
    "reducer_finish": Fault(_each_reducer("finish"), "tap_stream"),
    "reducer_event": Fault(_reducer_event, None),
    "span_creation": Fault(lambda mp, c, t, b: mp.setattr(t.tracer, "start_span", b), "sdk_call"),
    "tool_span_creation": Fault(_tool_spans_only, None),
    "counter_add": Fault(lambda mp, c, t, b: mp.setattr(t.instruments.tool_calls, "add", b), None),
    "histogram_record": Fault(
        lambda mp, c, t, b: mp.setattr(t.instruments.operation_duration, "record", b), None
    ),
    "event_emit": Fault(
        lambda mp, c, t, b: mp.setattr(t.events, "emit", b), None, {"capture_content": "EVENT_ONLY"}
    ),
    "listener": Fault(_listener, "listener"),
    "flight_begin": Fault(_flight_entries, None, _FLIGHT),
    "flight_settled": Fault(lambda mp, c, t, b: mp.setattr(Recording, "settled", b), None, _FLIGHT),
    "flight_writer": Fault(
        lambda mp, c, t, b: mp.setattr(flight_writer, "encode", b), "flight_recorder", _FLIGHT
    ),
    "span_exporter": Fault(_add_processor(SimpleSpanProcessor, _BrokenSpanExporter, "span"), None),
    "log_exporter": Fault(
        _add_processor(SimpleLogRecordProcessor, _BrokenLogExporter, "log"),
        None,
        {"capture_content": "SPAN_AND_EVENT"},
    ),
}
#: Faults whose report is the OpenTelemetry SDK's log, not tooltap's.
_SDK_CONTAINED = ("span_exporter", "log_exporter")
assert issubclass(SimpleLogRecordProcessor, LogRecordProcessor)


async def _views(apps: Apps, sim: Simulator, dialect: str, sync: bool) -> list[dict[str, Any]]:
    app: App = apps(dialect, sim.url, sync)
    return [await app.view("plain"), await app.view(stream=False)]


def _injected(records: list[logging.LogRecord]) -> list[logging.LogRecord]:
    return [r for r in records if r.exc_info and isinstance(r.exc_info[1], InjectedFault)]


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
@pytest.mark.parametrize("dialect", list(MODELS))
@pytest.mark.parametrize("name", list(FAULTS))
async def test_component_fault_is_contained(
    name: str,
    dialect: str,
    sync: bool,
    recorder: Recorder,
    apps: Apps,
    seeded: Callable[[int], Simulator],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    fault = FAULTS[name]
    monkeypatch.setattr(_scenario, "time", SimpleNamespace(time=lambda: 1_760_000_000.0))
    baseline = await _views(apps, seeded(11), dialect, sync)

    hits: list[str] = []

    def boom(*args: Any, **kwargs: Any) -> Any:
        hits.append(name)
        raise InjectedFault(name)

    options = {k: tmp_path if v is FLIGHT_DIR else v for k, v in (fault.options or {}).items()}
    recorder.instrument(*([boom] if name == "listener" else []), **options)
    tel = get_telemetry()
    assert tel is not None
    fault.inject(monkeypatch, recorder, tel, boom)
    caplog.set_level(logging.DEBUG)
    seen = await _views(apps, seeded(11), dialect, sync)
    if tel.flight is not None:  # records are written off the app's path: wait for them
        assert tel.flight.writer.drain(10)
    monkeypatch.undo()  # the faulty component is whole again for the checks below

    assert seen == baseline
    assert hits, "the fault never fired"
    injected = _injected(caplog.records)
    if name in _SDK_CONTAINED:  # logged by the SDK's processor, once per message (dedup filter)
        assert all(r.name.startswith("opentelemetry.sdk") for r in injected)
    else:
        assert injected, "the fault was not logged with its traceback"
        assert all(r.name == "tooltap" and r.levelno == logging.DEBUG for r in injected)
    counted = {a.get("tooltap.component") for a, _ in recorder.points("tooltap.internal_errors")}
    if fault.component is not None:
        assert fault.component in counted
    elif name == "reducer_event":  # the core's own guard: a problem, counted as one
        assert recorder.total("tooltap.stream.problems", tooltap__problem__kind="unexpected_shape")
    elif name not in _SDK_CONTAINED:
        assert counted, "tooltap did not count the fault"
    if name not in ("span_creation",):
        watched(recorder, 1)
    assert recorder.ledger.open_spans(tools=False) == []
    tooltap.flush()
    assert recorder.ledger.open_spans() == []
    assert recorder.ledger.anomalies() == {
        "started_twice": [],
        "ended_twice": [],
        "ended_unstarted": [],
    }
