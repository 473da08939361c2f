"""An SDK stream read ``direct``ly: no tap loop between the transport and the client.

When an SDK's loop claims a body sent as it is, the client's identity decoder is the
tap's (``KeepingDecoder``), and the body is read with no loop of the tap's: the decoder
hands each chunk on. How the read ended is then told by the decoder's flush, by the
body's close inside a step of the SDK's loop, and by how that step ended. Each case
below runs twice against the same simulator, read directly and through the tap's own
loop (``TapState.go_direct`` off), and records the same telemetry both ways: the read
to its end, the connection reset mid-stream, an error event, a body cut inside a call,
the app stopping after a few items, and (async) the app's task cancelled mid-stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from tests.recorder import Recorder, attrs
from tests.sdk.drivers import ANTHROPIC_TRACES, SCHEMA
from tooltap._patch import tap_proxy, tap_stream
from tooltap.simulator import Fault, Simulator

CALLS = [
    ("lookup_demo_value", {"key": "height", "note": "h" * 300}),
    ("lookup_demo_value", {"key": "weight", "note": "w" * 300}),
]
MESSAGES = [{"role": "user", "content": "How tall am I, and how heavy?"}]
DIALECT = {"openai": "openai.chat", "anthropic": "anthropic"}
FAULTS: dict[str, Fault | None] = {
    "whole": None,
    "reset": Fault("reset", at=600),
    "error event": Fault("error_event"),
    "cut": Fault("truncate_bytes", at=700),
    "stopped": None,
}
#: Span attributes that differ from run to run.
_VARYING = ("gen_ai.response.id", "tooltap.duration", "tooltap.time_to_first_chunk")


@pytest.fixture(scope="module")
def sim() -> Iterator[Simulator]:
    with Simulator(calls=list(CALLS)) as server:
        yield server


def _create(lib: str, sim: Simulator, *, sync: bool) -> Any:
    """The SDK stream (awaitable when async), not read yet."""
    if lib == "openai":
        cls: Any = openai.OpenAI if sync else openai.AsyncOpenAI
        client = cls(base_url=sim.openai_base_url, api_key="sk-test", max_retries=0)
        tools: list[Any] = [
            {"type": "function", "function": {"name": "lookup_demo_value", "parameters": SCHEMA}}
        ]
        return client.chat.completions.create(
            model="gpt-4o", messages=MESSAGES, tools=tools, stream=True
        )
    options: dict[str, Any] = {"open_telemetry": False} if ANTHROPIC_TRACES else {}
    cls = anthropic.Anthropic if sync else anthropic.AsyncAnthropic
    client = cls(base_url=sim.anthropic_base_url, api_key="sk-ant-test", max_retries=0, **options)
    tools = [{"name": "lookup_demo_value", "input_schema": SCHEMA}]
    return client.messages.create(
        model="claude-x", max_tokens=64, messages=MESSAGES, tools=tools, stream=True
    )


def _read(lib: str, sim: Simulator, case: str) -> str:
    """Read one stream synchronously; what the app saw end it."""
    stream = _create(lib, sim, sync=True)
    try:
        for n, _ in enumerate(stream):
            if case == "stopped" and n == 2:
                stream.close()
                return "stopped"
    except Exception as exc:  # noqa: BLE001 - the app's view of the failure
        return type(exc).__name__
    return "read"


async def _aread(lib: str, sim: Simulator, case: str) -> str:
    stream = await _create(lib, sim, sync=False)
    try:
        async with asyncio.timeout(0.5 if case == "cancelled" else 30):
            n = 0
            async for _ in stream:
                n += 1
                if case == "stopped" and n == 3:
                    await stream.close()
                    return "stopped"
    except TimeoutError:
        return "timed out"
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__
    return "read"


def _summary(recorder: Recorder, errors_before: float) -> tuple[Any, ...]:
    """What the telemetry says of the stream: the inference span (status, attributes but
    the varying ones, event names and problems), the calls received, the errors counted."""
    (span,) = recorder.inference()
    kept = {k: v for k, v in attrs(span).items() if k not in _VARYING}
    events = [(e.name, dict(e.attributes or {}).get("tooltap.problem.kind")) for e in span.events]
    calls = [(name, args) for _, name, args in recorder.calls()]
    errors = recorder.total("tooltap.provider.errors") - errors_before
    return span.status.status_code.name, sorted(kept.items()), events, calls, errors


def _run(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch, sim: Simulator, lib: str, case: str
) -> dict[bool, tuple[Any, ...]]:
    """The case read directly and through the tap's loop: the app's view and the summary
    each way, and how many tap loops ran each way."""
    loops: list[object] = []
    sync_loop, async_loop = tap_proxy.tap_sync, tap_proxy.TapAsyncStream._loop

    def counted_sync(*args: Any) -> Any:
        loops.append(args)
        return sync_loop(*args)

    def counted_async(*args: Any) -> Any:
        loops.append(args)
        return async_loop(*args)

    monkeypatch.setattr(tap_proxy, "tap_sync", counted_sync)
    monkeypatch.setattr(tap_proxy.TapAsyncStream, "_loop", counted_async)
    fault = FAULTS.get(case) or (Fault("stall", seconds=20) if case == "cancelled" else None)
    seen: dict[bool, tuple[Any, ...]] = {True: (), False: ()}
    for direct in (True, False):
        if not direct:
            monkeypatch.setattr(tap_stream.TapState, "go_direct", lambda state: False)
        for sync in (False,) if case == "cancelled" else (True, False):
            recorder.clear()
            loops.clear()
            if fault is not None:
                sim.inject(fault, dialect=DIALECT[lib])
            before = recorder.total("tooltap.provider.errors")
            app = _read(lib, sim, case) if sync else asyncio.run(_aread(lib, sim, case))
            seen[direct] += ((sync, app, len(loops), _summary(recorder, before)),)
    return seen


@pytest.mark.parametrize("lib", ["anthropic", "openai"])
@pytest.mark.parametrize("case", [*FAULTS, "cancelled"])
def test_a_body_read_directly_records_what_the_tap_loop_records(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch, sim: Simulator, lib: str, case: str
) -> None:
    recorder.instrument()
    seen = _run(recorder, monkeypatch, sim, lib, case)
    direct, looped = seen[True], seen[False]
    # the client's read ran with no tap loop (openai's async stream drains the body's rest
    # from the raw stream after its loop, which a tap loop reads either way)
    assert all(loops >= 1 for _, _, loops, _ in looped)
    assert [loops for _, _, loops, _ in direct] == [loops - 1 for _, _, loops, _ in looped]
    assert [(sync, app, summary) for sync, app, _, summary in direct] == [
        (sync, app, summary) for sync, app, _, summary in looped
    ]
    for _, app, _, (status, kept, _, calls, errors) in direct:
        if case == "whole":
            assert app == "read" and status != "ERROR" and calls == CALLS
            assert ("tooltap.stream.closed_early", True) not in kept
        elif case == "reset":
            assert app != "read" and status == "ERROR" and errors == 1
        elif case == "cancelled":
            assert app == "timed out" and ("tooltap.outcome", "cancelled") in kept
        else:
            assert calls != CALLS
