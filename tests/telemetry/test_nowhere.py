"""Recording into providers that export nothing is one WARNING naming the fixes, once."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider

import tooltap
from tests.telemetry.support import Recorder, first_body, post, url
from tooltap._telemetry import nowhere
from tooltap.simulator import Simulator

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXES = ('pip install ".[otlp]"', "TOOLTAP_EXPORT=1", "tracer_provider=/meter_provider=")


@pytest.fixture
def fresh(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    nowhere.reset()
    caplog.set_level(logging.WARNING, logger="tooltap")
    try:
        yield caplog
    finally:
        tooltap.uninstrument()
        nowhere.reset()


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "go nowhere" in r.getMessage()]


def _call(sim: Simulator) -> None:
    post("httpx2", url(sim, "openai.chat", False), first_body("openai.chat", False), stream=False)


def test_global_no_op_providers_warn_once_at_the_first_operation(
    fresh: pytest.LogCaptureFixture, sim: Simulator
) -> None:
    tooltap.instrument()  # the global providers: never set in the tests, so proxies
    assert _warnings(fresh) == []  # the app may still set up its SDK after instrument()
    for _ in range(3):
        _call(sim)
    (message,) = _warnings(fresh)
    assert all(fix in message for fix in FIXES), message
    assert "no OpenTelemetry SDK provider is set" in message


def test_providers_that_export_say_nothing(fresh: pytest.LogCaptureFixture, sim: Simulator) -> None:
    Recorder().instrument()
    _call(sim)
    assert _warnings(fresh) == []


def test_sdk_providers_without_processor_or_reader_warn(
    fresh: pytest.LogCaptureFixture, sim: Simulator
) -> None:
    tooltap.instrument(tracer_provider=TracerProvider(), meter_provider=MeterProvider())
    _call(sim)
    assert len(_warnings(fresh)) == 1


def test_one_exporting_signal_is_enough(fresh: pytest.LogCaptureFixture, sim: Simulator) -> None:
    recorder = Recorder()
    tooltap.instrument(meter_provider=recorder.meter_provider)  # traces: the global proxy
    _call(sim)
    assert _warnings(fresh) == []
    assert nowhere.silent_signals(None, recorder.meter_provider) == ["traces"]


def test_opentelemetry_instrument_without_a_configurator_warns(sim: Simulator) -> None:
    """The launcher with no distro configuring the SDK: one warning naming the distro."""
    body = first_body("openai.chat", False)
    script = textwrap.dedent(f"""
        import httpx2
        for _ in range(3):
            httpx2.post({url(sim, "openai.chat", False)!r}, json={body!r})
    """)
    cli = os.path.join(os.path.dirname(sys.executable), "opentelemetry-instrument")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TOOLTAP_"))},
        "OTEL_PYTHON_CONFIGURATOR": "absent",  # as without opentelemetry-distro
        "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS": "httpx,openai_v2",
    }
    proc = subprocess.run([cli, sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, env=env, cwd=ROOT, check=True)  # fmt: skip
    lines = [line for line in proc.stderr.splitlines() if "go nowhere" in line]
    assert len(lines) == 1, proc.stderr
    assert "opentelemetry-instrument configured no OpenTelemetry SDK" in lines[0]
    assert all(fix in lines[0] for fix in FIXES)
