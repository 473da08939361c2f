"""Fixtures for the SDK-layer tests: the simulator, a check that no span ends twice (the
recorder is the suite's, ``tests/conftest.py``)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from tooltap.simulator import Simulator

#: anthropic's own test module runs in subprocesses of its own (test_anthropic_upstream.py).
collect_ignore = ["anthropic_upstream"]


@pytest.fixture
def double_end(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Fails the test if any span is ended twice (the OpenTelemetry SDK logs a warning)."""
    caplog.set_level(logging.WARNING, logger="opentelemetry.sdk.trace")
    yield
    assert "ended span" not in caplog.text


@pytest.fixture(scope="session")
def _simulator() -> Iterator[Simulator]:
    with Simulator() as sim:
        yield sim


@pytest.fixture
def sim(_simulator: Simulator) -> Simulator:
    """The shared simulator, with faults, recorded requests and conversation state cleared."""
    _simulator.reset()
    return _simulator
