"""An app that misuses one response body from two threads or two tasks, bare or instrumented.

``python tap_concurrency_app.py LIB bare|tooltap`` runs every scenario over a body whose
second read blocks until released (an httpx/httpx2 ``MockTransport``): while one reader
is blocked inside it, another thread or task closes the body's iterator, closes the
response, or reads too. Prints one JSON object: for each scenario, what each side saw
(chunks, exception type and message) and, instrumented, how many inference spans ended.
The test runs it in a subprocess under ``PYTHONMALLOC=debug`` and compares both modes.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import tooltap
from tooltap._quietly import run_deferred

CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"
SSE = (CORPUS / "anthropic" / "stream_text_plus_2_tool_use.body").read_bytes()
CHUNKS = [block + b"\n\n" for block in SSE.split(b"\n\n") if block.strip()]
URL = "https://api.anthropic.com/v1/messages"
REQUEST = {"model": "claude-sonnet-4-5", "max_tokens": 64, "stream": True,
           "messages": [{"role": "user", "content": "weather?"}]}  # fmt: skip
WAIT = 10.0


def _describe(exc: BaseException | None) -> list[str] | None:
    return None if exc is None else [type(exc).__name__, str(exc)]


class Gate:
    """The body's second read blocks until ``release()``; ``entered`` says a reader is there."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.open = threading.Event()
        self.aentered = asyncio.Event()
        self.aopen = asyncio.Event()

    def release(self) -> None:
        self.open.set()
        self.aopen.set()


def _client(lib: Any, gate: Gate, is_async: bool) -> Any:
    class Sync(lib.SyncByteStream):  # type: ignore[misc]
        def __iter__(self) -> Iterator[bytes]:
            yield CHUNKS[0]
            gate.entered.set()
            gate.open.wait(WAIT)
            yield from CHUNKS[1:]

    class Async(lib.AsyncByteStream):  # type: ignore[misc]
        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield CHUNKS[0]
            gate.aentered.set()
            await asyncio.wait_for(gate.aopen.wait(), WAIT)
            for chunk in CHUNKS[1:]:
                yield chunk

    def handler(request: Any) -> Any:
        stream = Async() if is_async else Sync()
        return lib.Response(200, headers={"content-type": "text/event-stream"}, stream=stream)

    transport = lib.MockTransport(handler)
    return lib.AsyncClient(transport=transport) if is_async else lib.Client(transport=transport)


def _sync(lib: Any, other: Callable[[Any, Iterator[bytes]], None]) -> dict[str, Any]:
    """Reader thread blocked in ``next(it)``; ``other(response, it)`` runs meanwhile."""
    gate = Gate()
    seen: dict[str, Any] = {"reader": None, "other": None}
    with _client(lib, gate, False) as client:
        response = client.send(client.build_request("POST", URL, json=REQUEST), stream=True)
        it = iter(response.stream)
        chunks = [next(it)]

        def read() -> None:
            try:
                chunks.append(next(it))
            except BaseException as exc:  # noqa: BLE001 - what the app would see
                seen["reader"] = _describe(exc)

        reader = threading.Thread(target=read)
        reader.start()
        gate.entered.wait(WAIT)
        try:
            other(response, it)
        except BaseException as exc:  # noqa: BLE001
            seen["other"] = _describe(exc)
        gate.release()
        reader.join(WAIT)
        try:
            chunks.extend(it)
        except BaseException as exc:  # noqa: BLE001
            seen["rest"] = _describe(exc)
        response.close()
    seen["chunks"] = len(chunks)
    return seen


async def _async(
    lib: Any, other: Callable[[Any, AsyncIterator[bytes]], Awaitable[Any]]
) -> dict[str, Any]:
    """Reader task blocked in ``__anext__``; ``other(response, it)`` runs in another task."""
    gate = Gate()
    seen: dict[str, Any] = {"reader": None, "other": None}
    async with _client(lib, gate, True) as client:
        response = await client.send(client.build_request("POST", URL, json=REQUEST), stream=True)
        it = response.stream.__aiter__()
        chunks = [await it.__anext__()]

        async def read() -> None:
            try:
                chunks.append(await it.__anext__())
            except BaseException as exc:  # noqa: BLE001
                seen["reader"] = _describe(exc)

        async def meanwhile() -> None:
            try:
                await other(response, it)
            except BaseException as exc:  # noqa: BLE001
                seen["other"] = _describe(exc)

        reader = asyncio.ensure_future(read())
        await asyncio.wait_for(gate.aentered.wait(), WAIT)
        await asyncio.ensure_future(meanwhile())
        gate.release()
        await asyncio.wait_for(reader, WAIT)
        try:
            chunks.extend([c async for c in it])
        except BaseException as exc:  # noqa: BLE001
            seen["rest"] = _describe(exc)
        await response.aclose()
    seen["chunks"] = len(chunks)
    return seen


async def _anext(response: Any, it: Any) -> Any:
    return await it.__anext__()


async def _aclose(response: Any, it: Any) -> Any:
    return await it.aclose()


async def _aclose_response(response: Any, it: Any) -> Any:
    return await response.aclose()


SYNC: dict[str, Callable[[Any, Any], Any]] = {
    "close the iterator while a reader is blocked": lambda response, it: it.close(),
    "close the response while a reader is blocked": lambda response, it: response.close(),
    "two concurrent readers": lambda response, it: next(it),
}
ASYNC: dict[str, Callable[[Any, Any], Awaitable[Any]]] = {
    "aclose the iterator while a reader task waits": _aclose,
    "aclose the response while a reader task waits": _aclose_response,
    "two concurrent reader tasks": _anext,
}


def main() -> None:
    lib = {"httpx": httpx, "httpx2": httpx2}[sys.argv[1]]
    instrumented = sys.argv[2] == "tooltap"
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    if instrumented:
        tooltap.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    out: dict[str, Any] = {}
    scenarios: list[tuple[str, Callable[[], dict[str, Any]]]] = [
        (name, lambda other=other: _sync(lib, other)) for name, other in SYNC.items()
    ]
    scenarios += [
        (name, lambda other=other: asyncio.run(_async(lib, other))) for name, other in ASYNC.items()
    ]
    for name, run in scenarios:
        exporter.clear()
        result = run()
        gc.collect()
        run_deferred()  # what the collection left for a safe point
        if instrumented:
            result["spans"] = len(exporter.get_finished_spans())
        out[name] = result
    if instrumented:
        tooltap.uninstrument()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
