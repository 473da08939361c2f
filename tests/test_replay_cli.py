"""``tooltap replay`` in process: its table, its JSON lines and its exit status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tooltap._cli import main
from tooltap._core.flight import Chunk, FlightRecord, Reported, SeenProblem, encode

ERROR_BODY = b'{"error": {"type": "overloaded_error", "message": "busy"}}'


def _write(path: Path, reported: Reported) -> Path:
    record = FlightRecord(
        dialect="anthropic.messages",
        method="POST",
        path="/v1/messages",
        status=529,
        mode="error",
        headers=(("content-type", "application/json"),),
        end="exhausted",
        chunks=(Chunk(0.0, ERROR_BODY),),
        reported=reported,
        tooltap="9.9.9",
    )
    path.write_bytes(encode(record))
    return path


def test_a_record_that_replays_the_same_passes_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "r.jsonl", Reported(error="overloaded"))
    assert main(["replay", "--check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "anthropic.messages POST /v1/messages -> 529" in out and "tooltap 9.9.9" in out
    assert "error: overloaded" in out and "same as recorded" in out


def test_json_gives_a_line_even_without_calls_or_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "r.jsonl", Reported(error="overloaded"))
    assert main(["replay", "--json", str(path)]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert json.loads(line) == {
        "file": str(path),
        "call_id": None,
        "name": None,
        "args": None,
        "problems": [],
        "error": "overloaded",
    }


def test_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    same = _write(tmp_path / "same.jsonl", Reported(error="overloaded"))
    other = _write(tmp_path / "other.jsonl", Reported((), (SeenProblem("error_event"),), None))
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("hello\n")
    assert main(["replay", str(same), str(other)]) == 0  # no --check: a report only
    assert main(["replay", "--check", str(same), str(other)]) == 1
    assert main(["replay", "--check", str(same), str(garbage)]) == 2
    assert "DIFFERS from recorded" in capsys.readouterr().out
