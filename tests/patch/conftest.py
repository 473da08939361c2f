"""The patch-layer tests share the telemetry fixtures (in-memory providers, simulator)."""

from __future__ import annotations

from tests.telemetry.support import rec, recorder, sim

__all__ = ["rec", "recorder", "sim"]
