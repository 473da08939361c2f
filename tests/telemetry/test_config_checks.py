"""Each option is checked on its own, from code or from its ``TOOLTAP_*`` variable; a second
``instrument()`` names what it did not apply; a misspelt option is reported once."""

from __future__ import annotations

import dataclasses
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider

import tooltap
from tooltap._telemetry.config import environ_given
from tooltap._telemetry.telemetry import get_telemetry
from tooltap.core import Limits

DEFAULTS = tooltap.Config()
BAD_VALUES = [
    ("max_open_bytes", "lots"),
    ("max_open_bytes", -1),
    ("tool_name_cap", 2.5),
    ("tool_name_cap", True),
    ("max_open_calls", math.inf),
    ("call_id_memory", "8"),
    ("stream_buffered_events", None),
    ("orphan_timeout", math.nan),
    ("orphan_timeout", "5"),
    ("stream_buffered_wait", -0.5),
    ("export", "yes"),
    ("prometheus_port", 70_000),
    ("prometheus_port", "9464"),
    ("prometheus_port", True),
    ("prometheus_host", ""),
    ("prometheus_host", 127),
    ("capture_content", 3),
]


@pytest.fixture
def lenient(monkeypatch: pytest.MonkeyPatch) -> None:
    """Strict checking off (the suite turns it on), and no TOOLTAP_* variable set."""
    for name in list(os.environ):
        if name.startswith("TOOLTAP_"):
            monkeypatch.delenv(name)


@pytest.fixture
def providers() -> Iterator[dict[str, Any]]:
    tracer_provider, meter_provider = TracerProvider(), MeterProvider()
    yield {"tracer_provider": tracer_provider, "meter_provider": meter_provider}
    tooltap.uninstrument()
    tracer_provider.shutdown()
    meter_provider.shutdown()


def active() -> tooltap.Config:
    tel = get_telemetry()
    assert tel is not None
    return tel.config


@pytest.mark.parametrize(("name", "value"), BAD_VALUES)
def test_each_option_is_checked_on_its_own(lenient: None, name: str, value: object) -> None:
    with pytest.warns(UserWarning, match=f"invalid {name}={value!r}, using"):
        config = tooltap.Config(**{name: value})
    fallback = "NO_CONTENT" if name == "capture_content" else getattr(DEFAULTS, name)
    assert getattr(config, name) == fallback
    with pytest.raises(tooltap.ConfigError, match=f"invalid {name}"):
        tooltap.instrument(strict=True, **{name: value})
    assert get_telemetry() is None


def test_good_values_pass_as_their_type(lenient: None) -> None:
    config = tooltap.Config(max_open_bytes=1024.0, orphan_timeout=3, prometheus_port=0,
                            prometheus_host=" 0.0.0.0 ", export=False)  # fmt: skip
    assert (config.max_open_bytes, type(config.max_open_bytes)) == (1024, int)
    assert (config.orphan_timeout, type(config.orphan_timeout)) == (3.0, float)
    assert (config.prometheus_port, config.prometheus_host) == (0, "0.0.0.0")
    with pytest.warns(UserWarning, match="limits must be"):
        assert tooltap.Config(limits=Limits(max_event_bytes=0)).limits == Limits()


def test_max_open_bytes_lots_keeps_tool_spans_recording(
    lenient: None, providers: dict[str, Any]
) -> None:
    with pytest.warns(UserWarning, match="invalid max_open_bytes='lots'"):
        tooltap.instrument(max_open_bytes="lots", **providers)
    tel = get_telemetry()
    assert tel is not None and tel.config.max_open_bytes == DEFAULTS.max_open_bytes
    call = tooltap.ToolCall("f", {}, "openai", "c1", 0)
    second = dataclasses.replace(call, call_id="c2", index=1)
    for each in (call, second):  # a second open call used to raise a swallowed TypeError
        tel.lifecycle.received(each, parent=None, provider="openai", label="f")
    assert len(tel.lifecycle) == 2


ENVIRONMENT = [
    ("TOOLTAP_CAPTURE_CONTENT", "span_only", "capture_content", "SPAN_ONLY"),
    ("TOOLTAP_ORPHAN_TIMEOUT", "30", "orphan_timeout", 30.0),
    ("TOOLTAP_TOOL_NAME_CAP", "7", "tool_name_cap", 7),
    ("TOOLTAP_MAX_OPEN_CALLS", "50", "max_open_calls", 50),
    ("TOOLTAP_MAX_OPEN_BYTES", "4096", "max_open_bytes", 4096),
    ("TOOLTAP_CALL_ID_MEMORY", "16", "call_id_memory", 16),
    ("TOOLTAP_EXPORT", "off", "export", False),
    ("TOOLTAP_ADOPT_TOOL_SPANS", "off", "adopt_tool_spans", False),
    ("TOOLTAP_PROMETHEUS_PORT", "9464", "prometheus_port", 9464),
    ("TOOLTAP_PROMETHEUS_HOST", "0.0.0.0", "prometheus_host", "0.0.0.0"),
    ("TOOLTAP_STREAM_BUFFERED_WAIT", "0.5", "stream_buffered_wait", 0.5),
    ("TOOLTAP_STREAM_BUFFERED_EVENTS", "3", "stream_buffered_events", 3),
    ("TOOLTAP_HOSTS", "*.openai.azure.com, api.example.com", "hosts",
     ("*.openai.azure.com", "api.example.com")),
    ("TOOLTAP_EXCLUDE", "localhost", "exclude", ("localhost",)),
    ("TOOLTAP_OUTPUT_TOOLS", "final_result,done_*", "output_tools", ("final_result", "done_*")),
    ("TOOLTAP_MAX_EVENT_BYTES", "2048", "limits", Limits(max_event_bytes=2048)),
    ("TOOLTAP_MAX_ARGUMENT_BYTES", "1024", "limits", Limits(max_argument_bytes=1024)),
]  # fmt: skip


