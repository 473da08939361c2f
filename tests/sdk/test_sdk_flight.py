"""The flight recorder with the real SDKs against the simulator: record, replay, serve again.

Every fault the simulator knows leaves a record whose replay gives the calls and problems
tooltap reported at the time (on the span and to the listeners); the records of broken
responses hold no credential the client sent; ``--check`` notices a doctored record; a
record served by ``RecordServer`` makes the real SDK read the same calls again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pydantic
import pytest
from google.genai import errors as genai_errors

import tooltap
from tests.recorder import Recorder
from tests.sdk.drivers import DRIVERS
from tooltap._core.flight import FlightRecord, Reported, SeenProblem, decode, encode
from tooltap._core.replay import replay
from tooltap._telemetry.telemetry import get_telemetry
from tooltap.simulator import FAULT_KINDS, Fault, RecordServer, Simulator

#: One instance of every simulator fault, with parameters that keep the test short.
FAULTS = {
    "truncate_bytes": Fault("truncate_bytes", at=300),
    "truncate_args": Fault("truncate_args"),
    "invalid_json_args": Fault("invalid_json_args"),
    "error_event": Fault("error_event"),
    "rate_limit": Fault("rate_limit", retry_after=0),
    "insufficient_balance": Fault("insufficient_balance"),
    "server_error": Fault("server_error", status=503),
    "overloaded": Fault("overloaded"),
    "stall": Fault("stall", seconds=0.05),
    "reset": Fault("reset", at=300),
    "no_ids": Fault("no_ids"),
    "ignore_tool_choice": Fault("ignore_tool_choice"),
    "chunk_size": Fault("chunk_size", size=7),
    "delay": Fault("delay", seconds=0.05),
    "buffered": Fault("buffered", seconds=0.4),
}
SECRETS = {
    "authorization": "Bearer sk-proj-flightsecret0123456789",
    "x-api-key": "sk-ant-flightsecret0123456789",
    "x-goog-api-key": "AIzaFlightSecret0123456789abcdefghijkl",
}
KEY_IN_QUERY = "AIzaQueryKeySecret0123456789abcdefghijk"


@dataclasses.dataclass
class Served:
    """What the drivers read of a simulator (its base URLs), for a ``RecordServer``."""

    url: str

    @property
    def openai_base_url(self) -> str:
        return self.url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url


def test_every_fault_kind_is_covered() -> None:
    assert set(FAULTS) == set(FAULT_KINDS)


@pytest.fixture
def flight(rec: Recorder, tmp_path: Path) -> Iterator[Path]:
    """``rec`` re-instrumented with a flight recorder that keeps every response."""
    tooltap.uninstrument()
    tooltap.instrument(
        tracer_provider=rec.tracer_provider,
        meter_provider=rec.meter_provider,
        listeners=[rec.events.append],
        flight_recorder=str(tmp_path / "flight"),
        flight_recorder_all=True,
        stream_buffered_wait=0.3,
        stream_buffered_events=2,
    )
    yield tmp_path / "flight"


def records(directory: Path) -> list[tuple[Path, FlightRecord]]:
    tel = get_telemetry()
    assert tel is not None and tel.flight is not None
    assert tel.flight.writer.drain(10)
    return [(p, decode(p.read_bytes())) for p in sorted(directory.glob("tooltap-flight-*"))]


def reported_live(rec: Recorder) -> tuple[list[tuple[str, str | None]], list[Any]]:
    """The problems (kind, call id) on the inference spans, and the calls the listeners got."""
    problems = [
        (str(a["tooltap.problem.kind"]), a.get("gen_ai.tool.call.id"))
        for s in rec.inference()
        for e in s.events
        if e.name == "tooltap.problem" and (a := dict(e.attributes or {}))
    ]
    return sorted(problems, key=repr), rec.calls()


#: What the SDKs raise on a fault.
SDK_ERRORS = (
    openai.APIError,
    anthropic.APIError,
    genai_errors.APIError,
    genai_errors.UnknownApiResponseError,
    httpx.HTTPError,
    httpx2.HTTPError,
    pydantic.ValidationError,  # google-genai on arguments that are not an object
)


@pytest.fixture(scope="module")
def reads_in_send() -> dict[str, bool]:
    """Per SDK of the whole-body cases: whether it reads a whole (not streamed) body inside
    ``send`` (set up before the tests' own fixtures instrument)."""
    return {dialect: _reads_in_send(dialect) for dialect in ("openai.chat", "anthropic")}


def _reads_in_send(dialect: str) -> bool:
    """Whether ``dialect``'s SDK reads a whole (not streamed) body inside ``send``, as
    openai does, rather than after ``send`` returned it unread (anthropic >= 2.17), where
    tooltap taps the body a reset then cuts. Told by the SDK itself, over a mock
    transport."""
    streamed: list[bool] = []

    class Spy(httpx2.Client):
        def send(self, request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
            streamed.append(bool(kwargs.get("stream")))
            return super().send(request, **kwargs)

    http = Spy(transport=httpx2.MockTransport(lambda _: httpx2.Response(200, json={})))
    options: dict[str, Any] = {"api_key": "probe", "http_client": http, "max_retries": 0}
    with http, contextlib.suppress(*SDK_ERRORS):
        if dialect == "anthropic":
            anthropic.Anthropic(base_url="http://probe.test", **options).messages.create(
                model="m", max_tokens=1, messages=[{"role": "user", "content": "hi"}]
            )
        else:
            openai.OpenAI(base_url="http://probe.test/v1", **options).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}]
            )
    assert len(streamed) == 1, streamed
    return not streamed[0]


