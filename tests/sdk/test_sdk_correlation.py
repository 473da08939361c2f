"""Per-call telemetry in real traffic: many conversations whose call ids collide, or are absent.

Real SDKs against the simulator in each id mode (``ID_MODES``): unique ids, ids numbered per
response (``call_0``), Kimi's per conversation (``functions.<name>:<n>``), identical calls
numbered per response, and Gemini's calls without ids. Conversations run one after another
(with a follow-up question re-sending the whole history), from 8 threads of sync clients,
or as 50 concurrent asyncio tasks. Every call the app received has exactly one
``execute_tool`` span, ended ok, parented to the inference span of the response that
delivered it, and nothing is orphaned, duplicate or unknown.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from google.genai import types

from tests.sdk.drivers import DRIVERS, RESULTS, SCHEMA, resolve
from tooltap.simulator import ID_MODES, Simulator

TOOL = "lookup_demo_value"
QUESTIONS = ("How tall am I, and how much do I weigh?", "And again, please?")
#: (call id, name) of the calls of each response the app received, by response id.
Delivered = dict[str, list[tuple[str | None, str]]]


class Chat:
    dialect = "openai.chat"

    def user(self, text: str) -> Any:
        return {"role": "user", "content": text}

    async def step(self, client: Any, history: list[Any], rewrite: bool = False) -> Any:
        tools = [{"type": "function", "function": {"name": TOOL, "parameters": SCHEMA}}]
        reply = await resolve(client.chat.completions.create(
            model="gpt-4o-mini", messages=history, tools=tools))  # fmt: skip
        message = reply.choices[0].message
        calls = message.tool_calls or []
        if not calls:
            history.append({"role": "assistant", "content": message.content})
            return reply.id, []
        history.append({"role": "assistant", "tool_calls": [
            {"id": c.id, "type": "function",
             "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in calls]})  # fmt: skip
        for c in calls:
            key = json.loads(c.function.arguments)["key"]
            history.append({"role": "tool", "tool_call_id": c.id, "content": RESULTS[key]})
        return reply.id, [(c.id, c.function.name) for c in calls]


class Responses:
    dialect = "openai.responses"

    def user(self, text: str) -> Any:
        return {"role": "user", "content": text}

    async def step(self, client: Any, history: list[Any], rewrite: bool = False) -> Any:
        tools = [{"type": "function", "name": TOOL, "parameters": SCHEMA}]
        reply = await resolve(client.responses.create(model="gpt-4o-mini", input=history,
                                                      tools=tools))  # fmt: skip
        calls = [item for item in reply.output if item.type == "function_call"]
        if not calls:
            history.append({"role": "assistant", "content": reply.output_text})
            return reply.id, []
        for c in calls:  # pydantic-ai style: the call id rewritten, the item id kept
            call_id = f"{reply.id}:{c.call_id}" if rewrite else c.call_id
            history.append({"type": "function_call", "id": c.id, "call_id": call_id,
                            "name": c.name, "arguments": c.arguments})  # fmt: skip
        for c in calls:
            call_id = f"{reply.id}:{c.call_id}" if rewrite else c.call_id
            key = json.loads(c.arguments)["key"]
            history.append({"type": "function_call_output", "call_id": call_id,
                            "output": RESULTS[key]})  # fmt: skip
        return reply.id, [(c.call_id, c.name) for c in calls]


class Messages:
    dialect = "anthropic.messages"

    def user(self, text: str) -> Any:
        return {"role": "user", "content": text}

    async def step(self, client: Any, history: list[Any], rewrite: bool = False) -> Any:
        tools = [{"name": TOOL, "input_schema": SCHEMA}]
        reply = await resolve(client.messages.create(
            model="claude-sonnet-4-6", max_tokens=256, messages=history, tools=tools))  # fmt: skip
        calls = [b for b in reply.content if b.type == "tool_use"]
        if not calls:
            history.append({"role": "assistant", "content": reply.content[0].text})
            return reply.id, []
        history.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": b.id, "name": b.name, "input": b.input}
                    for b in calls
                ],
            }
        )
        history.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": b.id, "content": RESULTS[b.input["key"]]}
            for b in calls]})  # fmt: skip
        return reply.id, [(b.id, b.name) for b in calls]


class Gemini:
    dialect = "google.genai"

    def user(self, text: str) -> Any:
        return types.Content(role="user", parts=[types.Part(text=text)])

    async def step(self, models: Any, history: list[Any], rewrite: bool = False) -> Any:
        declaration = types.FunctionDeclaration(name=TOOL, parameters_json_schema=SCHEMA)
        config = types.GenerateContentConfig(
            tools=[types.Tool(function_declarations=[declaration])]
        )
        reply = await resolve(models.generate_content(model="gemini-2.5-flash", contents=history,
                                                      config=config))  # fmt: skip
        calls = reply.function_calls or []
        if not calls:
            history.append(types.Content(role="model", parts=[types.Part(text=reply.text or "")]))
            return reply.response_id, []
        history.append(
            types.Content(role="model", parts=[types.Part(function_call=c) for c in calls])
        )
        history.append(types.Content(role="user", parts=[
            types.Part(function_response=types.FunctionResponse(
                id=c.id, name=c.name, response={"result": RESULTS[(c.args or {})["key"]]}))
            for c in calls]))  # fmt: skip
        return reply.response_id, [(c.id, c.name) for c in calls]


APIS: dict[str, Any] = {a.dialect: a for a in (Chat(), Responses(), Messages(), Gemini())}
COMBOS = [
    pytest.param(dialect, mode, id=f"{dialect}-{mode}")
    for dialect in APIS
    for mode in ID_MODES
    if mode != "none" or dialect == "google.genai"
]


@pytest.fixture(scope="module")
def sims() -> Iterator[dict[str, Simulator]]:
    """One simulator per id mode."""
    started = {mode: Simulator(ids=mode).start() for mode in ID_MODES}
    try:
        yield started
    finally:
        for sim in started.values():
            sim.stop()


def make_client(dialect: str, sim: Simulator, *, sync: bool) -> Any:
    if dialect == "google.genai":
        return DRIVERS["google"].client(sim, sync=sync)
    driver = DRIVERS["anthropic" if dialect == "anthropic.messages" else dialect]
    return driver.client(sim, sync=sync, max_retries=0)


async def conversation(api: Any, client: Any, questions: tuple[str, ...], delivered: Delivered,
                       lock: threading.Lock, rewrite: bool = False) -> list[Any]:  # fmt: skip
    """Ask each question, answering every call, re-sending the whole history each time."""
    history: list[Any] = []
    for question in questions:
        history.append(api.user(question))
        while True:
            response_id, calls = await api.step(client, history, rewrite)
            with lock:
                delivered.setdefault(response_id, []).extend(calls)
            if not calls:
                break
    return history


def check(rec: Any, delivered: Delivered) -> None:
    """One ok span per delivered call, under its response's inference span; nothing else."""
    import tooltap

    tooltap.flush()
    inference = {s.context.span_id: (s.attributes or {}).get("gen_ai.response.id")
                 for s in rec.inference()}  # fmt: skip
    by_response: dict[str, Counter[tuple[str | None, str]]] = {}
    for span in rec.tools():
        attrs = dict(span.attributes or {})
        assert attrs["tooltap.result"] == "ok", attrs
        assert span.parent is not None and span.parent.span_id in inference
        response = inference[span.parent.span_id]
        key = (attrs.get("gen_ai.tool.call.id"), attrs["gen_ai.tool.name"])
        by_response.setdefault(response, Counter())[key] += 1
    wanted = {r: Counter(calls) for r, calls in delivered.items() if calls}
    assert by_response == wanted
    calls = sum(len(c) for c in delivered.values())
    assert calls > 0
    assert rec.total("tooltap.tool_results", tooltap__result="ok") == calls
    assert rec.total("tooltap.tool_results") == calls  # no orphaned, duplicate, unknown_call
    assert rec.total("tooltap.tool_calls") == calls


