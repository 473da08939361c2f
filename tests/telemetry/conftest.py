"""Fixtures (from ``tests.telemetry.support``): the simulator; the recorder is the
suite's (``tests/conftest.py``)."""

from __future__ import annotations

from tests.telemetry.support import sim

__all__ = ["sim"]
