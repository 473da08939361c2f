"""anthropic's ``AnthropicBedrock`` and ``AnthropicVertex`` against the simulator: the
Anthropic dialect over Bedrock's event-stream and Vertex's paths, provider named by the
cloud; and the same paths over raw httpx, with no SDK."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import anthropic
import httpx
import pytest

import tooltap
from tooltap._core.eventstream import EventStreamDecoder
from tooltap.simulator import Fault, Simulator

BEDROCK_MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"
VERTEX_MODEL = "claude-3-5-sonnet@20240620"
TOOLS = [
    {
        "name": "lookup_demo_value",
        "input_schema": {"type": "object", "properties": {"key": {"type": "string"}}},
    }
]
MESSAGES = [{"role": "user", "content": "How tall am I, and how heavy?"}]
STREAM = [pytest.param(s, id="stream" if s else "json") for s in (False, True)]


def bedrock_client(sim: Simulator, **options: Any) -> anthropic.AnthropicBedrock:
    return anthropic.AnthropicBedrock(
        aws_access_key="AKIDEXAMPLE",
        aws_secret_key="not-a-secret",
        aws_region="us-east-1",
        base_url=sim.url,
        **{"max_retries": 0, **options},
    )


def vertex_client(sim: Simulator) -> anthropic.AnthropicVertex:
    return anthropic.AnthropicVertex(
        access_token="not-a-token",
        project_id="p",
        region="us-east5",
        base_url=sim.url + "/v1",
        max_retries=0,
    )


def create(client: Any, model: str, stream: bool) -> list[Any]:
    """One turn; the tool_use blocks the app gets."""
    if not stream:
        message = client.messages.create(
            model=model, max_tokens=100, messages=MESSAGES, tools=TOOLS
        )
    else:
        with client.messages.stream(
            model=model, max_tokens=100, messages=MESSAGES, tools=TOOLS
        ) as events:
            message = events.get_final_message()
    return [b for b in message.content if b.type == "tool_use"]


@pytest.mark.parametrize("stream", STREAM)
@pytest.mark.parametrize(
    ("cloud", "model", "provider", "path_end"),
    [
        ("bedrock", BEDROCK_MODEL, "aws.bedrock", ("/invoke", "/invoke-with-response-stream")),
        ("vertex", VERTEX_MODEL, "gcp.vertex_ai", (":rawPredict", ":streamRawPredict")),
    ],
)
def test_a_turn_is_one_span_with_its_calls(
    rec: Any,
    sim: Simulator,
    stream: bool,
    cloud: str,
    model: str,
    provider: str,
    path_end: tuple[str, str],
) -> None:
    client = bedrock_client(sim) if cloud == "bedrock" else vertex_client(sim)
    uses = create(client, model, stream)

    assert sim.requests[-1].path.endswith(path_end[stream])
    assert [u.input for u in uses] == [{"key": "height"}, {"key": "weight"}]
    assert rec.calls() == [(u.id, u.name, u.input) for u in uses]
    (span,) = rec.inference()
    attrs = dict(span.attributes or {})
    assert attrs["gen_ai.provider.name"] == provider
    assert attrs["gen_ai.request.model"] == model
    assert attrs["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert rec.total("tooltap.tool_calls", gen_ai__provider__name=provider) == 2


def test_a_bedrock_exception_mid_stream_fails_the_call(rec: Any, sim: Simulator) -> None:
    sim.inject(Fault("error_event"), dialect="anthropic.messages")
    with pytest.raises(anthropic.APIStatusError):
        create(bedrock_client(sim), BEDROCK_MODEL, True)

    (span,) = rec.inference()
    assert span.status.status_code.name == "ERROR"
    assert span.attributes["error.type"] == "server_error"  # modelStreamErrorException
    problems = [e.problem for e in rec.events if isinstance(e, tooltap.ToolCallProblem)]
    assert ("error_event", "modelStreamErrorException") in [(p.kind, p.detail) for p in problems]


def test_a_cut_bedrock_stream_is_a_truncated_call_though_the_sdk_says_nothing(
    rec: Any, sim: Simulator
) -> None:
    sim.inject(Fault("truncate_args"), dialect="anthropic.messages")
    create(bedrock_client(sim), BEDROCK_MODEL, True)  # the SDK ends quietly at the cut

    kinds = [e.problem.kind for e in rec.events if isinstance(e, tooltap.ToolCallProblem)]
    assert kinds == ["truncated_json", "truncated_stream"]
    assert [name for _, name, _ in rec.calls()] == ["lookup_demo_value"]
    (span,) = rec.inference()
    assert span.attributes["error.type"] == "truncated_stream"


def test_raw_httpx_to_bedrock_invoke_stream_is_seen_without_an_sdk(
    rec: Any, sim: Simulator
) -> None:
    path = f"/model/{BEDROCK_MODEL}/invoke-with-response-stream"
    body = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 100, "messages": MESSAGES}
    with (
        httpx.Client(base_url=sim.url) as http,
        http.stream("POST", path, json={**body, "tools": TOOLS}) as response,
    ):
        raw = b"".join(response.iter_raw())

    assert response.headers["content-type"] == "application/vnd.amazon.eventstream"
    messages = EventStreamDecoder().feed(raw)  # the app read the event-stream as sent
    assert messages and {m.headers[":event-type"] for m in messages} == {"chunk"}
    (span,) = rec.inference()
    attrs = dict(span.attributes or {})
    assert (attrs["gen_ai.provider.name"], attrs["gen_ai.request.model"]) == (
        "aws.bedrock",
        BEDROCK_MODEL,
    )
    assert attrs["gen_ai.request.stream"] is True
    assert [name for _, name, _ in rec.calls()] == ["lookup_demo_value"] * 2


def test_raw_httpx_to_vertex_stream_raw_predict_is_seen_without_an_sdk(
    rec: Any, sim: Simulator
) -> None:
    path = f"/v1/projects/p/locations/us-east5/publishers/anthropic/models/{VERTEX_MODEL}"
    body = {"anthropic_version": "vertex-2023-10-16", "max_tokens": 100, "stream": True}
    with httpx.Client(base_url=sim.url) as http:
        http.post(path + ":streamRawPredict", json={**body, "messages": MESSAGES, "tools": TOOLS})

    (span,) = rec.inference()
    attrs = dict(span.attributes or {})
    assert (attrs["gen_ai.provider.name"], attrs["gen_ai.request.model"]) == (
        "gcp.vertex_ai",
        VERTEX_MODEL,
    )
    assert [name for _, name, _ in rec.calls()] == ["lookup_demo_value"] * 2


#: An application inference profile: a Claude model whose id names no model family.
PROFILE = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/k3v9x2claude"


@pytest.mark.parametrize("stream", STREAM)
def test_claude_behind_an_inference_profile_is_told_by_its_body(
    rec: Any, sim: Simulator, stream: bool
) -> None:
    uses = create(bedrock_client(sim), PROFILE, stream)

    assert "anthropic" not in sim.requests[-1].path
    assert [u.input for u in uses] == [{"key": "height"}, {"key": "weight"}]
    assert rec.calls() == [(u.id, u.name, u.input) for u in uses]
    (span,) = rec.inference()
    attrs = dict(span.attributes or {})
    assert (attrs["gen_ai.provider.name"], attrs["gen_ai.request.model"]) == (
        "aws.bedrock",
        PROFILE,
    )


def test_raw_httpx_to_an_inference_profile_is_seen_by_its_body(rec: Any, sim: Simulator) -> None:
    path = f"/model/{quote(PROFILE, safe='')}/invoke-with-response-stream"
    body = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 100, "messages": MESSAGES}
    with httpx.Client(base_url=sim.url) as http:
        http.post(path, json={**body, "tools": TOOLS})

    (span,) = rec.inference()
    assert span.attributes is not None and span.attributes["gen_ai.request.model"] == PROFILE
    assert [name for _, name, _ in rec.calls()] == ["lookup_demo_value"] * 2


#: Other model families' ``/invoke`` bodies: tooltap reads none of them, and says nothing.
OTHER_FAMILIES = {
    "meta.llama3-1-70b-instruct-v1:0": {"prompt": "How tall am I?", "max_gen_len": 100},
    "mistral.mistral-large-2407-v1:0": {"messages": MESSAGES, "max_tokens": 100},
    "ai21.jamba-1-5-large-v1:0": {"messages": MESSAGES, "max_tokens": 100, "model": "j"},
    "amazon.nova-pro-v1:0": {
        "schemaVersion": "messages-v1",
        "messages": [{"role": "user", "content": [{"text": "How tall am I?"}]}],
        "inferenceConfig": {"maxTokens": 100},
    },
    PROFILE: {"prompt": "How tall am I?", "max_gen_len": 100},
}


@pytest.mark.parametrize("model", list(OTHER_FAMILIES))
@pytest.mark.parametrize("suffix", ["invoke", "invoke-with-response-stream"])
def test_other_model_families_on_invoke_are_left_alone(
    rec: Any, sim: Simulator, model: str, suffix: str
) -> None:
    with httpx.Client(base_url=sim.url) as http:
        http.post(f"/model/{quote(model, safe='')}/{suffix}", json=OTHER_FAMILIES[model])

    assert len(sim.requests) == 1  # it was sent...
    assert rec.inference() == []  # ...and tooltap saw no call of its own in it
    assert [e for e in rec.events if isinstance(e, tooltap.ToolCallProblem)] == []