@pytest.mark.parametrize(("dialect", "mode"), COMBOS)
async def test_sequential_conversations_with_follow_ups(
    rec: Any, sims: dict[str, Simulator], dialect: str, mode: str
) -> None:
    api, delivered, lock = APIS[dialect], {}, threading.Lock()
    client = make_client(dialect, sims[mode], sync=True)
    for _ in range(20):
        await conversation(api, client, QUESTIONS, delivered, lock)
    check(rec, delivered)


@pytest.mark.parametrize(("dialect", "mode"), COMBOS)
def test_threads_of_sync_clients(
    rec: Any, sims: dict[str, Simulator], dialect: str, mode: str
) -> None:
    api, delivered, lock = APIS[dialect], {}, threading.Lock()
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def worker() -> None:
        client = make_client(dialect, sims[mode], sync=True)
        barrier.wait()
        try:
            for _ in range(2):
                asyncio.run(conversation(api, client, QUESTIONS[:1], delivered, lock))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    check(rec, delivered)


@pytest.mark.parametrize(("dialect", "mode"), COMBOS)
async def test_concurrent_asyncio_conversations(
    rec: Any, sims: dict[str, Simulator], dialect: str, mode: str
) -> None:
    api, delivered, lock = APIS[dialect], {}, threading.Lock()
    client = make_client(dialect, sims[mode], sync=False)
    await asyncio.gather(
        *(conversation(api, client, QUESTIONS[:1], delivered, lock) for _ in range(50))
    )
    check(rec, delivered)


