"""The sanitizer: model-written text becomes valid, bounded telemetry; JSON always parses."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import tooltap
from tooltap._telemetry import semconv as sc
from tooltap._telemetry.execution import Execution
from tooltap._telemetry.sanitize import (
    CONTENT_CHARS,
    MARK,
    NAME_CHARS,
    Sanitizer,
    json_text,
    text,
    valid_text,
)
from tooltap._telemetry.telemetry import get_telemetry


def test_lone_surrogates_become_replacement_characters_and_pairs_join() -> None:
    assert valid_text("a\ud800b\ud83d\ude00c\udfff") == "a\ufffdb\U0001f600c\ufffd"
    assert valid_text("plain") == "plain"
    valid_text("x\udc80").encode("utf-8")  # encodes now


def test_long_values_are_cut_with_the_mark_and_counted() -> None:
    clean = Sanitizer()
    name = clean.name("n" * 10_000)
    assert len(name) == NAME_CHARS and name.endswith(MARK)
    assert clean.name("short") == "short"
    assert clean.count({}) == {sc.TOOLTAP_TRUNCATED: 1}
    assert Sanitizer().count({"k": 1}) == {"k": 1}  # nothing cut: nothing added
    assert text("é" * 5, 3) == "éé" + MARK


def test_json_is_valid_with_non_finite_numbers_as_strings() -> None:
    value = {"x": math.nan, "y": [math.inf, -math.inf], "z": 1.5}
    assert json.loads(json_text(value)) == {"x": "NaN", "y": ["Infinity", "-Infinity"], "z": 1.5}


def test_json_deeper_than_the_c_encoder_and_cycles() -> None:
    deep: list[object] = []
    for _ in range(20_000):
        deep = [deep]
    encoded = json_text({"a": deep})
    assert encoded == '{"a":' + "[" * 20_001 + "]" * 20_001 + "}"
    loop: list[object] = [1]
    loop.append(loop)
    assert json.loads(json_text(loop)) == [1, "<cycle>"]


def test_content_is_bounded() -> None:
    clean = Sanitizer()
    assert len(clean.json({"text": "a" * (2 * CONTENT_CHARS)})) == CONTENT_CHARS
    assert clean.truncated == 1


#: Any text, lone surrogates included (JSON escapes can carry them), often.
ANY_TEXT = st.text(
    st.characters(min_codepoint=0, max_codepoint=0x10FFFF, categories=None)
    | st.sampled_from("\ud800\udbff\udc00\udfff"),
    max_size=300,
)
VALUES = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ANY_TEXT, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=ANY_TEXT, call_id=ANY_TEXT, args=st.dictionaries(ANY_TEXT, VALUES, max_size=3),
       result=VALUES)  # fmt: skip
def test_any_model_text_encodes_as_otlp(
    name: str, call_id: str, args: dict[str, Any], result: Any
) -> None:
    provider, exporter = TracerProvider(), InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tooltap.instrument(tracer_provider=provider, meter_provider=MeterProvider(),
                       capture_content="SPAN_ONLY")  # fmt: skip
    try:
        tel = get_telemetry()
        assert tel is not None
        call = tooltap.ToolCall(name, args, "openai", call_id, 0)
        entry = tel.lifecycle.received(call, parent=None, provider="openai", label="f")
        execution = Execution(entry, True)
        execution.record_result(result, is_error=False)
        tooltap.flush()
        (span,) = exporter.get_finished_spans()
        encode_spans([span]).SerializeToString()  # what the OTLP exporters send: never raises
        got = dict(span.attributes or {})
        json.loads(got[sc.GEN_AI_TOOL_CALL_ARGUMENTS])  # valid JSON, whatever the values
        assert len(got[sc.GEN_AI_TOOL_NAME]) <= NAME_CHARS
    finally:
        tooltap.uninstrument()
        provider.shutdown()
