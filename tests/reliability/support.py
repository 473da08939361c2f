"""Shared pieces of the reliability suite: run sizes, a byte-replay server.

Sizes: the suite runs at CI size by default. ``TOOLTAP_LONG=1`` switches to the long run
(tens of thousands of fuzz examples, 500 concurrent streams, 10,000 sequential turns);
each size can also be set on its own (``TOOLTAP_FUZZ_EXAMPLES``, ``TOOLTAP_LOAD_STREAMS``,
``TOOLTAP_LOAD_THREAD_STREAMS``, ``TOOLTAP_TURNS``).
"""

from __future__ import annotations

import gc
import json
import os
import socket
import subprocess
import sys
import threading
import tracemalloc
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

import tooltap
from tests.recorder import Recorder as Recorder  # the suite's recorder, re-exported
from tests.recorder import attrs as attrs
from tooltap._quietly import run_deferred

LONG = os.environ.get("TOOLTAP_LONG", "") == "1"


def size(name: str, ci: int, long: int) -> int:
    """A run size: env ``name`` if set, else the long or the CI value."""
    raw = os.environ.get(name)
    return int(raw) if raw else (long if LONG else ci)


FUZZ_EXAMPLES = size("TOOLTAP_FUZZ_EXAMPLES", 200, 20_000)
LOAD_STREAMS = size("TOOLTAP_LOAD_STREAMS", 200, 500)
THREAD_STREAMS = size("TOOLTAP_LOAD_THREAD_STREAMS", 12, 60)  # per thread, 8 threads
TURNS = size("TOOLTAP_TURNS", 1_000, 10_000)

#: ``apps(dialect, base_url, sync, **options)`` -> a cached ``tests.reliability.apps.App``.
Apps = Callable[..., Any]


def watched(recorder: Recorder, requests: int) -> int:
    """Inference spans ended; a stream an SDK left unclosed after raising ends when collected."""
    count = len(recorder.inference())
    if count < requests:
        gc.collect()
        run_deferred()  # what the collection left for a safe point
        count = len(recorder.inference())
    return count


# --- a loopback server that replays fixed bytes --------------------------------------------


@dataclass
class Canned:
    """One response: status, headers and the body as the chunks to write (one write each)."""

    status: int
    headers: list[tuple[str, str]]
    chunks: list[bytes]
    #: If set, the server waits for it (10 s at most) after the first chunk.
    resume: threading.Event | None = None


@dataclass
class Seen:
    """One request the replay server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class _ReplayHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ReplayServer

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        """Silent."""

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length)
        self.server.seen.append(
            Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        )
        canned = self.server.canned
        lines = [f"HTTP/1.1 {canned.status} Canned"]
        lines += [f"{k}: {v}" for k, v in canned.headers]
        lines.append("transfer-encoding: chunked")
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        for i, chunk in enumerate(canned.chunks):
            if chunk:
                self.wfile.write(b"%x\r\n%b\r\n" % (len(chunk), chunk))
            if i == 0 and canned.resume is not None:
                self.wfile.flush()
                canned.resume.wait(10)
        self.wfile.write(b"0\r\n\r\n")

    do_GET = do_POST


class ReplayServer(ThreadingHTTPServer):
    """Answers every request on ``127.0.0.1`` with ``canned``, written chunk by chunk."""

    daemon_threads = True
    block_on_close = False

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _ReplayHandler)
        self.canned = Canned(200, [], [])
        self.seen: list[Seen] = []
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def start(self) -> ReplayServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        self._thread.join()


def cut(body: bytes, sizes: Iterator[int]) -> list[bytes]:
    """``body`` in consecutive chunks of the given sizes (the last one takes the rest)."""
    out, pos = [], 0
    for n in sizes:
        if pos >= len(body):
            break
        out.append(body[pos : pos + n])
        pos += n
    if pos < len(body):
        out.append(body[pos:])
    return out


# --- app-visible values -------------------------------------------------------------------


def dump(value: Any) -> Any:
    """A comparable, JSON-like picture of an SDK object (pydantic models dumped)."""
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump):
        return {"type": _qualname(type(value)), "value": model_dump(mode="json", warnings=False)}
    if isinstance(value, (list, tuple)):
        return [dump(v) for v in value]
    if isinstance(value, dict):
        return {str(k): dump(v) for k, v in value.items()}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return {"type": _qualname(type(value)), "repr": repr(value)}


def failure(exc: BaseException) -> dict[str, Any]:
    """What the app can see of an exception: its exact type, message, status and body."""
    out: dict[str, Any] = {"type": _qualname(type(exc)), "message": str(exc)}
    for name in ("status_code", "code", "body"):
        if hasattr(exc, name):
            out[name] = dump(getattr(exc, name))
    return out


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def canonical(value: Any) -> str:
    """Stable JSON text, to compare pictures and report differences readably."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)


# --- memory -------------------------------------------------------------------------------


@contextmanager
def traced_memory() -> Iterator[None]:
    """tracemalloc on for the block (off again after, even on failure)."""
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()


#: Allocation sites (innermost frame) left out of ``settled_memory``: the event loop's and
#: thread pools' own structures and weak sets, sized by the peak concurrency they have
#: seen, not by the work done. (What a weak reference keeps alive is still counted.)
MACHINERY = (
    "*/asyncio/*",
    "*/selectors.py",
    "*/anyio/*",
    "*/concurrent/futures/*",
    "*/threading.py",
    "*/weakref.py",
    "*/_weakrefset.py",
)


def settled_memory() -> int:
    """Bytes traced by tracemalloc right now, after a full garbage collection, leaving out
    the allocations made by the event loop and thread-pool machinery (``MACHINERY``)."""
    for _ in range(3):
        gc.collect()
    snapshot = tracemalloc.take_snapshot()
    kept = snapshot.filter_traces([tracemalloc.Filter(False, pattern) for pattern in MACHINERY])
    return sum(stat.size for stat in kept.statistics("filename"))


# --- a simulator in its own process -------------------------------------------------------


class SimProcess:
    """``python -m tooltap.simulator`` in a child process: its threads and memory are its own."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tooltap.simulator", "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if "listening on " not in line:
            self.stop()
            raise RuntimeError(f"simulator did not start: {line!r}")
        self.url = line.rsplit(" ", 1)[1].strip()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


class CountingExporter(SpanExporter):
    """Counts the spans it is given by operation name, and keeps nothing else."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: Counter[str] = Counter()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self.lock:
            for span in spans:
                self.counts[str((span.attributes or {}).get("gen_ai.operation.name"))] += 1
        return SpanExportResult.SUCCESS


@dataclass
class Lean:
    """Providers that retain nothing per span or per call: for memory measurements."""

    spans: CountingExporter = field(default_factory=CountingExporter)
    reader: InMemoryMetricReader = field(default_factory=InMemoryMetricReader)

    def __post_init__(self) -> None:
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def instrument(self, **options: Any) -> None:
        tooltap.instrument(
            tracer_provider=self.tracer_provider, meter_provider=self.meter_provider, **options
        )

    def shutdown(self) -> None:
        tooltap.uninstrument()
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()
