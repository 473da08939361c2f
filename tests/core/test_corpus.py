"""Every recorded corpus case parses to its expected calls, whole and fed byte by byte."""

from __future__ import annotations

import pytest

import tooltap
from tests.corpus import CASES, Case


def _expected(case: Case) -> list[tuple[str, str | None, dict]]:
    return [(c["name"], c["call_id"], c["args"]) for c in case.meta["expected"]]


def _got(parsed: tooltap.Parsed) -> list[tuple[str, str | None, dict]]:
    return [(c.name, c.call_id, c.args) for c in parsed.calls]


OK_CASES = [c for c in CASES if c.status == 200]


@pytest.mark.parametrize("case", OK_CASES, ids=lambda c: c.name)
def test_calls_match_expected(case: Case) -> None:
    parsed = tooltap.core.parse_response(case.body, case.dialect)
    assert _got(parsed) == _expected(case)
    assert [c.index for c in parsed.calls] == list(range(len(parsed.calls)))
    assert all(c.provider == case.dialect.split(".")[0] for c in parsed.calls)
    assert all(c.dialect == case.dialect for c in parsed.calls)
    servers = [(s.name, s.call_id, s.args, s.block_type) for s in parsed.server_calls]
    expected_servers = [
        (s["name"], s["call_id"], s["args"], s["block_type"])
        for s in case.meta.get("expected_server_tool_calls", [])
    ]
    assert servers == expected_servers


@pytest.mark.parametrize("case", [c for c in OK_CASES if c.stream], ids=lambda c: c.name)
def test_stream_fed_byte_by_byte_matches_whole(case: Case) -> None:
    whole = tooltap.core.parse_response(case.body, case.dialect)
    parser = tooltap.core.StreamParser(case.dialect)
    emitted = []
    for i in range(len(case.body)):
        emitted += parser.feed(case.body[i : i + 1])
    parsed = parser.close()
    assert parsed == whole
    assert emitted == list(parsed.calls)


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.meta["kind"] == "truncated"], ids=lambda c: c.name
)
def test_truncated_streams_are_counted_failures(case: Case) -> None:
    parsed = tooltap.core.parse_response(case.body, case.dialect)
    assert not parsed.complete
    kinds = [p.kind for p in parsed.problems]
    assert "truncated_stream" in kinds
    partial = case.meta.get("expected_partial_calls") or []
    truncated = [p for p in parsed.problems if p.kind == "truncated_json"]
    assert [(p.name, p.call_id, p.received) for p in truncated] == [
        (p["name"], p["call_id"], p["args_raw_so_far"]) for p in partial
    ]
    assert {c.call_id for c in parsed.calls}.isdisjoint({p["call_id"] for p in partial})


@pytest.mark.parametrize(
    "case",
    [c for c in OK_CASES if c.meta["kind"] == "error"],
    ids=lambda c: c.name,
)
def test_error_inside_a_200_is_an_error_event(case: Case) -> None:
    parsed = tooltap.core.parse_response(case.body, case.dialect)
    assert "error_event" in [p.kind for p in parsed.problems]
    assert parsed.calls == ()
