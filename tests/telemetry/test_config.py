"""``tooltap.Config`` and instrument()'s option checks: warn by default, raise when strict."""

from __future__ import annotations

import dataclasses
import fnmatch
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider

import tooltap
from tooltap._telemetry.config import STRICT_ENV, ConfigError
from tooltap._telemetry.telemetry import get_telemetry
from tooltap.core import Limits


@pytest.fixture
def lenient(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Strict checking off (tests/conftest.py turns it on for the suite)."""
    monkeypatch.delenv(STRICT_ENV, raising=False)
    yield
    tooltap.uninstrument()


@pytest.fixture
def providers() -> Iterator[dict[str, Any]]:
    tracer_provider, meter_provider = TracerProvider(), MeterProvider()
    yield {"tracer_provider": tracer_provider, "meter_provider": meter_provider}
    tooltap.uninstrument()
    tracer_provider.shutdown()
    meter_provider.shutdown()


def active() -> tooltap.Config | None:
    tel = get_telemetry()
    return None if tel is None else tel.config


def test_a_misspelt_option_warns_with_the_close_name_and_logs(
    lenient: None, providers: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.warns(UserWarning, match="'orphan_timout'; did you mean 'orphan_timeout'"):
        tooltap.instrument(orphan_timout=5, **providers)
    assert "unknown option 'orphan_timout'" in caplog.text
    config = active()
    assert config is not None and config.orphan_timeout == 600.0  # on, with the default


def test_an_invalid_value_warns_and_the_default_applies(
    lenient: None, providers: dict[str, Any]
) -> None:
    with pytest.warns(UserWarning, match="invalid max_open_calls=-3"):
        tooltap.instrument(max_open_calls=-3, **providers)
    config = active()
    assert config is not None and config.max_open_calls == 10_000


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"capture_contents": "SPAN_ONLY"}, "did you mean 'capture_content'"),
        ({"tool_name_cap": "many"}, "invalid tool_name_cap='many'"),
        ({"capture_content": "everything"}, "invalid capture_content='everything'"),
        ({"limits": {"max_event_bytes": 1}}, "limits must be a tooltap.core.Limits"),
        ({"config": {"orphan_timeout": 1}}, "config must be a tooltap.Config"),
    ],
)
def test_strict_mode_raises_and_installs_nothing(
    providers: dict[str, Any], options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        tooltap.instrument(strict=True, **providers, **options)
    assert active() is None


def test_the_environment_turns_strict_mode_on(
    monkeypatch: pytest.MonkeyPatch, providers: dict[str, Any]
) -> None:
    monkeypatch.setenv(STRICT_ENV, "1")
    with pytest.raises(ConfigError, match="did you mean 'call_id_memory'"):
        tooltap.instrument(call_id_memry=3, **providers)
    with pytest.raises(ConfigError, match="invalid orphan_timeout"):
        tooltap.Config(orphan_timeout=-1.0)
    monkeypatch.setenv(STRICT_ENV, "0")
    with pytest.warns(UserWarning):
        assert tooltap.Config(orphan_timeout=-1.0).orphan_timeout == 600.0


def test_strict_false_overrides_the_environment(
    monkeypatch: pytest.MonkeyPatch, providers: dict[str, Any]
) -> None:
    monkeypatch.setenv(STRICT_ENV, "1")
    with pytest.warns(UserWarning, match="unknown option 'bogus'"):
        tooltap.instrument(strict=False, bogus=1, **providers)
    assert active() is not None


def test_config_is_frozen_and_typed_options_pass_through(providers: dict[str, Any]) -> None:
    config = tooltap.Config(
        capture_content="SPAN_ONLY", orphan_timeout=1.5, tool_name_cap=3, limits=Limits(1, 2)
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.orphan_timeout = 2.0  # type: ignore[misc]
    tooltap.instrument(config=config, max_open_calls=7, **providers)
    expected = dataclasses.replace(config, max_open_calls=7, export=False)  # keywords override
    assert active() == expected


def test_capture_content_left_unset_reads_the_environment_at_instrument(
    monkeypatch: pytest.MonkeyPatch, providers: dict[str, Any]
) -> None:
    config = tooltap.Config()
    assert config.capture_content is None and not config.capture_any
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "event_only")
    tooltap.instrument(config=config, **providers)
    got = active()
    assert got is not None and got.capture_content == "EVENT_ONLY" and got.content_in_events


def test_the_warning_points_at_the_callers_line(lenient: None, providers: dict[str, Any]) -> None:
    with pytest.warns(UserWarning) as caught:
        tooltap.instrument(tool_name_cpa=1, **providers)
    assert caught[0].filename == __file__


def test_tooltap_logs_nothing_for_valid_options(
    providers: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="tooltap")
    from opentelemetry.sdk._logs import LoggerProvider

    logs = LoggerProvider()  # content events have somewhere to go: nothing to warn about
    tooltap.instrument(
        capture_content="SPAN_AND_EVENT", call_id_memory=8, logger_provider=logs, **providers
    )
    assert caplog.records == []


@pytest.mark.parametrize(
    "patterns",
    [(), ("final_result", "final_result_*", "final_answer"), ("a?[x-z]", "[!a]b", "*.x")],
)
def test_an_output_tool_is_a_name_one_of_the_patterns_matches(patterns: tuple[str, ...]) -> None:
    config = tooltap.Config(output_tools=patterns)
    names = ["", "final_result", "final_result_", "final_result_x", "final_resultx",
             "final_answer", "final_answer2", "abx", "abq", "a\nz", "bb", "ab", "y.x", ".x",
             "final_result_\n"]  # fmt: skip
    for name in names:
        assert config.output_tool(name) == any(fnmatch.fnmatchcase(name, p) for p in patterns)
