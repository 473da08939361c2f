"""The body tap, on fixed chunk sequences (httpx ``MockTransport``): chunks reach the app as the
very same objects, an encoded body is parsed as the client decodes it (and not when it does
not), and the app's exceptions pass through.
"""

from __future__ import annotations

import gzip
import itertools
import zlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import brotli
import pytest
import zstandard
from opentelemetry.trace import StatusCode

import tooltap
from tests.telemetry.support import LIBS, Recorder, attrs, sse_chunks

CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"
SSE = (CORPUS / "openai-chat" / "stream_parallel_2calls_gpt35.body").read_bytes()
URL = "https://gateway.internal.example/v1/chat/completions"
REQUEST = {
    "model": "gpt-3.5-turbo",
    "stream": True,
    "messages": [{"role": "user", "content": "w?"}],
    "tools": [
        {
            "type": "function",
            "function": {"name": "get_current_weather", "parameters": {"type": "object"}},
        }
    ],
}


class Boom(Exception):
    """The app's (transport's) own exception."""


def _streams(lib: Any, chunks: list[bytes], fail: BaseException | None) -> tuple[Any, Any]:
    class Sync(lib.SyncByteStream):  # type: ignore[misc]
        def __iter__(self) -> Iterator[bytes]:
            yield from chunks
            if fail is not None:
                raise fail

    class Async(lib.AsyncByteStream):  # type: ignore[misc]
        async def __aiter__(self) -> AsyncIterator[bytes]:
            for chunk in chunks:
                yield chunk
            if fail is not None:
                raise fail

    return Sync, Async


def _client(
    lib_name: str,
    is_async: bool,
    chunks: list[bytes],
    *,
    headers: dict[str, str] | None = None,
    fail: BaseException | None = None,
    status: int = 200,
) -> Any:
    lib = LIBS[lib_name]
    sync_stream, async_stream = _streams(lib, chunks, fail)
    hdrs = {"content-type": "text/event-stream", **(headers or {})}

    def handler(request: Any) -> Any:
        stream = async_stream() if is_async else sync_stream()
        return lib.Response(status, headers=hdrs, stream=stream)

    transport = lib.MockTransport(handler)
    return lib.AsyncClient(transport=transport) if is_async else lib.Client(transport=transport)


async def _read_raw(lib: str, is_async: bool, chunks: list[bytes], **kwargs: Any) -> list[bytes]:
    client = _client(lib, is_async, chunks, **kwargs)
    request = client.build_request("POST", URL, json=REQUEST)
    if is_async:
        async with client:
            response = await client.send(request, stream=True)
            return [c async for c in response.aiter_raw()]
    with client:
        response = client.send(request, stream=True)
        return list(response.iter_raw())


async def _read_decoded(
    lib: str, is_async: bool, chunks: list[bytes], **kwargs: Any
) -> list[bytes]:
    """The body as the SDKs read it: the client's decoded bytes (``iter_bytes``)."""
    client = _client(lib, is_async, chunks, **kwargs)
    request = client.build_request("POST", URL, json=REQUEST)
    if is_async:
        async with client:
            response = await client.send(request, stream=True)
            try:
                return [c async for c in response.aiter_bytes()]
            finally:
                await response.aclose()
    with client:
        response = client.send(request, stream=True)
        try:
            return list(response.iter_bytes())
        finally:
            response.close()


def _encode(encoding: str, body: bytes) -> bytes:
    if encoding in ("gzip", "x-gzip"):
        return gzip.compress(body)
    if encoding == "deflate":
        return zlib.compress(body)
    if encoding == "raw-deflate":
        z = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        return z.compress(body) + z.flush()
    if encoding == "br":
        return bytes(brotli.compress(body))
    return zstandard.ZstdCompressor().compress(body)


