"""Pending upstream renames are one switch in semconv.py; provider families map to semconv."""

from __future__ import annotations

from tooltap._telemetry import semconv as sc


def test_every_draft_rename_is_a_name_tooltap_emits() -> None:
    names = {v for k, v in vars(sc).items() if k.isupper() and isinstance(v, str)}
    assert not sc.DRAFT_NAMES
    assert set(sc.DRAFT_RENAMES) <= names  # the switch would change emitted names
    assert not set(sc.DRAFT_RENAMES.values()) & names


def test_the_switch_renames_exactly_the_listed_names() -> None:
    assert sc._named("gen_ai.client.operation.duration", draft=True) == (
        "gen_ai.client.inference.duration"
    )
    assert sc._named("gen_ai.usage.cache_creation.input_tokens", draft=True) == (
        "gen_ai.usage.cache_write.input_tokens"
    )
    assert sc._named(sc.TOKEN_USAGE, draft=True) == sc.TOKEN_USAGE
    assert sc._named("gen_ai.client.operation.duration") == sc.OPERATION_DURATION


def test_execute_tool_duration_is_the_semconv_histogram() -> None:
    assert sc.METRICS[sc.EXECUTE_TOOL_DURATION][:2] == ("histogram", "s")
    assert sc.PROMETHEUS_NAMES[sc.EXECUTE_TOOL_DURATION] == "gen_ai_execute_tool_duration_seconds"


def test_provider_families_become_semconv_names() -> None:
    assert sc.provider_of_family("google") == "gcp.gen_ai"
    assert sc.provider_of_family("openai") == "openai"
    assert sc.provider_of_family("anthropic") == "anthropic"