async def run(driver: Any, sim: Any, client: Any = None, *, stream: bool = True) -> None:
    """One request through the SDK's sync client; what the SDK raises is the fault's
    doing. No SDK retries."""
    if client is None:
        retries = {} if driver.dialect == "google.genai" else {"max_retries": 0}
        client = driver.client(sim, sync=True, **retries)
    with contextlib.suppress(*SDK_ERRORS, json.JSONDecodeError):
        await driver.raw(client, stream)


@pytest.mark.parametrize(
    ("dialect", "stream"),
    [(d, True) for d in ("openai.chat", "openai.responses", "anthropic", "google")]
    + [(d, False) for d in ("openai.chat", "anthropic")],
)
@pytest.mark.parametrize("kind", sorted(FAULTS))
async def test_every_fault_replays_to_what_was_reported(
    reads_in_send: dict[str, bool],
    flight: Path,
    rec: Recorder,
    sim: Simulator,
    dialect: str,
    stream: bool,
    kind: str,
) -> None:
    inside = kind == "reset" and not stream and reads_in_send[dialect]
    sim.inject(FAULTS[kind])
    await run(DRIVERS[dialect], sim, stream=stream)
    tooltap.flush()
    found = records(flight)
    if inside:  # the client read the body inside send, which raised
        assert found == []  # tooltap saw no response: nothing to record
        return
    ((path, record),) = found  # one response: no SDK retries
    today = replay(record)
    assert record.reported is not None
    assert today.same_as(record.reported), (kind, today, record.reported)
    problems, calls = reported_live(rec)
    assert sorted(((p.kind, p.call_id) for p in today.problems), key=repr) == problems
    assert [(c.call_id, c.name, c.args) for c in today.calls] == calls
    (span,) = rec.inference()
    assert (span.attributes or {})["tooltap.flight_record"] == path.name


@pytest.mark.parametrize("kind", ["truncate_args", "invalid_json_args", "error_event"])
async def test_google_async_over_aiohttp_is_recorded(
    flight: Path, rec: Recorder, sim: Simulator, kind: str
) -> None:
    """google-genai's async client reads through aiohttp (line by line): recorded the same.
    A body the SDK raised on and dropped settles once it is collected."""
    driver = DRIVERS["google"]
    sim.inject(FAULTS[kind])
    models = driver.client(sim, sync=False)
    with contextlib.suppress(*SDK_ERRORS):
        await driver.raw(models, True)
    await models.client.aio.aclose()
    del models
    gc.collect()  # the body the SDK dropped settles as collected (at the next safe point)
    tooltap.flush()
    ((_, record),) = records(flight)
    assert record.reported is not None and replay(record).same_as(record.reported)
    problems, calls = reported_live(rec)
    assert sorted(((p.kind, p.call_id) for p in record.reported.problems), key=repr) == problems
    assert [(c.call_id, c.name, c.args) for c in record.reported.calls] == calls


