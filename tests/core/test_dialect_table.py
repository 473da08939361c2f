"""The dialect table: every entry complete, and each the one its own parsers name."""

from __future__ import annotations

import dataclasses
import importlib
import itertools

import pytest

from tooltap._core.dialects import DIALECTS, TABLE, Dialect, dialect, provider_of
from tooltap._core.errors import ERROR_TYPES, classify_error
from tooltap._telemetry.semconv import finish_reason, retry_count_header
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


#: The finish-reason vocabulary of the GenAI semantic conventions.
FINISH_VOCABULARY = frozenset({"stop", "length", "content_filter", "tool_call", "error"})


def test_each_dialect_module_declares_its_entry() -> None:
    for entry in TABLE.values():
        module = importlib.import_module(entry.reducer.__module__ + "_request")
        assert module.ENTRY is entry


def test_dialect_facts_agree_across_entries() -> None:
    """The finish reasons and error tokens are read without knowing the dialect: two
    dialects naming one token must mean the same by it."""
    for fact in ("finish_reasons", "error_tokens"):
        seen: dict[str, tuple[str, str]] = {}
        for entry in TABLE.values():
            for token, meaning in getattr(entry, fact).items():
                assert token == token.lower()
                other = seen.setdefault(token, (meaning, entry.name))
                assert other[0] == meaning, (fact, token, other[1], entry.name)
    for entry in TABLE.values():
        assert set(entry.finish_reasons.values()) <= FINISH_VOCABULARY
        assert set(entry.error_tokens.values()) <= set(ERROR_TYPES)


@pytest.mark.parametrize("name", DIALECTS)
def test_each_dialects_facts_are_what_the_classifiers_use(name: str) -> None:
    entry = dialect(name)
    for raw, reason in entry.finish_reasons.items():
        assert finish_reason(raw.upper()) == reason
    for token, kind in entry.error_tokens.items():
        body = {"error": {"type": token, "message": "m"}}
        assert classify_error(None, {}, body).error_type == kind
    if entry.provider_untold is not None:
        assert entry.provider_name(None, None) == entry.provider_untold
    assert retry_count_header(name) == entry.retry_count_header
