"""``oversized_value``: a decoded argument value measured as compact JSON against the limit.

Most values are judged without being encoded, by an upper bound on their JSON length;
the answer must be the encoder's whatever the value.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tooltap._core.args import oversized_value
from tooltap.core import Limits

_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats()
    | st.text(max_size=40)
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: (
        st.lists(inner, max_size=6)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=8), inner, max_size=6)
    ),
    max_leaves=80,
)


def _encoded(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _oversized(value: Any, limit: int) -> Any:
    return oversized_value(
        value, limits=Limits(max_argument_bytes=limit), index=2, call_id="c", name="t"
    )


@given(_VALUES, st.integers(min_value=0, max_value=600))
def test_the_answer_is_the_encoders(value: Any, limit: int) -> None:
    text = _encoded(value)
    problem = _oversized(value, limit)
    if len(text) <= limit:
        assert problem is None
    else:
        assert problem is not None
        assert (problem.kind, problem.call_index, problem.call_id, problem.name) == (
            "oversized_arguments", 2, "c", "t"
        )  # fmt: skip
        assert problem.detail == f"{len(text)} characters"
        assert problem.received == text[:256]


def test_escapes_control_characters_and_big_numbers_count_at_their_encoded_length() -> None:
    for value in ({"a": "\x00" * 10}, {"a": '"' * 20}, [10**30] * 3, [-1.5e-300] * 2):
        size = len(_encoded(value))
        assert _oversized(value, size) is None
        assert _oversized(value, size - 1) is not None


def test_many_values_are_encoded_to_be_measured() -> None:
    value = {"n": list(range(500))}
    size = len(_encoded(value))
    assert _oversized(value, size) is None
    assert _oversized(value, size - 1) is not None


def test_what_does_not_encode_is_not_oversized() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    assert _oversized(cycle, 10**9) is None
    assert _oversized({"a": object()}, 0) is None
    assert _oversized({"a": 10**5000}, 10) is None  # past the int-to-text digit limit
