"""Shared by every test folder: strict option checks, and the tap loop fixture."""

import os

import pytest

# An unknown or invalid option in any test is a mistake in the test: raise, do not warn.
os.environ.setdefault("TOOLTAP_STRICT_CONFIG", "1")

from tooltap._patch import tap_stream


@pytest.fixture(params=["c", "python"])
def tap_loop(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The tap loops under test: the C ``Tap`` and ``ATap`` (scripts/setup builds them) or
    their Python twins, the generators ``TapSyncStream._loop`` and ``TapAsyncStream._loop``."""
    if request.param == "python":
        monkeypatch.setattr(tap_stream, "Tap", None)
        monkeypatch.setattr(tap_stream, "ATap", None)
    else:
        assert tap_stream.Tap is not None, "the C speedup is not built"
        assert tap_stream.ATap is not None, "the C speedup is not built"
    return str(request.param)
