"""boto3's ``bedrock-runtime`` ``converse`` / ``converse_stream`` against the simulator: the
same per-call spans, metrics and problems as the httpx SDKs get, botocore's retries
counted, and what boto3 hands the app unchanged."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, EventStreamError

import tooltap
from tooltap.simulator import Fault, Simulator

MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"
DIALECT = "bedrock.converse"
TOOLS = {
    "tools": [
        {
            "toolSpec": {
                "name": "lookup_demo_value",
                "description": "Look a value up.",
                "inputSchema": {
                    "json": {
                        "type": "object",
                        "properties": {"key": {"type": "string"}},
                        "required": ["key"],
                    }
                },
            }
        }
    ]
}
USER = [{"role": "user", "content": [{"text": "How tall am I, and how heavy?"}]}]
VALUES = {"height": "170 cm", "weight": "70 kg"}


def client(sim: Simulator, attempts: int = 1) -> Any:
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=sim.bedrock_endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="not-a-secret",
        config=Config(retries={"total_max_attempts": attempts, "mode": "standard"}),
    )


def converse(bedrock: Any, messages: list[dict[str, Any]], stream: bool) -> list[Any]:
    """One turn; the toolUse blocks the app gets, as boto3 handed them over."""
    if not stream:
        response = bedrock.converse(modelId=MODEL, messages=messages, toolConfig=TOOLS)
        content = response["output"]["message"]["content"]
        return [b["toolUse"] for b in content if "toolUse" in b]
    response = bedrock.converse_stream(modelId=MODEL, messages=messages, toolConfig=TOOLS)
    return accumulate(list(response["stream"]))


def accumulate(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The toolUse blocks an app builds from the events boto3's EventStream yields."""
    blocks: dict[int, dict[str, Any]] = {}
    done: list[dict[str, Any]] = []
    for event in events:
        if "contentBlockStart" in event and "toolUse" in event["contentBlockStart"]["start"]:
            start = event["contentBlockStart"]
            blocks[start["contentBlockIndex"]] = {**start["start"]["toolUse"], "input": ""}
        elif "contentBlockDelta" in event and "toolUse" in event["contentBlockDelta"]["delta"]:
            delta = event["contentBlockDelta"]
            blocks[delta["contentBlockIndex"]]["input"] += delta["delta"]["toolUse"]["input"]
        elif "contentBlockStop" in event:
            block = blocks.pop(event["contentBlockStop"]["contentBlockIndex"], None)
            if block is not None:
                done.append({**block, "input": json.loads(block["input"] or "{}")})
    return done


STREAM = [pytest.param(s, id="stream" if s else "json") for s in (False, True)]


