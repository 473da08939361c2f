"""Fixtures of the reliability suite: replay server, simulator (the recorder is the suite's,
``tests/conftest.py``)."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
import pytest_asyncio

from tests.reliability.apps import App
from tests.reliability.support import Apps, ReplayServer
from tooltap.simulator import Simulator


@pytest.fixture(scope="module")
def replay() -> Iterator[ReplayServer]:
    """One byte-replay server per module."""
    server = ReplayServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def _module_sim() -> Iterator[Simulator]:
    with Simulator() as simulator:
        yield simulator


@pytest.fixture
def sim(_module_sim: Simulator) -> Simulator:
    """The module's simulator, reset (no faults, requests or conversation state left)."""
    _module_sim.reset()
    return _module_sim


@pytest.fixture(scope="module")
def seeded(_module_sim: Simulator) -> Callable[[int], Simulator]:
    """``seeded(seed)``: the module's simulator, reset so that ids repeat for the same seed.

    Differential runs need byte-identical responses: the scenario's id generator and the
    wires' request-id generators are reseeded (the timestamp is pinned by the test).
    """
    scenario = _module_sim._engine.scenario
    wires = _module_sim._engine._wires.values()

    def reseed(seed: int) -> Simulator:
        _module_sim.reset()
        scenario._rng.seed(seed)
        for wire in wires:
            rng = getattr(wire, "_rng", None)
            if rng is not None:
                rng.seed(seed)
        return _module_sim

    return reseed


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def apps() -> AsyncIterator[Apps]:
    """``apps(dialect, base_url, sync, **options)``: one client per combination, per module.

    Modules using it run their tests on one module-wide event loop
    (``pytestmark = pytest.mark.asyncio(loop_scope="module")``) so async clients can be reused.
    """
    made: dict[str, App] = {}

    def get(dialect: str, base_url: str, sync: bool, **options: Any) -> App:
        key = repr((dialect, base_url, sync, sorted(options.items())))
        if key not in made:
            made[key] = App(dialect, base_url, sync=sync, **options)
        return made[key]

    yield get
    for app in made.values():
        await app.aclose()


@pytest.fixture
def frozen_heap() -> Iterator[None]:
    """``gc.freeze()`` for the test: ``gc.collect()`` then scans only what the test made.

    The SDKs' type modules make a heap of millions of objects, and a full collection
    over it costs most of a second; the tests collect to end abandoned streams only.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
