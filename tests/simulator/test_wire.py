"""The simulator's bytes against real recordings (tests/fixtures/corpus) and tooltap's own
parser."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx2
import pytest

from tests.corpus import CASES
from tooltap.core import StreamParser, parse_response
from tooltap.simulator import Fault, Simulator

REQUESTS: dict[str, tuple[str, dict[str, Any]]] = {
    "openai.chat": (
        "/v1/chat/completions",
        {
            "model": "gpt-4o-mini",
            "messages": [{"role": "user", "content": "x"}],
            "tools": [{"type": "function", "function": {"name": "lookup_demo_value"}}],
        },
    ),
    "openai.responses": (
        "/v1/responses",
        {
            "model": "gpt-4.1",
            "input": "x",
            "tools": [{"type": "function", "name": "lookup_demo_value"}],
        },
    ),
    "anthropic.messages": (
        "/v1/messages",
        {
            "model": "claude-x",
            "messages": [{"role": "user", "content": "x"}],
            "tools": [{"name": "lookup_demo_value"}],
        },
    ),
    "google.genai": (
        "/v1beta/models/gemini-2.5-flash:generateContent",
        {
            "contents": [{"role": "user", "parts": [{"text": "x"}]}],
            "tools": [{"functionDeclarations": [{"name": "lookup_demo_value"}]}],
        },
    ),
    "bedrock.converse": (
        "/model/anthropic.claude-x/converse",
        {
            "messages": [{"role": "user", "content": [{"text": "x"}]}],
            "toolConfig": {"tools": [{"toolSpec": {"name": "lookup_demo_value"}}]},
        },
    ),
    "ollama.chat": (
        "/api/chat",
        {
            "model": "llama3.2",
            "stream": False,
            "messages": [{"role": "user", "content": "x"}],
            "tools": [{"type": "function", "function": {"name": "lookup_demo_value"}}],
        },
    ),
    "cohere.chat": (
        "/v2/chat",
        {
            "model": "command-a",
            "messages": [{"role": "user", "content": "x"}],
            "tools": [{"type": "function", "function": {"name": "lookup_demo_value"}}],
        },
    ),
}
DIALECTS = list(REQUESTS)
#: The stream framing of the dialects whose streams are not SSE.
FRAMING = {"bedrock.converse": "eventstream", "ollama.chat": "ndjson"}
#: The model a response names (Converse and Cohere bodies name none).
MODELS = {"google.genai": "gemini-2.5-flash", "bedrock.converse": None, "cohere.chat": None}


def fetch(sim: Simulator, http: httpx2.Client, dialect: str, stream: bool) -> bytes:
    path, body = REQUESTS[dialect]
    if stream and dialect == "google.genai":
        path = path.replace(":generateContent", ":streamGenerateContent?alt=sse")
    elif stream and dialect == "bedrock.converse":
        path += "-stream"
    elif stream:
        body = {**body, "stream": True}
    return http.post(sim.url + path, json=body).content


def parse(dialect: str, body: bytes, stream: bool) -> Any:
    if not stream:
        return parse_response(body, dialect)
    parser = StreamParser(dialect, framing=FRAMING.get(dialect, "sse"))  # type: ignore[arg-type]
    for at in range(0, len(body), 5):
        parser.feed(body[at : at + 5])
    return parser.close()


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_tooltap_core_reads_the_simulator(
    sim: Simulator, http: httpx2.Client, dialect: str, stream: bool
) -> None:
    parsed = parse(dialect, fetch(sim, http, dialect, stream), stream)
    assert [(c.name, c.args) for c in parsed.calls] == [
        ("lookup_demo_value", {"key": "height"}),
        ("lookup_demo_value", {"key": "weight"}),
    ]
    assert parsed.complete and parsed.problems == ()
    if not (stream and dialect == "openai.chat"):  # chat streams report usage only on request
        assert parsed.usage is not None and parsed.usage.output_tokens
    assert parsed.model == MODELS.get(dialect, REQUESTS[dialect][1].get("model"))


@pytest.mark.parametrize(
    ("fault", "kind", "lost"),
    [
        (Fault("truncate_args"), {"truncated_json", "truncated_stream"}, "weight"),
        (Fault("invalid_json_args"), {"invalid_json"}, "height"),
        (Fault("error_event"), {"error_event"}, "weight"),
    ],
    ids=["truncate_args", "invalid_json_args", "error_event"],
)
@pytest.mark.parametrize("dialect", DIALECTS)
def test_faults_show_up_as_core_problems(
    sim: Simulator, http: httpx2.Client, dialect: str, fault: Fault, kind: set[str], lost: str
) -> None:
    sim.inject(fault)
    parsed = parse(dialect, fetch(sim, http, dialect, True), True)
    assert {p.kind for p in parsed.problems} & kind
    assert {"key": lost} not in [c.args for c in parsed.calls]


def _event_names(body: bytes) -> set[str]:
    return set(re.findall(rb"^event: (\S+)", body, re.MULTILINE))  # type: ignore[arg-type]


@pytest.mark.parametrize("dialect", ["openai.responses", "anthropic.messages"])
def test_event_names_are_the_recorded_ones(
    sim: Simulator, http: httpx2.Client, dialect: str
) -> None:
    recorded: set[bytes] = set()
    for case in CASES:
        if case.dialect == dialect and case.stream:
            recorded |= _event_names(case.body)
    ours = _event_names(fetch(sim, http, dialect, True))
    sim.inject(Fault("error_event"))
    ours |= _event_names(fetch(sim, http, dialect, True))
    documented = {b"error", b"response.failed"}  # error events: not in the recordings
    assert ours <= recorded | documented, ours - recorded


def _data(body: bytes) -> list[Any]:
    lines = [line[6:] for line in body.split(b"\n") if line.startswith(b"data: ")]
    return [json.loads(line) for line in lines if line.strip() != b"[DONE]"]


def test_chat_chunks_have_the_recorded_keys(sim: Simulator, http: httpx2.Client) -> None:
    recorded = [
        chunk
        for case in CASES
        if case.name == "openai-chat/stream_parallel_gpt4omini_usage_null"
        for chunk in _data(case.body)
    ]
    path, body = REQUESTS["openai.chat"]
    raw = http.post(
        sim.url + path, json={**body, "stream": True, "stream_options": {"include_usage": True}}
    ).content
    ours = _data(raw)
    assert raw.endswith(b"data: [DONE]\n\n")
    assert {frozenset(c) for c in ours} <= {frozenset(c) | {"service_tier"} for c in recorded}
    assert ours[-1]["choices"] == [] and ours[-1]["usage"]["total_tokens"] > 0
    assert all(c["usage"] is None for c in ours[:-1])
    assert [c["choices"][0]["finish_reason"] for c in ours[:-1]][-1] == "tool_calls"


def test_google_stream_uses_crlf_like_the_recordings(sim: Simulator, http: httpx2.Client) -> None:
    recorded = next(c for c in CASES if c.name == "google/stream_call_get_capital")
    assert recorded.body.count(b"\r\n\r\n") >= 1
    ours = fetch(sim, http, "google.genai", True)
    assert ours.count(b"\r\n\r\n") == ours.count(b"data: ") == 2
    assert b"\n\n" not in ours.replace(b"\r\n\r\n", b"")


def test_responses_turn_two_with_previous_response_id(sim: Simulator, http: httpx2.Client) -> None:
    first = http.post(sim.url + "/v1/responses", json=REQUESTS["openai.responses"][1]).json()
    outputs = [
        {"type": "function_call_output", "call_id": item["call_id"], "output": value}
        for item, value in zip(first["output"], ["170 cm", "70 kg"], strict=True)
    ]
    second = http.post(
        sim.url + "/v1/responses",
        json={
            "model": "gpt-4.1",
            "previous_response_id": first["id"],
            "input": outputs,
            "tools": REQUESTS["openai.responses"][1]["tools"],
        },
    ).json()
    assert second["previous_response_id"] == first["id"]
    assert second["output"][0]["content"][0]["text"] == "You are 170 cm tall and weigh 70 kg."