def test_every_option_has_a_variable() -> None:
    covered = {name for _, _, name, _ in ENVIRONMENT}
    assert covered == {f.name for f in dataclasses.fields(tooltap.Config)}


@pytest.mark.parametrize(("variable", "text", "name", "expected"), ENVIRONMENT)
def test_a_variable_sets_its_option(
    lenient: None, variable: str, text: str, name: str, expected: object
) -> None:
    config = tooltap.Config.from_options({}, {variable: text})
    assert getattr(config, name) == expected


def test_code_wins_over_the_variable(lenient: None) -> None:
    env = {"TOOLTAP_ORPHAN_TIMEOUT": "30", "TOOLTAP_TOOL_NAME_CAP": "7"}
    config = tooltap.Config.from_options({"orphan_timeout": 600.0}, env)
    assert (config.orphan_timeout, config.tool_name_cap) == (600.0, 7)  # given even if default
    base = tooltap.Config(tool_name_cap=3)
    assert tooltap.Config.from_options({}, env, base=base).tool_name_cap == 3


@pytest.mark.parametrize(
    ("variable", "text"),
    [("TOOLTAP_MAX_OPEN_BYTES", "lots"), ("TOOLTAP_MAX_OPEN_CALLS", "-3"),
     ("TOOLTAP_EXPORT", "maybe"), ("TOOLTAP_PROMETHEUS_PORT", "99999"),
     ("TOOLTAP_MAX_EVENT_BYTES", "0"), ("TOOLTAP_CAPTURE_CONTENT", "everything")],
)  # fmt: skip
def test_an_invalid_variable_warns_naming_it(
    lenient: None, monkeypatch: pytest.MonkeyPatch, variable: str, text: str
) -> None:
    with pytest.warns(UserWarning, match=f"invalid {variable}="):
        found = environ_given({variable: text})
    assert found == {}
    monkeypatch.setenv(variable, text)
    with pytest.raises(tooltap.ConfigError, match=variable):
        tooltap.instrument(strict=True)
    assert get_telemetry() is None


def test_a_second_instrument_names_each_option_it_did_not_apply(
    lenient: None, providers: dict[str, Any]
) -> None:
    tooltap.instrument(**providers)
    before = active()
    with pytest.warns(UserWarning, match="not applied: capture_content='SPAN_ONLY'") as caught:
        tooltap.instrument(capture_content="SPAN_ONLY", tool_name_cap=5)
    (message,) = [str(w.message) for w in caught]
    assert "tool_name_cap=5 (active: 100)" in message and "uninstrument()" in message
    assert "TOOLTAP_CAPTURE_CONTENT, TOOLTAP_TOOL_NAME_CAP" in message
    assert active() is before  # nothing changed
    tooltap.instrument(**providers)  # the same options again: nothing to say
    with pytest.raises(tooltap.ConfigError, match="not applied: tracer_provider"):
        tooltap.instrument(tracer_provider=TracerProvider(), strict=True)


def test_opentelemetry_instrument_users_configure_by_variable(tmp_path: Path) -> None:
    script = tmp_path / "app.py"
    script.write_text(
        "import tooltap._telemetry.telemetry as t\n"
        "config = t.get_telemetry().config\n"
        "print(config.capture_content, config.orphan_timeout, config.hosts)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TOOLTAP_"))}
    env |= {"TOOLTAP_CAPTURE_CONTENT": "SPAN_ONLY", "TOOLTAP_ORPHAN_TIMEOUT": "30",
            "TOOLTAP_HOSTS": "api.example.com", "OTEL_TRACES_EXPORTER": "none",
            "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"}  # fmt: skip
    instrument = str(Path(sys.executable).with_name("opentelemetry-instrument"))
    result = subprocess.run([instrument, sys.executable, str(script)], env=env,
                            capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["SPAN_ONLY", "30.0", "('api.example.com',)"]


def test_a_misspelt_option_is_printed_once() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TOOLTAP_"))}
    code = "import tooltap; tooltap.instrument(orphan_timout=3)"
    result = subprocess.run([sys.executable, "-c", code], env=env,
                            capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("unknown option 'orphan_timout'") == 1, result.stderr
