"""Every way a streamed body can end ends its inference span exactly once (real sockets).

Exhausted, closed early (``break`` / ``close()``), broken by an exception,
abandoned and garbage-collected.
"""

from __future__ import annotations

import gc
import logging
from contextlib import aclosing, closing
from typing import Any

import pytest

from tests.telemetry.support import LIBS, Recorder, attrs, first_body, url
from tooltap._quietly import run_deferred
from tooltap.simulator import Fault, Simulator

DIALECT = "anthropic.messages"


def _open(lib: str, sim: Simulator) -> tuple[Any, Any]:
    client = LIBS[lib].Client(timeout=5)
    request = client.build_request("POST", url(sim, DIALECT, True), json=first_body(DIALECT, True))
    return client, client.send(request, stream=True)


async def _aopen(lib: str, sim: Simulator) -> tuple[Any, Any]:
    client = LIBS[lib].AsyncClient(timeout=5)
    request = client.build_request("POST", url(sim, DIALECT, True), json=first_body(DIALECT, True))
    return client, await client.send(request, stream=True)


def _one_span(rec: Recorder) -> dict[str, Any]:
    (span,) = rec.inference()
    return attrs(span)


@pytest.fixture(autouse=True)
def _no_double_end(caplog: pytest.LogCaptureFixture) -> Any:
    caplog.set_level(logging.WARNING, logger="opentelemetry")
    yield
    assert not [r for r in caplog.records if "ended span" in r.getMessage()]


@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
def test_early_break_then_close(rec: Recorder, sim: Simulator, lib: str) -> None:
    client, response = _open(lib, sim)
    with closing(client):
        for i, _ in enumerate(response.iter_raw(1)):
            assert rec.inference() == []  # still open while the app reads
            if i == 2:
                break
        assert len(rec.inference()) == 1  # the iterator went away: httpx closed the body
        response.close()
    a = _one_span(rec)
    assert a["tooltap.stream.closed_early"] is True
    assert "error.type" not in a
    assert rec.total("tooltap.stream.problems") == 0  # the app stopped: not a truncation


@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
def test_close_without_reading(rec: Recorder, sim: Simulator, lib: str) -> None:
    client, response = _open(lib, sim)
    with closing(client):
        response.close()
        response.close()
    assert _one_span(rec)["tooltap.stream.closed_early"] is True


@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
def test_abandoned_and_collected(rec: Recorder, sim: Simulator, lib: str) -> None:
    client, response = _open(lib, sim)
    with closing(client):
        next(response.iter_raw())
        del response
        gc.collect()
        run_deferred()  # what the collection left for a safe point
        assert len(rec.inference()) == 1
    assert _one_span(rec)["tooltap.stream.closed_early"] is True


def test_exhausted_then_closed(rec: Recorder, sim: Simulator) -> None:
    client, response = _open("httpx2", sim)
    with closing(client):
        assert b"message_stop" in response.read()
        response.close()
    a = _one_span(rec)
    assert "tooltap.stream.closed_early" not in a and "error.type" not in a


@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
def test_connection_reset_mid_body(rec: Recorder, sim: Simulator, lib: str) -> None:
    sim.inject(Fault("reset", at=300), dialect=DIALECT)
    client, response = _open(lib, sim)
    module = LIBS[lib]
    with closing(client), pytest.raises(module.TransportError):
        response.read()
    a = _one_span(rec)
    assert a["error.type"] == "connection_error"
    (span,) = rec.inference()
    assert span.status.status_code.name == "ERROR"


async def test_async_break_and_aclose(rec: Recorder, sim: Simulator) -> None:
    client, response = await _aopen("httpx2", sim)
    async with aclosing(client):
        async for _ in response.aiter_raw(1):
            break
        await response.aclose()
    assert _one_span(rec)["tooltap.stream.closed_early"] is True


async def test_async_abandoned_and_collected(rec: Recorder, sim: Simulator) -> None:
    client, response = await _aopen("httpx", sim)
    async with aclosing(client):
        del response
        gc.collect()
        run_deferred()  # what the collection left for a safe point
        assert len(rec.inference()) == 1
    assert _one_span(rec)["tooltap.stream.closed_early"] is True


async def test_async_truncated_stream_is_a_failure(rec: Recorder, sim: Simulator) -> None:
    sim.inject(Fault("truncate_args"), dialect=DIALECT)
    client, response = await _aopen("httpx2", sim)
    async with aclosing(client):
        await response.aread()
    a = _one_span(rec)
    assert a["error.type"] == "truncated_stream"
    assert rec.total("tooltap.tool_calls", tooltap__outcome="truncated_json") == 1
    assert rec.total("tooltap.stream.problems", tooltap__problem__kind="truncated_stream") == 1
    assert len(rec.tools()) == 0  # the complete first call is still open, waiting for a result
