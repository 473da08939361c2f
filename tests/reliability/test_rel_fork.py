"""Forks: a process forking while other threads stream (prefork servers, multiprocessing).

The parent is instrumented and keeps ``THREADS`` threads streaming through the real
openai client; meanwhile it forks ``FORKS`` children (CI 100; ``TOOLTAP_LONG=1``: 400),
up to ``AT_ONCE`` alive at a time. Each child makes its first LLM request on a client
of its own and exits. No child may hang: each has ``CHILD_TIMEOUT`` seconds, then
``faulthandler`` writes its stacks and exits it, and the test fails with them (a child
stuck before that is killed, and fails the test too). Each
child also checks that tooltap recorded its call and nothing of its parent's.

The telemetry goes to providers without locks of their own (spans to a list, a no-op
meter: tooltap's own counters still count), so a hang can only be tooltap's.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from opentelemetry.metrics import NoOpMeterProvider
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

import tooltap
from tests.reliability.apps import App
from tests.reliability.support import SimProcess, size

THREADS = 8
FORKS = size("TOOLTAP_FORKS", 100, 400)
AT_ONCE = 4
CHILD_TIMEOUT = 10.0
#: A child's exit codes: it saw its call, it did not, or it saw a call of its parent's.
OK, MISSED, INHERITED = 0, 3, 4


@pytest.fixture(scope="module")
def remote() -> Iterator[SimProcess]:
    sim = SimProcess()
    try:
        yield sim
    finally:
        sim.stop()


class _Spans(SpanExporter):
    """Keeps finished spans in a list (appending takes no lock)."""

    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans.extend(spans)
        return SpanExportResult.SUCCESS


@pytest.fixture
def lockless() -> Iterator[list[tooltap.ToolCall]]:
    """tooltap instrumented into lock-free providers; the calls its listener receives."""
    received: list[tooltap.ToolCall] = []
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_Spans()))

    def listen(event: object) -> None:
        if isinstance(event, tooltap.ToolCallReceived):
            received.append(event.call)

    tooltap.instrument(
        tracer_provider=provider, meter_provider=NoOpMeterProvider(), listeners=[listen]
    )
    try:
        yield received
    finally:
        tooltap.uninstrument()
        provider.shutdown()


def _turn(app: App) -> set[str]:
    """One streamed tool-call turn (the plain stream, not the helpers: openai's parsed
    generics are built lazily under pydantic's own lock, which a fork can leave held); the
    ids of the calls it streamed."""
    resource, request = app._resource()
    ids = set()
    with resource.create(**request, stream=True) as stream:
        for chunk in stream:
            for choice in chunk.choices:
                ids.update(c.id for c in choice.delta.tool_calls or () if c.id)
    return ids


def _child(url: str, seen: list[tooltap.ToolCall], stacks: Path) -> int:
    """The child's life: one streamed tool-call turn; its exit code."""
    with stacks.open("w") as out:
        faulthandler.dump_traceback_later(CHILD_TIMEOUT, exit=True, file=out)
        before = len(seen)
        app = App("openai.chat", url, sync=True, timeout=CHILD_TIMEOUT)
        mine = _turn(app)
        app.client.close()
        tooltap.flush()
        received = seen[before:]
        faulthandler.cancel_dump_traceback_later()
    if not mine or {c.call_id for c in received} != mine:
        return MISSED
    return INHERITED if len(received) != len(mine) else OK


def _streamer(url: str, stop: threading.Event, *, once: bool = False) -> None:
    app = App("openai.chat", url, sync=True, timeout=60)
    try:
        while not stop.is_set():
            _turn(app)
            if once:
                break
    finally:
        app.client.close()


def _reap(children: dict[int, Path], hung: list[str], failed: list[int]) -> None:
    """Wait for one child (the oldest first), recording how it ended. A child stuck before
    its own watchdog runs (in a fork handler) is killed after twice its timeout and counts
    as hung: the parent never waits for ever."""
    pid = next(iter(children))
    stacks = children.pop(pid)
    deadline = time.monotonic() + 2 * CHILD_TIMEOUT
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    if done[0] == 0:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        hung.append(f"Timeout: child {pid} was still running after {2 * CHILD_TIMEOUT:.0f}s")
        return
    code = os.waitstatus_to_exitcode(done[1])
    text = stacks.read_text() if stacks.exists() else ""
    if "Thread" in text or "Timeout" in text:
        hung.append(text)
    elif code != OK:
        failed.append(code)


@pytest.mark.long
def test_prefork_children_never_hang(remote: SimProcess, lockless: list[tooltap.ToolCall]) -> None:
    _streamer(remote.url, threading.Event(), once=True)  # lazy imports and model builds
    stop = threading.Event()
    threads = [
        threading.Thread(target=_streamer, args=(remote.url, stop), daemon=True)
        for _ in range(THREADS)
    ]
    for thread in threads:
        thread.start()
    hung: list[str] = []
    failed: list[int] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        children: dict[int, Path] = {}
        try:
            time.sleep(0.5)  # every streamer mid-request
            for i in range(FORKS):
                if len(children) >= AT_ONCE:
                    _reap(children, hung, failed)
                stacks = Path(tmp) / f"child-{i}.txt"
                pid = os.fork()
                if pid == 0:  # the child: never back into pytest
                    code = 1
                    try:
                        code = _child(remote.url, lockless, stacks)
                    finally:
                        os._exit(code)
                children[pid] = stacks
                time.sleep(0.002 * (i % 7))  # fork at varied points of the streams
            while children:
                _reap(children, hung, failed)
        finally:
            stop.set()
            for thread in threads:
                thread.join(60)
    elapsed = time.monotonic() - started
    where = sorted({"".join(text.splitlines(keepends=True)[2:12]) for text in hung})
    assert not hung, f"{len(hung)} of {FORKS} children hung, at:\n" + "\n".join(where)
    assert not failed, f"children that did not see exactly their own call: {failed}"
    assert lockless, "the parent's streams were recorded"
    assert elapsed < FORKS * CHILD_TIMEOUT
