"""Parser micro-benchmark: tooltap's SSE decoder and reducers vs the SDKs' own decoding.

Every decoder gets the same bytes, chunked as the transport delivered them: the
workload's streams recorded from the simulator, and the recorded provider corpus
(one chunk per event). Figures are MB/s and events/s of client CPU, best of a few runs.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from tooltap._core.dialects import dialect as dialect_of
from tooltap._core.model import Limits
from tooltap._core.sse import SSEEvent, SSEParser
from tooltap._core.stream import FAST_PATHS_ENV
from tooltap.core import StreamParser

__all__ = ["Stream", "corpus_streams", "fast_path_gains", "measure_parsers"]

#: The StreamParser rows with the dialects' fast paths on, and off (``TOOLTAP_FAST_PATHS=0``).
FAST_PATHS: Final = "tooltap StreamParser"
FULL_PATH: Final = "tooltap StreamParser (full path)"

_CORPUS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "corpus"
_FOLDERS = {
    "openai-chat": "openai.chat",
    "openai-responses": "openai.responses",
    "anthropic": "anthropic.messages",
    "google": "google.genai",
}


@dataclass(frozen=True)
class Stream:
    """One dialect's response bodies, each as the chunks it arrived in."""

    name: str
    dialect: str
    bodies: tuple[tuple[bytes, ...], ...]

    @property
    def size(self) -> int:
        """Bytes in all bodies."""
        return sum(len(chunk) for body in self.bodies for chunk in body)

    @property
    def events(self) -> int:
        """SSE events in all bodies."""
        return sum(len(_events_of(body)) for body in self.bodies)


def corpus_streams() -> list[Stream]:
    """The recorded SSE corpus, per dialect: every 200 body, one chunk per event."""
    bodies: dict[str, list[tuple[bytes, ...]]] = {}
    for meta in sorted(_CORPUS.glob("*/*.meta.json")):
        info = json.loads(meta.read_text())
        if not info.get("stream") or info.get("http_status", 200) != 200:
            continue
        body = (meta.parent / meta.name.replace(".meta.json", ".body")).read_bytes()
        if not body.rstrip().endswith((b"}", b"]", b"[DONE]")):
            continue  # cut on purpose: the SDK decoders would raise on it
        blocks = body.replace(b"\r\n", b"\n").split(b"\n\n")
        chunks = tuple(b + b"\n\n" for b in blocks if b.strip())
        bodies.setdefault(_FOLDERS[meta.parent.name], []).append(chunks)
    return [Stream("corpus", d, tuple(b)) for d, b in sorted(bodies.items())]


def _best(run: Callable[[], object], budget: float) -> float:
    """Best CPU seconds of one ``run()``, repeated for about ``budget`` seconds (3 at least)."""
    best, spent, count = float("inf"), 0.0, 0
    while count < 3 or spent < budget:
        start = time.process_time()
        run()
        took = time.process_time() - start
        best, spent, count = min(best, took), spent + took, count + 1
    return best


@contextmanager
def _fast_paths(on: bool) -> Iterator[None]:
    """``TOOLTAP_FAST_PATHS`` unset (on) or ``0`` (off) while a parser is made."""
    before = os.environ.pop(FAST_PATHS_ENV, None)
    if not on:
        os.environ[FAST_PATHS_ENV] = "0"
    try:
        yield
    finally:
        os.environ.pop(FAST_PATHS_ENV, None)
        if before is not None:
            os.environ[FAST_PATHS_ENV] = before


def _events_of(body: tuple[bytes, ...]) -> list[SSEEvent]:
    parser = SSEParser()
    events = [e for chunk in body for e in parser.feed(chunk)]
    return events + parser.close()