CUTS = sse_chunks(SSE, itertools.cycle([1, 7, 64, 3, 500]))


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
async def test_app_sees_the_same_chunk_objects(rec: Recorder, lib: str, is_async: bool) -> None:
    seen = await _read_raw(lib, is_async, CUTS)
    assert len(seen) == len(CUTS) and all(a is b for a, b in zip(seen, CUTS, strict=True))
    expected = tooltap.core.parse_response(SSE, "openai.chat").calls
    assert [e.call for e in rec.of(tooltap.ToolCallReceived)] == list(expected)
    (span,) = rec.inference()
    assert attrs(span)["server.address"] == "gateway.internal.example"
    assert attrs(span)["server.port"] == 443


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw-deflate", "br", "zstd"])
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
async def test_encoded_body_is_parsed_as_the_client_decodes_it(
    rec: Recorder, lib: str, encoding: str, is_async: bool
) -> None:
    packed = _encode(encoding, SSE)
    chunks = sse_chunks(packed, itertools.cycle([5, 50, 1]))
    header = "deflate" if encoding == "raw-deflate" else encoding
    seen = await _read_decoded(lib, is_async, chunks, headers={"content-encoding": header})
    assert b"".join(seen) == SSE
    expected = tooltap.core.parse_response(SSE, "openai.chat").calls
    assert [e.call for e in rec.of(tooltap.ToolCallReceived)] == list(expected)
    (span,) = rec.inference()
    assert not [e for e in span.events if "tooltap.problem.kind" in (e.attributes or {})]
    assert attrs(span).get("tooltap.stream.closed_early") is None
    assert rec.total("tooltap.internal_errors") == 0


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
async def test_encoding_the_client_does_not_decode_is_not_decoded(
    rec: Recorder, lib: str, is_async: bool
) -> None:
    """``x-gzip`` is no encoding httpx decodes: the app gets gzip bytes, tooltap no calls."""
    packed = _encode("x-gzip", SSE)
    seen = await _read_decoded(lib, is_async, [packed], headers={"content-encoding": "x-gzip"})
    assert b"".join(seen) == packed
    assert rec.of(tooltap.ToolCallReceived) == []
    assert len(rec.inference()) == 1


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_client_failing_to_decode_ends_the_span_with_its_error(
    rec: Recorder, is_async: bool
) -> None:
    packed = _encode("gzip", SSE)
    broken = packed[:200] + bytes(b ^ 0xFF for b in packed[200:260]) + packed[260:]
    with pytest.raises(LIBS["httpx2"].DecodingError):
        await _read_decoded("httpx2", is_async, [broken], headers={"content-encoding": "gzip"})
    (span,) = rec.inference()
    assert span.status.status_code is StatusCode.ERROR
    assert attrs(span)["error.type"]
    assert attrs(span).get("tooltap.stream.closed_early") is None


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
async def test_transport_exception_mid_body_is_the_same_object(
    rec: Recorder, lib: str, is_async: bool
) -> None:
    boom = Boom("connection dropped")
    with pytest.raises(Boom) as caught:
        await _read_raw(lib, is_async, CUTS[:40], fail=boom)
    assert caught.value is boom
    (span,) = rec.inference()  # ended exactly once
    assert attrs(span)["error.type"] == "_OTHER"
    assert span.status.status_code.name == "ERROR"
    failed = [e for e in span.events if e.name == "gen_ai.client.attempt.failed"]
    assert len(failed) == 1


async def test_error_status_streamed_body_is_classified_when_read(rec: Recorder) -> None:
    body = (
        b'{"error": {"message": "You exceeded your current quota", "type": "insufficient_quota",'
        b' "code": "insufficient_quota"}}'
    )
    seen = await _read_raw("httpx2", False, [body[:10], body[10:]], status=429,
                           headers={"content-type": "application/json"})  # fmt: skip
    assert b"".join(seen) == body
    (span,) = rec.inference()
    assert attrs(span)["error.type"] == "insufficient_balance"
    assert rec.total("tooltap.provider.errors", error__type="insufficient_balance",
                     tooltap__retryable=False) == 1  # fmt: skip


