"""Fixtures (defined in ``tt_support``): in-memory providers with tooltap instrumented, the simulator."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from tt_support import rec, recorder, sim  # noqa: F401
