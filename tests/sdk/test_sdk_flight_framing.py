"""Flight records of the binary and line framings, through the real SDKs: a boto3 Converse
stream (AWS event-stream) and an ollama stream (NDJSON) keep their framing, and replay to
what tooltap reported at the time; read as SSE, the same bytes would not."""

from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path
from typing import Any

import ollama
import pytest
from botocore.exceptions import ClientError, EventStreamError

from tests.recorder import Recorder
from tests.sdk.test_sdk_bedrock import MODEL, TOOLS, USER, client
from tests.sdk.test_sdk_flight import flight, records, reported_live
from tooltap._cli import main
from tooltap._core.replay import replay
from tooltap.simulator import Fault, Simulator

__all__ = ["flight"]  # the fixture, shared with the SDK flight tests

OLLAMA_TOOLS = [{"type": "function", "function": {"name": "lookup_demo_value", "parameters": {}}}]
OLLAMA_USER = [{"role": "user", "content": "How tall am I, and how heavy?"}]


def _converse(sim: Simulator, stream: bool) -> None:
    bedrock = client(sim)
    with contextlib.suppress(ClientError, EventStreamError):
        if stream:
            list(bedrock.converse_stream(modelId=MODEL, messages=USER, toolConfig=TOOLS)["stream"])
        else:
            bedrock.converse(modelId=MODEL, messages=USER, toolConfig=TOOLS)


def _ollama(sim: Simulator, stream: bool) -> None:
    chat: Any = ollama.Client(host=sim.ollama_host).chat
    with contextlib.suppress(Exception):  # the client fails on a cut line: its own doing
        answer = chat(model="llama3.2", messages=OLLAMA_USER, tools=OLLAMA_TOOLS, stream=stream)
        if stream:
            list(answer)


SDKS = {"bedrock.converse": (_converse, "eventstream"), "ollama.chat": (_ollama, "ndjson")}


@pytest.mark.parametrize("dialect", sorted(SDKS))
@pytest.mark.parametrize(
    "fault",
    [Fault("truncate_args"), Fault("error_event"), Fault("chunk_size", size=7)],
    ids=["truncated", "error-event", "chunked"],
)
def test_a_stream_record_keeps_its_framing_and_replays_to_what_was_reported(
    flight: Path,
    rec: Recorder,
    sim: Simulator,
    capsys: pytest.CaptureFixture[str],
    dialect: str,
    fault: Fault,
) -> None:
    send, framing = SDKS[dialect]
    sim.inject(fault, dialect=dialect)
    send(sim, True)

    ((path, record),) = records(flight)
    assert (record.mode, record.framing) == ("sse", framing)
    assert record.reported is not None
    today = replay(record)
    assert today.same_as(record.reported), (today, record.reported)
    problems, calls = reported_live(rec)
    assert sorted(((p.kind, p.call_id) for p in today.problems), key=repr) == problems
    assert [(c.call_id, c.name, c.args) for c in today.calls] == calls
    assert calls or problems  # something to tell the framings apart by
    as_sse = replay(dataclasses.replace(record, framing="sse"))
    assert not as_sse.same_as(record.reported)
    (span,) = rec.inference()
    assert (span.attributes or {})["tooltap.flight_record"] == path.name
    assert main(["replay", "--check", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"sse ({framing})" in out and "same as recorded" in out


@pytest.mark.parametrize("dialect", sorted(SDKS))
@pytest.mark.parametrize(
    "fault",
    [Fault("invalid_json_args"), Fault("server_error", status=500)],
    ids=["invalid-args", "server-error"],
)
def test_a_whole_body_record_is_a_body(
    flight: Path, rec: Recorder, sim: Simulator, dialect: str, fault: Fault
) -> None:
    send, _ = SDKS[dialect]
    sim.inject(fault, dialect=dialect)
    send(sim, False)

    found = records(flight)
    assert found and {r.framing for _, r in found} == {"body"}
    for _, record in found:
        assert record.reported is not None and replay(record).same_as(record.reported)
