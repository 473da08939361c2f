"""Content keys of calls: equal exactly when the canonical JSON of the arguments is."""

from __future__ import annotations

import enum
import json
from collections import OrderedDict
from typing import Any

import pytest

from tooltap._telemetry.callids import call_key, canonical


class _Level(enum.IntEnum):
    HIGH = 1


class _Color(enum.StrEnum):
    RED = "red"


SAME: list[tuple[dict[str, Any], Any]] = [
    ({"b": [1, 2.5, True, None], "a": {"x": "y"}}, "re-serialized"),
    ({"a": (1, 2)}, {"a": [1, 2]}),
    ({"a": _Level.HIGH}, {"a": 1}),
    ({"a": _Color.RED}, {"a": "red"}),
    ({1: "x"}, {"1": "x"}),
    ({"a": float("nan")}, {"a": float("nan")}),
    ({"a": -0.0, "s": "\ud800"}, "re-serialized"),
]
DIFFERENT: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({"a": 1}, {"a": 1.0}),
    ({"a": 1}, {"a": True}),
    ({"a": 0}, {"a": False}),
    ({"a": "1"}, {"a": 1}),
    ({"a": None}, {"a": "null"}),
    ({"a": [1]}, {"a": 1}),
    ({"a": [1, 2]}, {"a": [2, 1]}),
    ({"a": {"b": 1}}, {"a": [["b", 1]]}),
    ({"a": 0.0}, {"a": -0.0}),
]


@pytest.mark.parametrize(("first", "second"), SAME)
def test_same_canonical_json_same_key(first: dict[str, Any], second: Any) -> None:
    if second == "re-serialized":  # as a later request's history carries it back
        second = json.loads(json.dumps(dict(reversed(list(first.items())))))
    assert canonical(first) == canonical(second)
    assert call_key("f", first) == call_key("f", second)
    assert call_key("f", OrderedDict(first)) == call_key("f", first)


@pytest.mark.parametrize(("first", "second"), DIFFERENT)
def test_other_canonical_json_other_key(first: dict[str, Any], second: dict[str, Any]) -> None:
    assert canonical(first) != canonical(second)
    assert call_key("f", first) != call_key("f", second)


def test_name_and_unknown_arguments() -> None:
    assert call_key("f", {"a": 1}) != call_key("g", {"a": 1})
    assert call_key(None, {}) == call_key("", {})
    assert call_key("f", None) is None


def test_values_json_cannot_encode_are_keyed_by_their_text() -> None:
    mixed: dict[Any, Any] = {1: "x", "a": "y"}  # unsortable keys: no canonical JSON
    assert call_key("f", mixed) == call_key("f", dict(mixed))
    assert call_key("f", mixed) != call_key("f", {"1": "x", "a": "y"})
    stranger = {"when": object()}  # encoded as its str(): stable for the same object
    assert call_key("f", stranger) == call_key("f", dict(stranger))
