"""Shared by every test folder: strict option checks, the Hypothesis profiles, the
OpenTelemetry recorder.

Hypothesis runs the ``ci`` profile, or ``long`` with ``TOOLTAP_LONG=1``; a property's own
budget is ``examples(n)``: ``n`` examples under ``ci``, ``LONG_FACTOR`` times as many under
``long``.
"""

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from tests.recorder import Recorder

#: Agent frameworks whose pins the project's venv cannot hold run in their own venv
#: (``scripts/test-framework-venvs`` sets the variable); every other run leaves them out.
collect_ignore = [] if os.environ.get("TOOLTAP_FRAMEWORK_VENV") == "1" else ["framework_venv"]

# An unknown or invalid option in any test is a mistake in the test: raise, do not warn.
os.environ.setdefault("TOOLTAP_STRICT_CONFIG", "1")

LONG = os.environ.get("TOOLTAP_LONG") == "1"
LONG_FACTOR = 50
settings.register_profile(
    "ci",
    deadline=None,  # a loaded CI machine is slow now and then: no flaky deadlines
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "long",
    parent=settings.get_profile("ci"),
    max_examples=100 * LONG_FACTOR,
    suppress_health_check=list(HealthCheck),
)
settings.load_profile("long" if LONG else "ci")


def examples(n: int) -> settings:
    """A property's budget: ``n`` examples, ``LONG_FACTOR`` times as many under ``long``."""
    return settings(max_examples=n * LONG_FACTOR if LONG else n)


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
