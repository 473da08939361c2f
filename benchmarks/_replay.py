"""Recorded responses for the instruction counts: every counted process reads the same chunks.

Under valgrind the client runs some fifty times slower than the simulator, so the kernel
hands it several events per read, and how many depends on the machine's load at that
moment: two counts of the same code then differ by millions of instructions (the SDKs and
tooltap both do less per event when events arrive together). ``record`` runs a case once,
outside valgrind, over the real socket, and keeps each response (status, headers, body),
an event stream cut into one chunk per event: what a client reads from a provider that
generates tokens more slowly than the client parses them, the common case (the simulator
sends as fast as it can, so how the recording's own reads fell says little).
``install`` then makes the httpx/httpx2 transports of a counted process serve those
recordings, with fresh tool-call and response ids for every response (the same ids
again would be history re-sends and replayed responses to tooltap, other paths). What it
leaves out is the socket and HTTP/1.1 work, which is the same with and without tooltap.
"""

from __future__ import annotations

import importlib
import pickle
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

__all__ = ["install", "record"]

_LIBS = ("httpx", "httpx2")
#: Tool-call and response ids: prefixed ones, and Gemini's bare ``id`` / ``responseId`` values.
_IDS = re.compile(
    rb"(?:toolu_|call_|fc_|msg_|resp_|chatcmpl-)[A-Za-z0-9]{16,}"
    rb'|"(?:id|responseId)": ?"[A-Za-z0-9]{8,}(?=")'
)
#: (method, path, streamed) -> (status, headers, chunks)
Recording = dict[tuple[str, str, bool], tuple[int, list[tuple[str, str]], list[bytes]]]


def _by_event(chunks: list[bytes]) -> list[bytes]:
    """An event stream's bytes, one chunk per event (what is left after the last, last)."""
    events = b"".join(chunks).split(b"\n\n")
    return [e + b"\n\n" for e in events[:-1]] + ([events[-1]] if events[-1] else [])


def _key(request: Any) -> tuple[str, str, bool]:
    body = request.content
    streamed = b'"stream":true' in body or b'"stream": true' in body or "stream" in request.url.path
    return request.method, request.url.path, streamed


def record(case: Any, url: str, path: Path) -> None:
    """Run ``case`` once against the simulator at ``url``; save what the client read."""
    recording: Recording = {}
    undo = []
    for name in _LIBS:
        lib = importlib.import_module(name)
        for transport, method in ((lib.HTTPTransport, "handle_request"),
                                  (lib.AsyncHTTPTransport, "handle_async_request")):  # fmt: skip
            original = getattr(transport, method)
            setattr(transport, method, _recording(lib, original, recording))
            undo.append((transport, method, original))
    try:
        client = case.make(url)
        case.run(client)
        from ._cases import close_client

        close_client(case, client)
    finally:
        for transport, method, original in undo:
            setattr(transport, method, original)
    for key, (status, headers, chunks) in recording.items():
        sse = any(
            k.lower() == "content-type" and v.startswith("text/event-stream") for k, v in headers
        )
        recording[key] = (status, headers, _by_event(chunks) if sse else chunks)
    path.write_bytes(pickle.dumps(recording))


def _recording(lib: Any, original: Any, recording: Recording) -> Any:
    """A transport method like ``original`` that also keeps each response's chunks."""

    class Taken(lib.SyncByteStream, lib.AsyncByteStream):  # type: ignore[misc]
        def __init__(self, inner: Any, chunks: list[bytes]) -> None:
            self.inner, self.chunks = inner, chunks

        def __iter__(self) -> Iterator[bytes]:
            for chunk in self.inner:
                self.chunks.append(chunk)
                yield chunk

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self.inner:
                self.chunks.append(chunk)
                yield chunk

        def close(self) -> None:
            self.inner.close()

        async def aclose(self) -> None:
            await self.inner.aclose()

    def taken(request: Any, response: Any) -> Any:
        chunks: list[bytes] = []
        recording[_key(request)] = (response.status_code, response.headers.multi_items(), chunks)
        response.stream = Taken(response.stream, chunks)
        return response

    if original.__name__ == "handle_async_request":

        async def handle_async(self: Any, request: Any) -> Any:
            return taken(request, await original(self, request))

        return handle_async

    def handle(self: Any, request: Any) -> Any:
        return taken(request, original(self, request))

    return handle


def install(path: Path) -> None:
    """Serve the recordings at ``path`` from every httpx/httpx2 transport of this process."""
    recording: Recording = pickle.loads(path.read_bytes())
    with_ids = {key: [i for i, c in enumerate(chunks) if _IDS.search(c)]
                for key, (_, _, chunks) in recording.items()}  # fmt: skip
    serial = [0]

    def replayed(request: Any) -> tuple[int, list[tuple[str, str]], list[bytes]]:
        key = _key(request)
        status, headers, chunks = recording[key]
        serial[0] += 1
        renamed: dict[bytes, bytes] = {}  # the same id again in this response: the same new one

        def fresh(match: re.Match[bytes]) -> bytes:
            old = match.group(0)
            if old not in renamed:  # 6 digits of response, 2 of id
                tag = b"%06d%02d" % (serial[0] % 10**6, len(renamed) % 100)
                renamed[old] = old[:-8] + tag
            return renamed[old]

        chunks = list(chunks)
        for i in with_ids[key]:
            chunks[i] = _IDS.sub(fresh, chunks[i])
        return status, headers, chunks

    for name in _LIBS:
        lib = importlib.import_module(name)

        class Chunks(lib.SyncByteStream, lib.AsyncByteStream):  # type: ignore[misc,name-defined]
            def __init__(self, chunks: list[bytes]) -> None:
                self.chunks = chunks

            def __iter__(self) -> Iterator[bytes]:
                return iter(self.chunks)

            async def __aiter__(self) -> AsyncIterator[bytes]:
                for chunk in self.chunks:
                    yield chunk

        def handle(self: Any, request: Any, lib: Any = lib, chunks_type: Any = Chunks) -> Any:
            status, headers, chunks = replayed(request)
            return lib.Response(
                status, headers=headers, stream=chunks_type(chunks), request=request
            )

        async def handle_async(
            self: Any, request: Any, lib: Any = lib, chunks_type: Any = Chunks
        ) -> Any:
            status, headers, chunks = replayed(request)
            return lib.Response(
                status, headers=headers, stream=chunks_type(chunks), request=request
            )

        lib.HTTPTransport.handle_request = handle
        lib.AsyncHTTPTransport.handle_async_request = handle_async