def _ours(stream: Stream) -> dict[str, Callable[[], object]]:
    dialect, bodies = stream.dialect, stream.bodies
    decoded = [_events_of(body) for body in bodies]
    reducer_type = dialect_of(dialect).reducer

    def sse() -> None:
        for body in bodies:
            parser = SSEParser()
            for chunk in body:
                parser.feed(chunk)
            parser.close()

    def reducer() -> None:
        for events in decoded:
            folding = reducer_type(Limits())
            for event in events:
                folding.event(event)
            folding.finish()

    def full(fast: bool) -> Callable[[], object]:
        def run() -> None:
            for body in bodies:
                with _fast_paths(fast):  # off: every event through SSE events and JSON
                    parser = StreamParser(dialect)
                for chunk in body:
                    parser.feed(chunk)
                parser.close()

        return run

    return {
        "tooltap SSEParser": sse,
        "tooltap reducer (decoded events)": reducer,
        FULL_PATH: full(False),
        FAST_PATHS: full(True),
    }


def _sdks(stream: Stream) -> dict[str, Callable[[], object]]:
    """Each SDK's own decoding of the same bytes: SSE, then ``json.loads`` per event."""
    bodies = stream.bodies
    runs: dict[str, Callable[[], object]] = {}
    if stream.dialect.startswith("openai"):
        from openai._streaming import SSEDecoder as OpenAIDecoder

        def openai_sdk() -> None:
            for body in bodies:
                for sse in OpenAIDecoder().iter_bytes(iter(body)):
                    if not sse.data.startswith("[DONE]"):
                        sse.json()

        runs["openai SSEDecoder + json"] = openai_sdk
    elif stream.dialect == "anthropic.messages":
        from anthropic._streaming import SSEDecoder as AnthropicDecoder

        def anthropic_sdk() -> None:
            for body in bodies:
                for sse in AnthropicDecoder().iter_bytes(iter(body)):
                    if sse.event != "ping":
                        sse.json()

        runs["anthropic SSEDecoder + json"] = anthropic_sdk
    elif stream.dialect == "google.genai":

        def google_sdk() -> None:
            for body in bodies:
                for _ in _google_segments(body):
                    pass

        runs["google-genai segments"] = google_sdk
    return runs


def _google_segments(body: tuple[bytes, ...]) -> Iterator[Any]:
    import httpx2
    from google.genai._api_client import HttpResponse

    response = httpx2.Response(200, content=iter(body))
    yield from HttpResponse({}, response_stream=response).segments()


def measure_parsers(streams: list[Stream], budget: float) -> list[dict[str, Any]]:
    """One row per (stream, decoder): MB/s and events/s of CPU."""
    rows: list[dict[str, Any]] = []
    for stream in streams:
        size, events = stream.size, stream.events
        for name, run in {**_ours(stream), **_sdks(stream)}.items():
            run()  # warm: imports, compiled patterns
            seconds = _best(run, budget)
            rows.append(
                {
                    "stream": stream.name,
                    "dialect": stream.dialect,
                    "decoder": name,
                    "bytes": size,
                    "events": events,
                    "mb_per_s": size / seconds / 1e6,
                    "events_per_s": events / seconds,
                    "us_per_event": seconds * 1e6 / events,
                }
            )
    return rows


def fast_path_gains(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per stream and dialect with a fast path: µs/event with the fast paths on and off
    (``TOOLTAP_FAST_PATHS=0``), and how many times faster on is."""
    by_key = {(r["stream"], r["dialect"], r["decoder"]): r for r in rows}
    gains = []
    for (stream, dialect, decoder), on in by_key.items():
        off = by_key.get((stream, dialect, FULL_PATH))
        if decoder != FAST_PATHS or off is None or not hasattr(dialect_of(dialect).reducer, "fast"):
            continue
        gains.append(
            {
                "stream": stream,
                "dialect": dialect,
                "on_us_per_event": on["us_per_event"],
                "off_us_per_event": off["us_per_event"],
                "speedup": off["us_per_event"] / on["us_per_event"],
            }
        )
    return gains
