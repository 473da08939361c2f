"""The patch-layer tests share the telemetry fixtures (in-memory providers, simulator)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "telemetry"))

from tt_support import rec, recorder, sim  # noqa: F401