def _secret_client(driver: Any, sim: Simulator) -> Any:
    headers = dict(SECRETS)
    if driver.dialect == "anthropic.messages":
        headers.pop("x-api-key")  # the client sends its own key there
        return driver.client(sim, sync=True, max_retries=0, default_headers=headers)
    headers.pop("authorization")
    return driver.client(
        sim,
        sync=True,
        max_retries=0,
        default_headers=headers,
        default_query={"key": KEY_IN_QUERY},
    )


@pytest.mark.parametrize("dialect", ["openai.chat", "anthropic"])
@pytest.mark.parametrize(
    ("fault", "problem"),
    [
        (Fault("truncate_bytes", at=300), "truncated_stream"),
        (Fault("invalid_json_args"), "invalid_json"),
        (Fault("error_event"), "error_event"),
        (Fault("buffered", seconds=0.4), "stream_buffered"),
    ],
    ids=["truncated", "invalid-args", "error-event", "proxy-buffered"],
)
async def test_a_broken_response_leaves_a_record_without_credentials(
    rec: Recorder, sim: Simulator, tmp_path: Path, dialect: str, fault: Fault, problem: str
) -> None:
    """Only bad responses are recorded by default; none holds what authenticated it."""
    tooltap.uninstrument()
    tooltap.instrument(
        tracer_provider=rec.tracer_provider,
        meter_provider=rec.meter_provider,
        flight_recorder=str(tmp_path),
        stream_buffered_wait=0.3,
        stream_buffered_events=2,
    )
    driver = DRIVERS[dialect]
    client = _secret_client(driver, sim)
    await driver.raw(client, True)  # a healthy turn: no record
    sim.inject(fault)
    await run(driver, sim, client)
    assert all(any(k in r.headers for k in SECRETS) for r in sim.requests)  # they were sent
    ((path, record),) = records(tmp_path)
    assert problem in {p.kind for p in (record.reported or Reported()).problems}
    assert path.stat().st_mode & 0o777 == 0o600
    data = path.read_bytes()
    for secret in (*SECRETS.values(), KEY_IN_QUERY, "sk-test", "sk-ant-test"):
        assert secret.encode() not in data
        assert secret.split()[-1][:12].encode() not in data
    assert "?" not in record.path and record.path.endswith(("/completions", "/messages"))
    assert replay(record).same_as(record.reported or Reported())


