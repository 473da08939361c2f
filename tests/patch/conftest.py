"""The patch-layer tests share the telemetry tests' simulator; the recorder is the suite's."""

from __future__ import annotations

from tests.telemetry.support import sim

__all__ = ["sim"]