def test_feed_failure_is_contained_and_counted(
    rec: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tooltap._telemetry.operation import Operation

    def explode(self: Operation, calls: Any) -> None:
        raise RuntimeError("tooltap bug")

    monkeypatch.setattr(Operation, "calls_received", explode)
    client = _client("httpx", False, CUTS)
    with client:
        response = client.send(client.build_request("POST", URL, json=REQUEST), stream=True)
        seen = list(response.iter_raw())
    assert all(a is b for a, b in zip(seen, CUTS, strict=True))
    assert rec.total("tooltap.internal_errors", tooltap__component="tap_stream") == 1
    assert len(rec.inference()) == 1  # the operation still ends


def test_elapsed_and_stream_type_still_work(rec: Recorder) -> None:
    lib = LIBS["httpx2"]
    client = _client("httpx2", False, CUTS)
    with client:
        response = client.send(client.build_request("POST", URL, json=REQUEST), stream=True)
        assert isinstance(response.stream, lib.SyncByteStream)
        response.read()
    assert response.elapsed.total_seconds() >= 0
    assert response.content == SSE


def test_the_sync_loop_is_a_generator(rec: Recorder) -> None:
    client = _client("httpx2", False, CUTS)
    with client:
        response = client.send(client.build_request("POST", URL, json=REQUEST), stream=True)
        loop = iter(response.stream)
        assert type(loop).__name__ == "generator"
        assert [c for c in loop] == CUTS
    assert len(rec.inference()) == 1


def test_an_interrupt_in_tooltaps_step_reaches_the_app_and_ends_the_span_once(
    rec: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only an ``Exception`` in tooltap's step is contained; a ``KeyboardInterrupt`` there is
    the user's, and goes on to the app like one raised anywhere else: the app stopped the
    stream (``cancelled``), not the provider."""
    from tooltap._telemetry.operation import Operation

    def interrupted(self: Operation, calls: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(Operation, "calls_received", interrupted)
    client = _client("httpx2", False, CUTS)
    seen: list[bytes] = []
    with client, pytest.raises(KeyboardInterrupt):
        response = client.send(client.build_request("POST", URL, json=REQUEST), stream=True)
        seen.extend(response.iter_raw())
    assert 0 < len(seen) < len(CUTS)  # the chunk that completed a call was not handed on
    (span,) = rec.inference()
    assert span.status.status_code.name == "UNSET"
    assert attrs(span)["tooltap.outcome"] == "cancelled"
    assert rec.total("tooltap.provider.errors") == 0
    assert rec.total("tooltap.internal_errors") == 0


async def test_the_async_loop_is_an_async_generator(rec: Recorder) -> None:
    client = _client("httpx2", True, CUTS)
    async with client:
        request = client.build_request("POST", URL, json=REQUEST)
        response = await client.send(request, stream=True)
        loop = response.stream.__aiter__()
        assert type(loop).__name__ == "async_generator"
        assert [c async for c in loop] == CUTS
        assert [c async for c in loop] == []  # ended: settled once, nothing more
    assert len(rec.inference()) == 1


class _Stop(BaseException):
    """A BaseException that is not an Exception (as KeyboardInterrupt, without stopping
    the event loop)."""


async def test_a_base_exception_in_tooltaps_async_step_reaches_the_app_once(
    rec: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tooltap._telemetry.operation import Operation

    def interrupted(self: Operation, calls: Any) -> None:
        raise _Stop

    monkeypatch.setattr(Operation, "calls_received", interrupted)
    client = _client("httpx2", True, CUTS)
    seen: list[bytes] = []
    async with client:
        response = await client.send(client.build_request("POST", URL, json=REQUEST), stream=True)
        with pytest.raises(_Stop):
            async for chunk in response.aiter_raw():
                seen.append(chunk)
        await response.aclose()
    assert 0 < len(seen) < len(CUTS)  # the chunk that completed a call was not handed on
    (span,) = rec.inference()
    assert span.status.status_code.name == "UNSET"
    assert attrs(span)["tooltap.outcome"] == "cancelled"
    assert rec.total("tooltap.provider.errors") == 0
    assert rec.total("tooltap.internal_errors") == 0


async def test_closing_the_async_loop_settles_once_as_closed(rec: Recorder) -> None:
    client = _client("httpx2", True, CUTS)
    async with client:
        response = await client.send(client.build_request("POST", URL, json=REQUEST), stream=True)
        loop = response.stream.__aiter__()
        assert await loop.__anext__() == CUTS[0]
        await loop.aclose()  # type: ignore[attr-defined]
        await loop.aclose()  # type: ignore[attr-defined]
        assert [c async for c in loop] == []
        assert len(rec.inference()) == 1
        await response.aclose()
    (span,) = rec.inference()
    assert attrs(span)["tooltap.stream.closed_early"] is True