@pytest.mark.parametrize("stream", STREAM)
def test_a_turn_is_one_span_with_its_calls(rec: Any, sim: Simulator, stream: bool) -> None:
    uses = converse(client(sim), USER, stream)

    assert [u["input"] for u in uses] == [{"key": "height"}, {"key": "weight"}]
    assert rec.calls() == [(u["toolUseId"], u["name"], u["input"]) for u in uses]
    (span,) = rec.inference()
    attrs = dict(span.attributes or {})
    assert attrs["gen_ai.provider.name"] == "aws.bedrock"
    assert attrs["gen_ai.request.model"] == MODEL
    assert attrs["gen_ai.request.stream"] is stream
    assert attrs["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert attrs["gen_ai.usage.input_tokens"] > 0
    assert span.status.status_code.name == "UNSET"
    assert rec.total("tooltap.tool_calls", gen_ai__provider__name="aws.bedrock") == 2


@pytest.mark.parametrize("stream", STREAM)
def test_results_in_the_next_turn_end_the_tool_spans(
    rec: Any, sim: Simulator, stream: bool
) -> None:
    bedrock = client(sim)
    uses = converse(bedrock, USER, stream)
    calls = [
        tooltap.ToolCall(u["name"], u["input"], "aws.bedrock", u["toolUseId"], i, None, DIALECT)
        for i, u in enumerate(uses)
    ]
    results = tooltap.core.result_messages([(c, f"{c.args['key']}: 1") for c in calls])
    turn = [*USER, {"role": "assistant", "content": [{"toolUse": u} for u in uses]}, *results]
    response = bedrock.converse(modelId=MODEL, messages=turn, toolConfig=TOOLS)

    assert response["stopReason"] == "end_turn"
    tool_spans = rec.tools()
    assert sorted(s.attributes["gen_ai.tool.call.id"] for s in tool_spans) == sorted(
        u["toolUseId"] for u in uses
    )
    assert len(rec.inference()) == 2


@pytest.mark.parametrize("stream", STREAM)
def test_botocore_retries_are_counted_on_one_span(rec: Any, sim: Simulator, stream: bool) -> None:
    sim.inject(Fault("rate_limit", retry_after=0), dialect=DIALECT)
    uses = converse(client(sim, attempts=2), USER, stream)

    assert len(uses) == 2
    (span,) = rec.inference()
    attrs = dict(span.attributes or {})
    assert attrs["http.request.resend_count"] == 1
    assert "error.type" not in attrs
    failed = [e.attributes for e in span.events if e.name == "gen_ai.client.attempt.failed"]
    assert [(f["error.type"], f["http.response.status_code"]) for f in failed] == [
        ("rate_limited", 429)
    ]
    assert rec.total("tooltap.retries", error__type="rate_limited") == 1
    assert len(rec.calls()) == 2


@pytest.mark.parametrize(
    ("fault", "code", "error_type"),
    [
        (Fault("rate_limit", retry_after=0), "ThrottlingException", "rate_limited"),
        (Fault("insufficient_balance"), "ServiceQuotaExceededException", "rate_limited"),
        (Fault("server_error"), "InternalServerException", "server_error"),
        (Fault("overloaded"), "ServiceUnavailableException", "overloaded"),
    ],
)
def test_a_failed_call_is_one_span_in_error_with_its_class(
    rec: Any, sim: Simulator, fault: Fault, code: str, error_type: str
) -> None:
    sim.inject(fault, dialect=DIALECT)
    with pytest.raises(ClientError) as caught:
        converse(client(sim), USER, False)

    assert caught.value.response["Error"]["Code"] == code
    (span,) = rec.inference()
    assert span.status.status_code.name == "ERROR"
    assert span.attributes["error.type"] == error_type
    (point,) = rec.points("gen_ai.client.operation.duration")
    assert point[0]["error.type"] == error_type


def test_a_stream_error_event_fails_the_call(rec: Any, sim: Simulator) -> None:
    sim.inject(Fault("error_event"), dialect=DIALECT)
    bedrock = client(sim)
    response = bedrock.converse_stream(modelId=MODEL, messages=USER, toolConfig=TOOLS)
    with pytest.raises(EventStreamError) as caught:
        list(response["stream"])

    assert caught.value.response["Error"]["Code"] == "modelStreamErrorException"
    (span,) = rec.inference()
    assert span.attributes["error.type"] == "server_error"
    problems = [e for e in rec.events if isinstance(e, tooltap.ToolCallProblem)]
    assert "error_event" in [p.problem.kind for p in problems]
    assert rec.calls() == []


def test_a_cut_stream_is_a_truncated_call_though_boto3_says_nothing(
    rec: Any, sim: Simulator
) -> None:
    sim.inject(Fault("truncate_args"), dialect=DIALECT)
    bedrock = client(sim)
    response = bedrock.converse_stream(modelId=MODEL, messages=USER, toolConfig=TOOLS)
    events = list(response["stream"])  # boto3 ends the iteration quietly at the cut

    assert not any("messageStop" in e for e in events)
    kinds = [e.problem.kind for e in rec.events if isinstance(e, tooltap.ToolCallProblem)]
    assert kinds == ["truncated_json", "truncated_stream"]
    assert [name for _, name, _ in rec.calls()] == ["lookup_demo_value"]  # the first only
    (span,) = rec.inference()
    assert span.attributes["error.type"] == "truncated_stream"


@pytest.mark.parametrize("size", [1, 7, 64])
def test_any_chunking_yields_what_it_yields_uninstrumented(
    rec: Any, sim: Simulator, size: int
) -> None:
    def events() -> list[Any]:
        sim.inject(Fault("chunk_size", size=size), dialect=DIALECT)
        response = client(sim).converse_stream(modelId=MODEL, messages=USER, toolConfig=TOOLS)
        return [{k: v for k, v in e.items() if k != "metadata"} for e in response["stream"]]

    seen = events()
    tooltap.uninstrument()
    bare = events()
    rec.instrument()

    assert [list(e) for e in seen] == [list(e) for e in bare]
    uses = accumulate(seen)
    assert [(c, n, a) for c, n, a in rec.calls()] == [
        (u["toolUseId"], u["name"], u["input"]) for u in uses
    ]


def test_other_operations_pass_through(rec: Any, sim: Simulator) -> None:
    with pytest.raises(ClientError):
        client(sim).apply_guardrail(
            guardrailIdentifier="g", guardrailVersion="1", source="INPUT", content=[]
        )
    assert rec.inference() == []


def test_uninstrument_removes_the_botocore_wrappers(rec: Any, sim: Simulator) -> None:
    import botocore.client
    import botocore.endpoint
    import wrapt

    def wrapped() -> list[bool]:
        return [
            isinstance(cls.__dict__[name], wrapt.FunctionWrapper)
            for cls, name in (
                (botocore.client.BaseClient, "_make_api_call"),
                (botocore.endpoint.Endpoint, "_send"),
            )
        ]

    assert wrapped() == [True, True]
    tooltap.uninstrument()
    try:
        assert wrapped() == [False, False]
        assert len(converse(client(sim), USER, True)) == 2
        assert rec.inference() == []
    finally:
        rec.instrument()


@pytest.mark.parametrize("stream", STREAM)
def test_content_capture_records_converse_messages_and_the_answer(
    rec: Any, sim: Simulator, stream: bool
) -> None:
    tooltap.uninstrument()
    tooltap.instrument(
        tracer_provider=rec.tracer_provider,
        meter_provider=rec.meter_provider,
        capture_content="SPAN_ONLY",
    )
    bedrock = client(sim)
    uses = converse(bedrock, USER, False)
    calls = [
        tooltap.ToolCall(u["name"], u["input"], "aws.bedrock", u["toolUseId"], i, None, DIALECT)
        for i, u in enumerate(uses)
    ]
    results = tooltap.core.result_messages([(c, VALUES[c.args["key"]]) for c in calls])
    turn = [*USER, {"role": "assistant", "content": [{"toolUse": u} for u in uses]}, *results]
    if stream:
        events = bedrock.converse_stream(modelId=MODEL, messages=turn, toolConfig=TOOLS)
        text = "".join(
            e["contentBlockDelta"]["delta"].get("text", "")
            for e in events["stream"]
            if "contentBlockDelta" in e
        )
    else:
        response = bedrock.converse(modelId=MODEL, messages=turn, toolConfig=TOOLS)
        text = "".join(b.get("text", "") for b in response["output"]["message"]["content"])

    assert text == "You are 170 cm tall and weigh 70 kg."
    _, answer_span = rec.inference()
    (answer,) = json.loads(answer_span.attributes["gen_ai.output.messages"])
    assert [p for p in answer["parts"] if p["type"] == "text"] == [
        {"type": "text", "content": text}
    ]
    inputs = json.loads(answer_span.attributes["gen_ai.input.messages"])
    assert [p["type"] for p in inputs[1]["parts"]] == ["tool_call", "tool_call"]
    assert [p["id"] for p in inputs[2]["parts"]] == [u["toolUseId"] for u in uses]
    definitions = json.loads(answer_span.attributes["gen_ai.tool.definitions"])
    assert [d["name"] for d in definitions] == ["lookup_demo_value"]
