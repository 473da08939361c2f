"""The bytes kept for an SDK's item reader stay within ``max_event_bytes`` wherever the
chunks go: also when the app reads the body itself, past the SDK's loop. While the SDK's
loop reads the body, they stay near ``TRIM_BYTES`` (``TapState.trim``).

An SDK stream claims its body when its loop is created (openai: with the stream;
anthropic: at its first item). An app that then reads the raw body
(``response.iter_bytes()``), or reads a few items and then the rest of the body from
``response.stream``, reads chunks no step of the SDK's loop sees: the tap holds at most
``max_event_bytes`` of them, then parses the bytes instead, and the calls are the ones the
server sent, each once, with no problem.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from tests.recorder import Recorder
from tests.sdk.drivers import ANTHROPIC_TRACES, SCHEMA
from tooltap._core import stream_items
from tooltap._patch import tap_stream
from tooltap._patch.sdk_stream import tapped
from tooltap.core import Limits
from tooltap.simulator import Simulator

CAP = 1024
#: Two calls whose arguments, sent 8 characters a delta, make a body of many times the cap.
CALLS = [
    ("lookup_demo_value", {"key": "height", "note": "h" * 1500}),
    ("lookup_demo_value", {"key": "weight", "note": "w" * 1500}),
]
MESSAGES = [{"role": "user", "content": "How tall am I, and how heavy?"}]


@pytest.fixture(scope="module")
def sim() -> Iterator[Simulator]:
    with Simulator(calls=list(CALLS)) as server:
        yield server


def _stream(lib: str, sim: Simulator, *, sync: bool = True) -> tuple[Any, Any]:
    """A client and the SDK stream it creates (awaitable when async), not read yet."""
    if lib == "openai":
        cls: Any = openai.OpenAI if sync else openai.AsyncOpenAI
        client = cls(base_url=sim.openai_base_url, api_key="sk-test", max_retries=0)
        tools: list[Any] = [
            {"type": "function", "function": {"name": "lookup_demo_value", "parameters": SCHEMA}}
        ]
        return client, client.chat.completions.create(
            model="gpt-4o", messages=MESSAGES, tools=tools, stream=True
        )
    options: dict[str, Any] = {"open_telemetry": False} if ANTHROPIC_TRACES else {}
    cls = anthropic.Anthropic if sync else anthropic.AsyncAnthropic
    client = cls(base_url=sim.anthropic_base_url, api_key="sk-ant-test", max_retries=0, **options)
    tools = [{"name": "lookup_demo_value", "input_schema": SCHEMA}]
    return client, client.messages.create(
        model="claude-x", max_tokens=64, messages=MESSAGES, tools=tools, stream=True
    )


def _check(recorder: Recorder, body: bytearray, held: int) -> None:
    """The body was many times the cap, the tap never held more than the cap, and the calls
    are the server's, each once, with no problem."""
    assert len(body) > 10 * CAP
    assert held <= CAP
    assert [(name, args) for _, name, args in recorder.calls()] == CALLS
    (span,) = recorder.inference()
    assert not [e for e in span.events if e.attributes and "tooltap.problem.kind" in e.attributes]


CASES = pytest.mark.parametrize(
    ("lib", "items"),
    [("openai", 0), ("openai", 2), ("anthropic", 2)],
    ids=["openai-raw", "openai-items-then-raw", "anthropic-items-then-raw"],
)


@CASES
def test_the_bytes_kept_stay_within_the_cap_when_the_app_reads_the_body(
    lib: str, items: int, sim: Simulator, recorder: Recorder
) -> None:
    recorder.instrument(limits=Limits(max_event_bytes=CAP))
    client, stream = _stream(lib, sim)
    state = tapped(stream.response.stream)
    for _, _item in zip(range(items), stream, strict=False):
        pass
    assert state is not None and state.items is not None  # the SDK's loop claimed the body
    body = bytearray()
    held = 0
    chunks = stream.response.iter_bytes() if items == 0 else iter(stream.response.stream)
    for chunk in chunks:
        body += chunk
        held = max(held, len(state.kept()[0]))
    stream.close()
    client.close()
    _check(recorder, body, held)


