"""Shared by every test folder: strict option checks, the OpenTelemetry recorder."""

import os
from collections.abc import Iterator

import pytest

from tests.recorder import Recorder

# An unknown or invalid option in any test is a mistake in the test: raise, do not warn.
os.environ.setdefault("TOOLTAP_STRICT_CONFIG", "1")


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    """In-memory providers, not instrumented yet (``recorder.instrument(...)``); afterwards
    tooltap is uninstrumented and the providers shut down."""
    rec = Recorder()
    try:
        yield rec
    finally:
        rec.shutdown()


@pytest.fixture
def rec(recorder: Recorder) -> Recorder:
    """``recorder``, instrumented with the default options."""
    recorder.instrument()
    return recorder
