"""The patch-layer tests share the telemetry fixtures (in-memory providers, simulator)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tooltap._patch import tap_stream

sys.path.insert(0, str(Path(__file__).parent.parent / "telemetry"))

from tt_support import rec, recorder, sim  # noqa: F401


@pytest.fixture(params=["c", "python"])
def tap_loop(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The sync tap loop under test: the C ``Tap`` (scripts/setup builds it) or its Python
    twin, the generator ``TapSyncStream._loop``."""
    if request.param == "python":
        monkeypatch.setattr(tap_stream, "Tap", None)
    else:
        assert tap_stream.Tap is not None, "the C speedup is not built"
    return str(request.param)