async def test_check_fails_on_a_doctored_record(
    flight: Path, sim: Simulator, tmp_path: Path
) -> None:
    sim.inject(FAULTS["invalid_json_args"])
    await run(DRIVERS["openai.chat"], sim)
    ((path, record),) = records(flight)
    cli = [sys.executable, "-m", "tooltap", "replay", "--check"]
    ok = subprocess.run([*cli, str(path)], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert "same as recorded" in ok.stdout
    assert record.reported is not None
    doctored = dataclasses.replace(
        record,
        reported=dataclasses.replace(record.reported, problems=(SeenProblem("truncated_json"),)),
    )
    bad = tmp_path / "doctored.jsonl"
    bad.write_bytes(encode(doctored))
    failed = subprocess.run([*cli, str(bad)], capture_output=True, text=True, timeout=60)
    assert failed.returncode == 1
    assert "DIFFERS" in failed.stdout
    lines = subprocess.run(
        [*cli[:-1], "--json", str(path)], capture_output=True, text=True, timeout=60
    )
    rows = [json.loads(line) for line in lines.stdout.splitlines()]
    assert {(r["name"], tuple(p["kind"] for p in r["problems"])) for r in rows} == {
        ("lookup_demo_value", ()),
        (None, ("invalid_json",)),
    }


@pytest.mark.parametrize("dialect", ["openai.chat", "anthropic"])
@pytest.mark.parametrize(
    "kind", ["invalid_json_args", "chunk_size", "truncate_bytes", "buffered", "reset"]
)
async def test_a_served_record_gives_the_sdk_the_same_calls(
    flight: Path, rec: Recorder, sim: Simulator, dialect: str, kind: str
) -> None:
    """The real SDK against ``RecordServer``: the same calls and problems as the first time,
    with the same chunk boundaries; a buffered stream is buffered again (the recorded wait
    before the burst is served too), a body cut by a reset breaks the client again."""
    driver = DRIVERS[dialect]
    sim.inject(FAULTS[kind])
    await run(driver, sim)
    ((_, first),) = records(flight)
    with RecordServer(first) as served:
        await run(driver, Served(served.url))
        assert served.served == 1
    second = records(flight)[-1][1]
    assert second.reported is not None and first.reported is not None
    assert second.reported.same_as(first.reported)
    buffered = SeenProblem("stream_buffered") in first.reported.problems
    assert buffered == (kind == "buffered")
    assert (first.end == "error") == (kind == "reset") and second.end == first.end
    assert second.transport_error == first.transport_error
    assert second.body == first.body
    assert [c.data for c in second.chunks] == [c.data for c in first.chunks]


def test_serve_from_the_command_line(flight: Path, sim: Simulator) -> None:
    """``tooltap replay --serve FILE`` prints its URL and answers an SDK until stopped."""
    sim.inject(FAULTS["invalid_json_args"])
    client = openai.OpenAI(base_url=sim.openai_base_url, api_key="sk-test", max_retries=0)
    request = DRIVERS["openai.chat"]._request([{"role": "user", "content": "hi"}])
    list(client.chat.completions.create(**request, stream=True))
    ((path, _),) = records(flight)
    tooltap.uninstrument()
    server = subprocess.Popen(
        [sys.executable, "-m", "tooltap", "replay", "--serve", str(path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.append(server.stdout.readline()))
        reader.start()
        reader.join(30)  # bounded: a server that never starts fails the test, not hangs it
        assert lines and " on " in lines[0], lines
        url = lines[0].split(" on ")[1].split(";")[0]
        served = openai.OpenAI(base_url=url + "/v1", api_key="sk-test", max_retries=0)
        chunks = list(served.chat.completions.create(**request, stream=True))
        ids = {c.id for chunk in chunks for c in (chunk.choices[0].delta.tool_calls or [])}
        assert len(ids - {None}) == 2
    finally:
        server.terminate()
        server.wait(10)


async def test_a_record_past_its_byte_cap_is_cut(
    rec: Recorder, sim: Simulator, tmp_path: Path
) -> None:
    """The first ``flight_recorder_bytes`` are kept; what tooltap reported is still whole,
    a healthy stream that long is not recorded, and ``--check`` cannot vouch for a cut one."""
    tooltap.uninstrument()
    tooltap.instrument(
        tracer_provider=rec.tracer_provider,
        meter_provider=rec.meter_provider,
        flight_recorder=str(tmp_path),
        flight_recorder_bytes=400,
    )
    driver = DRIVERS["openai.chat"]
    await run(driver, sim)  # healthy: nothing recorded
    sim.inject(FAULTS["invalid_json_args"])
    await run(driver, sim)
    ((path, record),) = records(tmp_path)
    assert record.cut and 0 < len(record.body) <= 400
    assert record.reported is not None
    assert {p.kind for p in record.reported.problems} == {"invalid_json"}
    assert len(record.reported.calls) == 1
    cli = [sys.executable, "-m", "tooltap", "replay", "--check", str(path)]
    done = subprocess.run(cli, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "cannot compare" in done.stdout


@pytest.mark.parametrize("kind", ["invalid_json_args", "error_event", "rate_limit"])
async def test_anthropic_s_own_span_names_the_record(
    flight: Path, rec: Recorder, sim: Simulator, kind: str
) -> None:
    """With anthropic's own tracing, tooltap adopts its span: the record's name goes there."""
    driver = DRIVERS["anthropic.traced"]
    sim.inject(FAULTS[kind])
    client = driver.client(sim, sync=True, tracer_provider=rec.tracer_provider, max_retries=0)
    await run(driver, sim, client)
    tooltap.flush()
    ((path, record),) = records(flight)
    assert record.reported is not None and replay(record).same_as(record.reported)
    (span,) = rec.inference()
    assert span.name.startswith("anthropic.")  # anthropic's, adopted
    assert (span.attributes or {})["tooltap.flight_record"] == path.name