@CASES
async def test_the_bytes_kept_stay_within_the_cap_when_the_app_reads_the_body_async(
    lib: str, items: int, sim: Simulator, recorder: Recorder
) -> None:
    recorder.instrument(limits=Limits(max_event_bytes=CAP))
    client, created = _stream(lib, sim, sync=False)
    stream = await created
    state = tapped(stream.response.stream)
    taken = 0
    while taken < items:
        await anext(stream)
        taken += 1
    assert state is not None and state.items is not None  # the SDK's loop claimed the body
    body = bytearray()
    held = 0
    chunks = stream.response.aiter_bytes() if items == 0 else stream.response.stream
    async for chunk in chunks:
        body += chunk
        held = max(held, len(state.kept()[0]))
    await stream.close()
    await client.close()
    _check(recorder, body, held)


#: Bytes kept before a trim, in the test below, and the most one read of the socket gives.
TRIM = 4096
READ = 65536
#: Calls whose arguments make a body of many times ``TRIM + READ``.
LONG = [
    ("lookup_demo_value", {"key": "height", "note": "h" * 60_000}),
    ("lookup_demo_value", {"key": "weight", "note": "w" * 60_000}),
]


@pytest.fixture(scope="module")
def long_sim() -> Iterator[Simulator]:
    with Simulator(calls=list(LONG)) as server:
        yield server


def _long_check(recorder: Recorder, size: int, held: int) -> None:
    """The body was many times what the tap may keep and it kept no more; the calls are
    the server's, each once, with no problem."""
    assert size > 4 * (TRIM + READ)
    assert 0 < held <= TRIM + READ
    assert [(name, args) for _, name, args in recorder.calls()] == LONG
    (span,) = recorder.inference()
    assert not [e for e in span.events if e.attributes and "tooltap.problem.kind" in e.attributes]


LIBS = pytest.mark.parametrize("lib", ["openai", "anthropic"])


@LIBS
def test_the_bytes_kept_are_trimmed_while_the_sdk_reads_the_body(
    lib: str, long_sim: Simulator, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tap_stream, "TRIM_BYTES", TRIM)
    recorder.instrument()
    client, stream = _stream(lib, long_sim)
    state = tapped(stream.response.stream)
    assert state is not None
    held = 0
    for _item in stream:
        held = max(held, len(state.kept()[0]))
    size = stream.response.num_bytes_downloaded
    client.close()
    _long_check(recorder, size, held)


@LIBS
async def test_the_bytes_kept_are_trimmed_while_the_sdk_reads_the_body_async(
    lib: str, long_sim: Simulator, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tap_stream, "TRIM_BYTES", TRIM)
    recorder.instrument()
    client, created = _stream(lib, long_sim, sync=False)
    stream = await created
    state = tapped(stream.response.stream)
    assert state is not None
    held = 0
    async for _item in stream:
        held = max(held, len(state.kept()[0]))
    size = stream.response.num_bytes_downloaded
    await client.close()
    _long_check(recorder, size, held)


@LIBS
def test_a_stream_stopped_after_trims_records_what_came(
    lib: str, long_sim: Simulator, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app stops once the first call was handed on, after trims: the bytes kept are
    parsed on from the reducer's copy; the first call is recorded once, the stream as
    closed early, and what came before the trims is still told."""
    monkeypatch.setattr(tap_stream, "TRIM_BYTES", TRIM)
    forks: list[object] = []
    fork = stream_items.ItemParser.fork
    monkeypatch.setattr(stream_items.ItemParser, "fork", lambda p: forks.append(p) or fork(p))
    recorder.instrument()
    client, stream = _stream(lib, long_sim)
    state = tapped(stream.response.stream)
    assert state is not None
    for _item in stream:
        if state.emitted:
            break
    stream.close()
    client.close()
    assert forks  # trimmed before the first call was whole
    (span,) = recorder.inference()
    assert span.attributes is not None
    assert span.attributes["tooltap.stream.closed_early"] is True
    calls = [(name, args) for _, name, args in recorder.calls()]
    assert calls[0] == LONG[0]
    assert calls.count(LONG[0]) == 1
    # what came before the trims is still told: the response's id, and no shape problem
    assert span.attributes["gen_ai.response.id"]
    assert not [e for e in span.events if e.attributes and "tooltap.problem.kind" in e.attributes]