async def test_rewritten_responses_call_ids_still_match(
    rec: Any, sims: dict[str, Simulator]
) -> None:
    """pydantic-ai sends ``call_id: "resp_…:call_0"`` back, keeping the item id ``fc_…``."""
    api, delivered, lock = APIS["openai.responses"], {}, threading.Lock()
    client = make_client("openai.responses", sims["numbered"], sync=False)
    await asyncio.gather(
        *(conversation(api, client, QUESTIONS, delivered, lock, rewrite=True) for _ in range(5))
    )
    check(rec, delivered)


@pytest.mark.parametrize("dialect", list(APIS))
async def test_planted_duplicates_are_counted_exactly_and_retries_count_nothing(
    rec: Any, sims: dict[str, Simulator], dialect: str
) -> None:
    api, delivered, lock = APIS[dialect], {}, threading.Lock()
    mode = "none" if dialect == "google.genai" else "numbered"
    client = make_client(dialect, sims[mode], sync=True)
    history = await conversation(api, client, QUESTIONS[:1], delivered, lock)
    answered = history[:-1]  # ... the question, the calls and their results
    ok = rec.total("tooltap.tool_results", tooltap__result="ok")

    await api_call(api, client, answered)  # the same request retried: nothing new
    assert rec.total("tooltap.tool_results") == ok

    twice = doubled(dialect, answered)
    await api_call(api, client, twice, fails=True)  # the last result sent twice in one request
    assert rec.total("tooltap.tool_results", tooltap__result="duplicate") == 1
    planted = rec.total("tooltap.tool_results", tooltap__result="duplicate")
    await api_call(api, client, twice, fails=True)  # ... and that request retried
    assert rec.total("tooltap.tool_results", tooltap__result="duplicate") == planted

    await api_call(api, client, changed(dialect, answered))  # a different result: one more
    assert rec.total("tooltap.tool_results", tooltap__result="duplicate") == planted + 1
    assert rec.total("tooltap.tool_results", tooltap__result="unknown_call") == 0
    assert rec.total("tooltap.tool_results", tooltap__result="ok") == ok


async def api_call(api: Any, client: Any, history: list[Any], fails: bool = False) -> None:
    """One request with ``history``; the simulator refuses (400) a result sent twice."""
    try:
        await api.step(client, list(history))
    except Exception:  # noqa: BLE001 - each SDK's own 400 error
        assert fails
    else:
        assert not fails


def doubled(dialect: str, history: list[Any]) -> list[Any]:
    """``history`` with its last result sent a second time, in the same request."""
    last = history[-1]
    if dialect in ("openai.chat", "openai.responses"):
        return [*history, last]
    if dialect == "anthropic.messages":
        return [*history[:-1], {**last, "content": [*last["content"], last["content"][-1]]}]
    return [*history[:-1], types.Content(role="user", parts=[*last.parts, last.parts[-1]])]


def changed(dialect: str, history: list[Any]) -> list[Any]:
    """``history`` with its last result's content changed."""
    last = history[-1]
    if dialect == "openai.chat":
        return [*history[:-1], {**last, "content": "changed"}]
    if dialect == "openai.responses":
        return [*history[:-1], {**last, "output": "changed"}]
    if dialect == "anthropic.messages":
        blocks = [*last["content"][:-1], {**last["content"][-1], "content": "changed"}]
        return [*history[:-1], {**last, "content": blocks}]
    parts = list(last.parts)
    response = parts[-1].function_response
    parts[-1] = types.Part(function_response=types.FunctionResponse(
        id=response.id, name=response.name, response={"result": "changed"}))  # fmt: skip
    return [*history[:-1], types.Content(role="user", parts=parts)]
