"""Responses background mode: a response polled or its stream resumed opens each call once.

The real openai SDK against the simulator. ``background: true`` answers ``queued``; the
app polls ``responses.retrieve(id)`` (``in_progress``, then ``completed``, then the same
again), or resumes the stream with ``retrieve(id, stream=True, starting_after=N)``. Each
delivered call has one span, opened by the read that first delivered it, ended ``ok`` by
its result: no ``unknown_call``, no duplicate, token usage counted once.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest

from tests.sdk.drivers import RESULTS, SCHEMA, resolve
from tests.sdk.test_sdk_conversations_apart import Seen, check_apart, questions, talk
from tooltap.simulator import Fault, Simulator

TOOL = "lookup_demo_value"
TOOLS = [{"type": "function", "name": TOOL, "parameters": SCHEMA}]


def client_of(sim: Simulator, *, sync: bool) -> Any:
    import openai

    cls = openai.OpenAI if sync else openai.AsyncOpenAI
    return cls(base_url=sim.openai_base_url, api_key="sk-test", max_retries=0)


def answer(history: list[Any], calls: list[Any]) -> None:
    """The calls and their results, appended to the history the next request sends."""
    for c in calls:
        history.append({"type": "function_call", "id": c.id, "call_id": c.call_id,
                        "name": c.name, "arguments": c.arguments})  # fmt: skip
    for c in calls:
        output = RESULTS[json.loads(c.arguments)["key"]]
        history.append({"type": "function_call_output", "call_id": c.call_id, "output": output})


class Polled:
    """Each response created in the background, polled until completed, then once more."""

    async def step(self, client: Any, history: list[Any], rewrite: bool = False) -> Any:
        reply = await resolve(client.responses.create(
            model="gpt-4o-mini", input=history, tools=TOOLS, background=True))  # fmt: skip
        assert reply.status == "queued"
        statuses = []
        while reply.status in ("queued", "in_progress"):
            reply = await resolve(client.responses.retrieve(reply.id))
            statuses.append(reply.status)
        assert statuses == ["in_progress", "completed"]
        again = await resolve(client.responses.retrieve(reply.id))  # the same, read again
        assert again.status == "completed" and len(again.output) == len(reply.output)
        return self.done(reply, history)

    @staticmethod
    def done(reply: Any, history: list[Any]) -> Any:
        calls = [item for item in reply.output if item.type == "function_call"]
        if not calls:
            history.append({"role": "assistant", "content": reply.output_text})
            return reply.id, []
        answer(history, calls)
        return reply.id, [(c.call_id, c.name) for c in calls]

    def user(self, text: str) -> Any:
        return {"role": "user", "content": text}


class Resumed(Polled):
    """Each response streamed in the background; the app stops reading at the first call's
    ``output_item.done`` (``inside``: at the second call's first arguments delta; answering,
    at the message's first part), resumes from there, then reads the whole stream again
    from its start (every event repeated)."""

    def __init__(self, inside: bool = False) -> None:
        self.inside = inside

    def stop(self, event: Any) -> bool:
        if event.type.startswith("response.content_part"):
            return True
        if self.inside:
            return event.type.endswith("arguments.delta") and event.output_index == 1
        return event.type == "response.output_item.done"

    async def step(self, client: Any, history: list[Any], rewrite: bool = False) -> Any:
        stream = await resolve(client.responses.create(
            model="gpt-4o-mini", input=history, tools=TOOLS, background=True,
            stream=True))  # fmt: skip
        response_id, after = "", -1
        async for event in iterate(stream):
            after = event.sequence_number
            if event.type == "response.created":
                response_id = event.response.id
            if self.stop(event):
                break
        await resolve(stream.close())
        reply = None
        for start in (after, -1):
            resumed = await resolve(client.responses.retrieve(
                response_id, stream=True, starting_after=start))  # fmt: skip
            sequence = []
            async for event in iterate(resumed):
                sequence.append(event.sequence_number)
                if event.type == "response.completed":
                    reply = event.response
            assert sequence[0] == start + 1
        assert reply is not None and reply.status == "completed"
        return self.done(reply, history)


async def iterate(stream: Any) -> Any:
    """The events of a sync or async SDK stream."""
    if hasattr(stream, "__aiter__"):
        async for event in stream:
            yield event
    else:
        for event in stream:
            yield event


def check_once(rec: Any, seen: Seen) -> None:
    """Every call: one span, ended ok by its own conversation; each response's usage once."""
    check_apart(rec, seen)
    assert rec.total("tooltap.tool_results", tooltap__result="unknown_call") == 0
    assert rec.total("tooltap.tool_results", tooltap__result="duplicate") == 0
    response = {s.context.span_id: (s.attributes or {}).get("gen_ai.response.id")
                for s in rec.inference()}  # fmt: skip
    ids = [(response[s.parent.span_id], (s.attributes or {})["gen_ai.tool.call.id"])
           for s in rec.tools()]  # fmt: skip
    assert len(set(ids)) == len(ids)  # no call of a response opened twice
    problems = [e.attributes for s in rec.inference() for e in s.events
                if e.name == "tooltap.problem"]  # fmt: skip
    assert problems == []  # a stream resumed inside a call is no mismatch of its arguments
    usage = rec.points("gen_ai.client.token.usage")
    inputs = sum(n for attrs, n in usage if attrs["gen_ai.token.type"] == "input")
    assert inputs == len(seen)  # once per response, however often it was read


@pytest.mark.parametrize(
    "api", [Polled(), Resumed(), Resumed(inside=True)], ids=["polled", "resumed", "inside-call"]
)
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
async def test_background_calls_open_once_and_end_ok(rec: Any, sim: Simulator, api: Polled,
                                                     sync: bool) -> None:  # fmt: skip
    seen: Seen = {}
    client = client_of(sim, sync=sync)
    await talk(api, client, 0, questions(0, False), seen, threading.Lock())
    await resolve(client.close())
    assert sum(n for _, n in seen.values()) == 4  # two questions, two calls each
    check_once(rec, seen)
    gets = [r for r in sim.requests if r.method == "GET"]
    assert gets and all(r.dialect == "openai.responses" for r in gets)


@pytest.mark.parametrize("api", [Polled(), Resumed()], ids=["polled", "resumed"])
async def test_concurrent_background_conversations_never_cross(api: Polled, rec: Any) -> None:
    """20 conversations at once, with ids every conversation reuses (``call_0``)."""
    seen: Seen = {}
    lock = threading.Lock()
    with Simulator(ids="numbered") as sim:
        client = client_of(sim, sync=False)
        talks = (talk(api, client, n, questions(n, False), seen, lock) for n in range(20))
        await asyncio.wait_for(asyncio.gather(*talks), 60)
        await client.close()
    check_once(rec, seen)


def test_raw_httpx_polls_open_each_call_once(rec: Any, sim: Simulator) -> None:
    """No SDK: the transport tap reads ``GET /v1/responses/{id}`` like the response."""
    import httpx

    import tooltap

    body = {"model": "gpt-4o-mini", "input": "How tall am I, and how much do I weigh?",
            "tools": TOOLS, "background": True}  # fmt: skip
    with httpx.Client(base_url=sim.openai_base_url) as http:
        created = http.post("/responses", json=body).json()
        assert created["status"] == "queued"
        polls = [http.get(f"/responses/{created['id']}").json() for _ in range(3)]
        assert [p["status"] for p in polls] == ["in_progress", "completed", "completed"]
        calls = [i for i in polls[-1]["output"] if i["type"] == "function_call"]
        outputs = [
            {"type": "function_call_output", "call_id": c["call_id"],
             "output": RESULTS[json.loads(c["arguments"])["key"]]}
            for c in calls
        ]  # fmt: skip
        nxt = {**body, "background": False, "previous_response_id": created["id"],
               "input": outputs}  # fmt: skip
        http.post("/responses", json=nxt).raise_for_status()
    tooltap.flush()
    tools = rec.tools()
    assert len(tools) == len(calls) == 2
    assert {dict(s.attributes or {})["tooltap.result"] for s in tools} == {"ok"}
    assert rec.total("tooltap.tool_results") == 2


def test_a_broken_call_read_back_again_is_one_broken_span(rec: Any, sim: Simulator) -> None:
    """A call whose arguments are not JSON, polled twice completed: one span with its error
    (the other call, never answered, ends orphaned at the flush)."""
    import tooltap

    sim.inject(Fault("invalid_json_args"), dialect="openai.responses")
    client = client_of(sim, sync=True)
    created = client.responses.create(model="gpt-4o-mini", input="How tall am I?",
                                      tools=TOOLS, background=True)  # fmt: skip
    polls = [client.responses.retrieve(created.id).status for _ in range(3)]
    assert polls == ["in_progress", "completed", "completed"]
    tooltap.flush()
    spans = [dict(s.attributes or {}) for s in rec.tools()]
    assert sorted(a.get("error.type") for a in spans) == ["invalid_json", "orphaned"]
    assert rec.total("tooltap.tool_calls", tooltap__outcome="invalid_json") == 1
