"""Transparency, differential: the app sees exactly the same with and without tooltap.

Each case runs the same request through a real SDK twice, first uninstrumented, then
instrumented, against a loopback server that sends byte-identical responses both times,
and compares everything the app can observe (``tests.reliability.apps.App.view``): events in order
(pydantic dumps), text, raw-response status/headers/``.parse()``, the stream helpers'
final objects, and exceptions (exact type, message, status, body).

* every streamed corpus recording, cut into random chunk sizes, through each SDK's plain,
  ``with_raw_response`` and ``.stream()`` helper paths, sync and async;
* simulator streams (the tool-calling scenario) cut with ``Fault("chunk_size", size=N)``
  for random N, clean and with faults (error event, EOF mid-body, an unfinished chunked body, 5xx;
  a TCP reset is left out: what the app reads before an RST is up to the kernel), and one
  non-streamed call; the simulator is reseeded so both runs get the same ids.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from tests.corpus import CASES, Case
from tests.reliability.apps import VARIANTS, App
from tests.reliability.support import Apps, Canned, Recorder, ReplayServer, cut, watched
from tooltap.simulator import FAULT_HEADER, Fault, Simulator, _scenario

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.usefixtures("frozen_heap")]

STREAMED = [c for c in CASES if c.stream]
SYNC = pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])


def _canned(case: Case, sync: bool) -> Canned:
    rng = random.Random(f"{case.name}/{sync}")
    content_type = case.meta.get("content_type") or "text/event-stream"
    chunks = cut(case.body, iter(lambda: rng.randint(1, 97), None))
    return Canned(case.status, [("content-type", content_type)], chunks)


def _expected(case: Case) -> list[tuple[str, Any, Any]]:
    return [(c["name"], c.get("call_id"), c["args"]) for c in case.meta["expected"]]


async def _views(app: App, variants: tuple[str, ...]) -> list[dict[str, Any]]:
    return [await app.view(v) for v in variants]


async def test_corpus_has_streams_of_every_dialect() -> None:
    assert {c.dialect for c in STREAMED} == set(VARIANTS)
    assert len(STREAMED) >= 30


@SYNC
@pytest.mark.parametrize("case", STREAMED, ids=lambda c: c.name)
async def test_corpus_stream(
    case: Case, sync: bool, replay: ReplayServer, recorder: Recorder, apps: Apps
) -> None:
    replay.canned = _canned(case, sync)
    app = apps(case.dialect, replay.url, sync)
    variants = VARIANTS[case.dialect]
    off = await _views(app, variants)
    recorder.instrument()
    on = await _views(app, variants)
    assert on == off
    assert watched(recorder, len(variants)) == len(variants)  # tooltap watched every request
    if not any("raised" in v for v in on):
        got = [(c.name, c.call_id, c.args) for c in recorder.received()]
        assert got == _expected(case) * len(variants)


# --- simulator streams ------------------------------------------------------------------

SIM_FAULTS: dict[str, str | None] = {
    "clean": None,
    "error_event": "error_event",
    "truncated": "truncate_bytes;at=700",
    "cut_chunked": "truncate_bytes;at=500;framing=chunked",
    "server_error": "server_error;status=503",
}


async def _sim_views(
    apps: Apps, sim: Simulator, dialect: str, sync: bool, faults: str
) -> list[dict[str, Any]]:
    key = "headers" if dialect == "google.genai" else "default_headers"
    app = apps(dialect, sim.url, sync, **{key: {FAULT_HEADER: faults}})
    return await _views(app, VARIANTS[dialect]) + [await app.view(stream=False)]


@SYNC
@pytest.mark.parametrize("fault", list(SIM_FAULTS))
@pytest.mark.parametrize("dialect", list(VARIANTS))
async def test_simulator_stream(
    dialect: str,
    fault: str,
    sync: bool,
    recorder: Recorder,
    apps: Apps,
    seeded: Callable[[int], Simulator],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_scenario, "time", SimpleNamespace(time=lambda: 1_760_000_000.0))
    rng = random.Random(f"{dialect}/{fault}/{sync}")
    size = rng.choice([1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144])
    faults = ",".join(filter(None, [str(Fault("chunk_size", size=size)), SIM_FAULTS[fault]]))
    seed = rng.randrange(1 << 30)
    off = await _sim_views(apps, seeded(seed), dialect, sync, faults)
    recorder.instrument()
    on = await _sim_views(apps, seeded(seed), dialect, sync, faults)
    assert on == off
    if fault == "clean":
        assert all("raised" not in v for v in on)
    elif fault == "server_error":
        assert all("raised" in v for v in on)
    assert watched(recorder, len(on)) == len(on)
