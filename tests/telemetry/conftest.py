"""Fixtures (from ``tests.telemetry.support``): in-memory providers with tooltap, the simulator."""

from __future__ import annotations

from tests.telemetry.support import rec, recorder, sim

__all__ = ["rec", "recorder", "sim"]
