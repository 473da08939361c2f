"""The lookup conversation through each real SDK: one inference span per call, tool spans per id.

For openai chat, openai responses, anthropic (with and without its own tracing) and
google-genai; sync and async clients; streamed (the SDKs' stream helpers) and not.
"""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.trace import SpanKind

from tests.sdk.drivers import DRIVERS, SCHEMA, USER, drain, entered, resolve
from tooltap.simulator import Simulator

MODES = [
    pytest.param(sync, stream, id=f"{'sync' if sync else 'async'}-{'stream' if stream else 'json'}")
    for sync in (True, False)
    for stream in (False, True)
]


@pytest.mark.parametrize("name", list(DRIVERS))
@pytest.mark.parametrize(("sync", "stream"), MODES)
async def test_lookup_conversation(
    rec: Any, sim: Simulator, name: str, sync: bool, stream: bool
) -> None:
    driver = DRIVERS[name]
    client = driver.client(sim, sync=sync, tracer_provider=rec.tracer_provider)

    turn = await driver.turn1(client, stream)

    # Turn 1: one inference span, ended, with the request's attributes.
    (first,) = rec.inference()
    attrs = dict(first.attributes or {})
    assert first.kind is SpanKind.CLIENT
    assert attrs["gen_ai.operation.name"] == (
        "generate_content" if driver.dialect == "google.genai" else "chat"
    )
    assert attrs["gen_ai.provider.name"] == driver.provider
    assert attrs["gen_ai.request.model"] == driver.model
    assert attrs["server.address"] == "127.0.0.1"
    assert attrs["server.port"] == int(sim.url.rsplit(":", 1)[1])
    if name == "anthropic.traced":  # anthropic's attributes, as anthropic records them
        assert attrs.get("gen_ai.request.stream", False) is stream
        assert attrs["gen_ai.request.max_tokens"] == driver.params["gen_ai.request.max_tokens"]
        assert "gen_ai.request.stop_sequences" not in attrs  # content, to anthropic
        assert attrs["anthropic.message.stop_reason"] == "tool_use"
        assert "gen_ai.response.finish_reasons" not in attrs
    else:
        assert attrs["gen_ai.request.stream"] is stream
        for key, value in driver.params.items():
            assert attrs[key] == value, key
        assert attrs["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert "error.type" not in attrs and "tooltap.error.type" not in attrs
    # What samplers see: the (S) attributes are there when the span starts.
    sampling = ("gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model")
    sampling += ("server.address", "server.port")
    assert {k: rec.at_start(first)[k] for k in sampling} == {k: attrs[k] for k in sampling}
    if name == "anthropic.traced":  # anthropic's own span, adopted: still exactly one
        assert first.instrumentation_scope.name == "com.anthropic.sdk.python"
    else:
        assert first.instrumentation_scope.name == "tooltap"

    # The calls tooltap reported are the ones the SDK assembled, in order.
    assert rec.calls() == turn.calls
    assert [args["key"] for _, _, args in turn.calls] == ["height", "weight"]
    assert rec.tools() == []  # still open: no result sent yet

    text = await driver.turn2(client, stream, turn)
    assert "170" in text and "70 kg" in text

    second = [s for s in rec.inference() if s is not first]
    assert len(second) == 1
    tools = rec.tools()
    assert sorted(s.attributes["gen_ai.tool.call.id"] for s in tools) == sorted(
        cid for cid, _, _ in turn.calls
    )
    for span in tools:
        assert span.name == "execute_tool lookup_demo_value"
        assert span.parent is not None and span.parent.span_id == first.context.span_id
        assert span.attributes["tooltap.result"] == "ok"
    linked = {link.context.span_id for link in second[0].links}
    assert linked == {s.context.span_id for s in tools}

    assert rec.total("tooltap.tool_calls", tooltap__outcome="ok") == 2
    assert rec.total("tooltap.tool_results", tooltap__result="ok") == 2
    assert rec.total("gen_ai.client.operation.duration") == 2


STRICT = {**SCHEMA, "additionalProperties": False}


async def _chat_parse(client: Any) -> list[tuple[Any, ...]]:
    tool = {"name": "lookup_demo_value", "parameters": STRICT, "strict": True}
    completion = await resolve(
        client.chat.completions.parse(
            model="gpt-4o-mini", messages=[{"role": "user", "content": USER}],
            tools=[{"type": "function", "function": tool}],
        )
    )  # fmt: skip
    calls = completion.choices[0].message.tool_calls
    return [(c.id, c.function.name, c.function.parsed_arguments) for c in calls]


async def _responses_parse(client: Any) -> list[tuple[Any, ...]]:
    tool = {"type": "function", "name": "lookup_demo_value", "parameters": STRICT, "strict": True}
    response = await resolve(client.responses.parse(model="gpt-4.1", input=USER, tools=[tool]))
    items = [i for i in response.output if i.type == "function_call"]
    return [(i.call_id, i.name, i.parsed_arguments) for i in items]


async def _beta_messages(client: Any, stream: bool) -> list[tuple[Any, ...]]:
    request = DRIVERS["anthropic"]._request([{"role": "user", "content": USER}])
    if stream:
        async with entered(client.beta.messages.stream(**request, betas=["x"])) as events:
            await drain(events)
            message = await resolve(events.get_final_message())
    else:
        message = await resolve(client.beta.messages.create(**request, betas=["x"]))
    return [(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"]


ENTRY_POINTS = {
    "chat.completions.parse": ("openai.chat", _chat_parse),
    "responses.parse": ("openai.responses", _responses_parse),
    "beta.messages.create": ("anthropic", lambda c: _beta_messages(c, False)),
    "beta.messages.stream": ("anthropic.traced", lambda c: _beta_messages(c, True)),
}


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
async def test_other_entry_points_are_one_call(
    rec: Any, sim: Simulator, entry: str, sync: bool
) -> None:
    name, call = ENTRY_POINTS[entry]
    client = DRIVERS[name].client(sim, sync=sync, tracer_provider=rec.tracer_provider)

    calls = await call(client)

    assert [args["key"] for _, _, args in calls] == ["height", "weight"]
    assert rec.calls() == calls
    (span,) = rec.inference()
    assert span.attributes["gen_ai.provider.name"] == DRIVERS[name].provider
