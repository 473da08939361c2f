"""Fixtures: a started simulator per test, and a check that it left nothing behind."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from tooltap.simulator import Simulator


def simulator_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("tooltap-simulator")]


@pytest.fixture
def sim() -> Iterator[Simulator]:
    with Simulator() as simulator:
        yield simulator
    assert simulator_threads() == []
