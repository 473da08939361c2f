"""Apps whose failure is a hang or a leak, run by ``test_rel_settlement`` in a subprocess.

``python settlement_app.py MODE`` prints one JSON object on its last line:

* ``signal``: a timer signal every few milliseconds calls ``tooltap.flush()`` from its
  handler while the main thread records turns (each holds the open-call table's lock
  for a moment): a hang is a flush waiting on a lock the interrupted thread holds.
* ``slow``: a synchronous span processor whose exporter takes a second per span;
  ``flush(2000)`` with 18 unanswered calls, then 18 more left open at exit. Prints
  how long the flush took and when the last line was printed (the parent times exit).
* ``race``: threads stream responses with tool calls from the simulator while other
  threads instrument and uninstrument; afterwards every span started must have ended.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from collections.abc import Sequence

import httpx
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

import tooltap
from tests.recorder import SpanLedger
from tests.telemetry.support import first_body, turn, url
from tooltap import ToolCall
from tooltap.simulator import Simulator


def lookups(prefix: str, count: int) -> tuple[ToolCall, ...]:
    """``count`` calls of ``lookup``, their ids ``prefix`` and their index."""
    ids = [f"{prefix}{i}" for i in range(count)]
    return tuple(ToolCall("lookup", {"key": c}, "openai", c, i, dialect="openai.chat")
                 for i, c in enumerate(ids))  # fmt: skip


class _Appends(SpanProcessor):
    """Counts starts and ends without a lock of its own (``list.append`` is atomic), so
    that a flush can wait only on tooltap's locks, not on this processor's."""

    def __init__(self) -> None:
        self.started: list[int] = []
        self.ended: list[int] = []

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self.started.append(span.context.span_id)

    def on_end(self, span: ReadableSpan) -> None:
        self.ended.append(span.context.span_id)


def signal_flush() -> dict[str, object]:
    provider = TracerProvider()
    ledger = _Appends()
    provider.add_span_processor(ledger)
    tooltap.instrument(tracer_provider=provider)
    flushes: list[float] = []
    busy: list[bool] = []

    def handler(signum: int, frame: object) -> None:
        if busy:  # a graceful-shutdown handler runs once at a time
            return
        busy.append(True)
        started = time.monotonic()
        tooltap.flush(1000)
        flushes.append(time.monotonic() - started)
        busy.clear()

    signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.002, 0.002)
    try:
        for n in range(150):
            calls = lookups(f"t{n}-", 20)
            turn(calls)
            turn(results=tuple(c.call_id or "" for c in calls[::2]))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
    tooltap.flush()
    tooltap.uninstrument()
    return {
        "flushes": len(flushes),
        "slowest_flush": max(flushes, default=0.0),
        "waited": sum(1 for f in flushes if f > 0.5),
        "open": len(set(ledger.started) - set(ledger.ended)),
        "ended_twice": len(ledger.ended) - len(set(ledger.ended)),
    }


class _SlowExporter(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        time.sleep(1.0)
        return SpanExportResult.SUCCESS


def slow_exporter() -> dict[str, object]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_SlowExporter()))
    tooltap.instrument(tracer_provider=provider)
    turn(lookups("a", 18))  # its inference span's export: one second
    started = time.monotonic()
    tooltap.flush(2000)
    flush = time.monotonic() - started
    turn(lookups("b", 18))  # left open: the exit hook ends them
    return {"flush": flush, "last_line": time.time()}


def race() -> dict[str, object]:
    provider = TracerProvider()
    ledger = SpanLedger()
    provider.add_span_processor(ledger)
    races = 100
    done = threading.Event()
    streamed: list[int] = []
    failures: list[str] = []

    def stream(sim: Simulator) -> None:
        body = first_body("openai.chat", True)
        with httpx.Client(timeout=10) as client:
            while not done.is_set():
                try:
                    with client.stream("POST", url(sim, "openai.chat", True), json=body) as r:
                        for _ in r.iter_raw():
                            pass
                    streamed.append(1)
                except Exception as exc:  # noqa: BLE001 - reported in the result
                    failures.append(repr(exc))

    def toggle() -> None:
        for _ in range(races // 2):
            tooltap.instrument(tracer_provider=provider)
            time.sleep(0.002)
            tooltap.uninstrument()
            time.sleep(0.001)

    with Simulator(fragment=4) as sim:
        readers = [threading.Thread(target=stream, args=(sim,)) for _ in range(4)]
        togglers = [threading.Thread(target=toggle) for _ in range(2)]
        for t in readers + togglers:
            t.start()
        for t in togglers:
            t.join()
        done.set()
        for t in readers:
            t.join()
    tooltap.instrument(tracer_provider=provider)
    tooltap.flush()
    tooltap.uninstrument()
    return {
        "races": races,
        "streams": len(streamed),
        "failures": failures[:3],
        "open": ledger.open_spans(),
        "anomalies": {k: len(v) for k, v in ledger.anomalies().items()},
    }


if __name__ == "__main__":
    mode = sys.argv[1]
    result = {"signal": signal_flush, "slow": slow_exporter, "race": race}[mode]()
    print(json.dumps(result), flush=True)
