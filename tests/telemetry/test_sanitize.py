"""The sanitizer: model-written text becomes valid, bounded telemetry; JSON always parses."""

from __future__ import annotations

import json
import math

from tooltap._telemetry import semconv as sc
from tooltap._telemetry.sanitize import (
    CONTENT_CHARS,
    MARK,
    NAME_CHARS,
    Sanitizer,
    json_text,
    text,
    valid_text,
)


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
