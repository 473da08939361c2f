"""``tooltap.conversation(id, root_span=True)``: one conversation is one trace, no other code."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.trace import SpanKind, StatusCode

import tooltap
from tests.sdk.drivers import DRIVERS
from tooltap.simulator import Simulator


async def _converse(rec: Any, sim: Simulator, name: str, conversation_id: str) -> None:
    driver = DRIVERS[name]
    client = driver.client(sim, sync=True, tracer_provider=rec.tracer_provider)
    with tooltap.conversation(conversation_id, root_span=True):
        turn = await driver.turn1(client, False)
        await driver.turn2(client, False, turn)


@pytest.mark.parametrize("name", ["openai.chat", "anthropic", "google"])
async def test_each_conversation_is_one_trace(rec: Any, sim: Simulator, name: str) -> None:
    for conversation_id in ("conv-a", "conv-b"):
        await _converse(rec, sim, name, conversation_id)
    roots = [s for s in rec.spans() if s.name == "conversation"]
    assert [r.attributes["gen_ai.conversation.id"] for r in roots] == ["conv-a", "conv-b"]
    assert all(r.parent is None and r.kind is SpanKind.INTERNAL for r in roots)
    assert all(r.instrumentation_scope.name == "tooltap" for r in roots)
    for root in roots:
        trace_id = root.context.trace_id
        inference = [s for s in rec.inference() if s.context.trace_id == trace_id]
        tools = [s for s in rec.tools() if s.context.trace_id == trace_id]
        assert len(inference) == 2 and len(tools) == 2  # both requests, both tool calls
        assert all(s.parent is not None and s.parent.span_id == root.context.span_id
                   for s in inference)  # fmt: skip
    everything = {s.context.trace_id for s in rec.spans()}
    assert everything == {r.context.trace_id for r in roots}  # two conversations, two traces


async def test_without_root_span_each_request_is_its_own_trace(rec: Any, sim: Simulator) -> None:
    driver = DRIVERS["openai.chat"]
    client = driver.client(sim, sync=True)
    with tooltap.conversation("conv-a"):
        turn = await driver.turn1(client, False)
        await driver.turn2(client, False, turn)
    assert len({s.context.trace_id for s in rec.inference()}) == 2
    assert not [s for s in rec.spans() if s.name == "conversation"]


def test_an_exception_leaves_unchanged_and_marks_the_root_failed(rec: Any) -> None:
    error = ValueError("the app's own")
    with pytest.raises(ValueError) as raised, tooltap.conversation("conv-x", root_span=True):
        raise error
    assert raised.value is error
    (root,) = rec.spans()
    assert root.status.status_code is StatusCode.ERROR


def test_not_instrumented_no_span_and_the_block_runs(rec: Any) -> None:
    tooltap.uninstrument()
    ran = []
    with tooltap.conversation("conv-y", root_span=True):
        ran.append(True)
    assert ran == [True] and rec.spans() == []
