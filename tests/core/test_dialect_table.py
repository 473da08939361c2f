"""The dialect table: every entry complete, and each the one its own parsers name."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from tooltap._core.dialects import DIALECTS, TABLE, Dialect, dialect, provider_of
from tooltap.core import DIALECTS as PUBLIC_DIALECTS
from tooltap.core import Limits, parse_request


def test_the_public_names_are_the_table_in_order() -> None:
    assert PUBLIC_DIALECTS == DIALECTS == tuple(TABLE)
    assert DIALECTS == (
        "openai.chat",
        "openai.responses",
        "anthropic.messages",
        "google.genai",
        "bedrock.converse",
        "ollama.chat",
        "cohere.chat",
    )


def test_every_field_is_required() -> None:
    fields = dataclasses.fields(Dialect)
    assert len(fields) >= 19
    missing = dataclasses.MISSING
    assert [
        f.name for f in fields if f.default is not missing or f.default_factory is not missing
    ] == []


@pytest.mark.parametrize("name", DIALECTS)
def test_an_entry_is_the_dialect_its_parsers_and_reader_name(name: str) -> None:
    entry = dialect(name)
    assert entry.name == name
    assert entry.parse_body({}, Limits()).dialect == name
    assert entry.reducer(Limits()).finish().dialect == name
    assert parse_request({}, name).dialect == name
    assert provider_of(name) == entry.provider != ""


def test_path_suffixes_are_disjoint() -> None:
    """No suffix of one dialect ends another's, so the table's order does not matter."""
    suffixes = [(s, d.name) for d in TABLE.values() for s in d.path_suffixes]
    for (a, da), (b, db) in itertools.permutations(suffixes, 2):
        assert da == db or not a.endswith(b), (a, b)


def test_an_unknown_name_says_which_are_known() -> None:
    with pytest.raises(ValueError, match="expected one of"):
        dialect("openai.assistants")
    assert provider_of("openai.assistants") == ""
