"""Fixtures for the runner tests: ``loops`` importable, a fresh simulator per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tooltap.simulator import Simulator


@pytest.fixture
def sim() -> Iterator[Simulator]:
    with Simulator() as simulator:
        yield simulator
