"""The app sees exactly what it sees without tooltap: same objects, items, bytes and errors.

Each comparison runs the same request twice against a fresh, identically seeded
simulator (so ids match): once with tooltap uninstrumented, once instrumented.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

import tooltap
from tests.sdk.drivers import DRIVERS, USER, drain, entered, resolve
from tooltap.simulator import Fault, Simulator

MODES = [
    pytest.param(sync, stream, id=f"{'sync' if sync else 'async'}-{'stream' if stream else 'json'}")
    for sync in (True, False)
    for stream in (False, True)
]
#: What differs between two identical runs: clock fields, the Date header, request ids.
_VOLATILE = frozenset(
    {"created", "created_at", "sdk_http_response", "request_id", "request-id", "date"}
)
_CLOCK = re.compile(rb'"created(_at)?":\s*\d+')


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in value.items() if k.lower() not in _VOLATILE}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


async def _both(rec: Any, run: Callable[[Simulator], Awaitable[Any]]) -> tuple[Any, Any]:
    """``run`` without tooltap, then with it; each against a fresh ``Simulator(seed=0)``."""
    tooltap.uninstrument()
    try:
        with Simulator(seed=0) as sim:
            plain = await run(sim)
        # Uninstrumented: tooltap recorded nothing (anthropic's own span may exist).
        assert [s for s in rec.spans() if s.instrumentation_scope.name == "tooltap"] == []
        assert rec.events == []
    finally:
        rec.exporter.clear()
        rec.instrument()
    with Simulator(seed=0) as sim:
        tapped = await run(sim)
    return plain, tapped


@pytest.mark.parametrize("name", list(DRIVERS))
@pytest.mark.parametrize(("sync", "stream"), MODES)
async def test_same_objects_and_items(rec: Any, name: str, sync: bool, stream: bool) -> None:
    driver = DRIVERS[name]

    async def run(sim: Simulator) -> Any:
        client = driver.client(sim, sync=sync, tracer_provider=rec.tracer_provider)
        result, items = await driver.raw(client, stream)
        return type(result), [(type(i), _scrub(i.model_dump())) for i in items]

    plain, tapped = await _both(rec, run)
    assert tapped == plain
    assert len(rec.inference()) == 1  # and the instrumented run was observed


def _openai(sim: Simulator, sync: bool) -> Any:
    return DRIVERS["openai.chat"].client(sim, sync=sync, max_retries=0)


def _anthropic(sim: Simulator, sync: bool) -> Any:
    return DRIVERS["anthropic"].client(sim, sync=sync, max_retries=0)


def _create(name: str, client: Any) -> Any:
    """``messages`` or ``chat.completions``: the resource whose ``create`` the test calls."""
    return client.messages if name == "anthropic" else client.chat.completions


def _request(name: str, stream: bool) -> dict[str, Any]:
    request = DRIVERS[name]._request([{"role": "user", "content": USER}])
    return {**request, "stream": stream}


CLIENTS = {"openai.chat": _openai, "anthropic": _anthropic}


@pytest.mark.parametrize("name", list(CLIENTS))
@pytest.mark.parametrize(("sync", "stream"), MODES)
async def test_raw_response_keeps_headers_and_parse(
    rec: Any, name: str, sync: bool, stream: bool
) -> None:
    async def run(sim: Simulator) -> Any:
        resource = _create(name, CLIENTS[name](sim, sync))
        raw = await resolve(resource.with_raw_response.create(**_request(name, stream)))
        parsed = await resolve(raw.parse())
        items = await drain(parsed) if stream else [parsed]
        headers = _scrub(dict(raw.headers.items()))
        return type(raw), headers, type(parsed), [_scrub(i.model_dump()) for i in items]

    plain, tapped = await _both(rec, run)
    assert tapped == plain
    assert "content-type" in tapped[1]
    (span,) = rec.inference()
    assert span.attributes["gen_ai.response.finish_reasons"] == ("tool_call",)


@pytest.mark.parametrize("name", list(CLIENTS))
@pytest.mark.parametrize(("sync", "stream"), MODES)
async def test_streaming_response_bytes_unchanged(
    rec: Any, name: str, sync: bool, stream: bool
) -> None:
    async def run(sim: Simulator) -> bytes:
        resource = _create(name, CLIENTS[name](sim, sync))
        manager = resource.with_streaming_response.create(**_request(name, stream))
        async with entered(manager) as response:
            return _CLOCK.sub(b"", b"".join(await drain(response.iter_bytes())))

    plain, tapped = await _both(rec, run)
    assert tapped == plain
    assert len(tapped) > 100
    assert rec.calls() != []  # the tap parsed the very bytes the app read


async def _error_of(call: Awaitable[Any] | Any) -> BaseException:
    try:
        await resolve(call)
    except Exception as exc:  # noqa: BLE001 - the SDK's error is what we compare
        return exc
    raise AssertionError("the SDK did not raise")


@pytest.mark.parametrize("name", ["openai.chat", "openai.responses", "anthropic", "google"])
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
async def test_provider_error_is_the_same_exception(rec: Any, name: str, sync: bool) -> None:
    driver = DRIVERS[name]
    options: dict[str, Any] = {} if name == "google" else {"max_retries": 0}

    async def run(sim: Simulator) -> Any:
        sim.inject(Fault("server_error", status=500), dialect=driver.dialect)
        client = driver.client(sim, sync=sync, **options)
        exc = await _error_of(driver.raw(client, False))
        status = getattr(exc, "status_code", None) or getattr(exc, "code", None)
        body = getattr(exc, "body", None) or getattr(exc, "details", None)
        return type(exc), status, _scrub(body)

    plain, tapped = await _both(rec, run)
    assert tapped == plain
    assert tapped[1] == 500
    (span,) = rec.inference()
    assert span.status.status_code.name == "ERROR"
    assert span.attributes["error.type"]
    assert (
        rec.total("gen_ai.client.operation.duration", error__type=span.attributes["error.type"])
        == 1
    )
