"""Many conversations at once, told apart on the wire: no span ends on another's request.

Real SDKs against the simulator, with ids every conversation reuses (``call_0``, Kimi's
``functions.<name>:<n>``) or none (Gemini), and one tool with two arguments shared by
all. Each conversation asks its own question; nothing else tells them apart. Every tool
span must end ok on a result request of its own conversation (the one link to it), from
8 threads of sync clients and from 50 asyncio tasks. Conversations asking the very same
question are the control: the wire cannot tell them apart, so only the counts are checked.

Results anywhere after their call: openai-agents with a litellm model sends one
response's calls back as call A, result A, call B, result B. A call answered as text
(smolagents' ``Observation: ...`` user message) ends ``unanswered``, not orphaned.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.sdk.drivers import RESULTS, SCHEMA, resolve
from tests.sdk.test_sdk_correlation import APIS, Chat, make_client
from tooltap.simulator import Simulator

TOOL = "lookup_demo_value"
#: (dialect, id mode): ids reused by every conversation, or none.
REUSED = [
    pytest.param("openai.chat", "numbered", id="chat-call_0"),
    pytest.param("openai.chat", "kimi", id="chat-kimi"),
    pytest.param("openai.responses", "numbered", id="responses-call_0"),
    pytest.param("anthropic.messages", "numbered", id="anthropic-numbered"),
    pytest.param("google.genai", "none", id="google-none"),
]


@pytest.fixture(scope="module")
def sims() -> Iterator[dict[str, Simulator]]:
    started = {mode: Simulator(ids=mode).start() for mode in ("numbered", "kimi", "none")}
    try:
        yield started
    finally:
        for sim in started.values():
            sim.stop()


class SplitChat(Chat):
    """openai-agents' litellm order: each call of a response its own model turn, followed
    by its result."""

    async def step(self, client: Any, history: list[Any], rewrite: bool = False) -> Any:
        tools = [{"type": "function", "function": {"name": TOOL, "parameters": SCHEMA}}]
        reply = await resolve(client.chat.completions.create(
            model="gpt-4o-mini", messages=history, tools=tools))  # fmt: skip
        message = reply.choices[0].message
        calls = message.tool_calls or []
        if not calls:
            history.append({"role": "assistant", "content": message.content})
            return reply.id, []
        for c in calls:
            function = {"name": c.function.name, "arguments": c.function.arguments}
            history.append({"role": "assistant",
                            "tool_calls": [{"id": c.id, "type": "function",
                                            "function": function}]})  # fmt: skip
            key = json.loads(c.function.arguments)["key"]
            history.append({"role": "tool", "tool_call_id": c.id, "content": RESULTS[key]})
        return reply.id, [(c.id, c.function.name) for c in calls]


#: The responses of each conversation (by its number), and the calls each delivered.
Seen = dict[str, tuple[int, int]]


async def talk(api: Any, client: Any, number: int, questions: tuple[str, ...], seen: Seen,
               lock: threading.Lock) -> None:  # fmt: skip
    """Conversation ``number``: each question answered, the whole history re-sent, after
    a pause of its own (so that conversations interleave in no fixed order)."""
    history: list[Any] = []
    pause = random.Random(number)
    for question in questions:
        history.append(api.user(question))
        while True:
            await asyncio.sleep(pause.random() * 0.01)
            response_id, calls = await api.step(client, history)
            with lock:
                seen[response_id] = (number, len(calls))
            if not calls:
                break


def questions(number: int, same: bool) -> tuple[str, ...]:
    first = "How tall am I, and how much do I weigh?"
    return (first if same else f"I am user {number}. {first}", "And again, please?")


def check_apart(rec: Any, seen: Seen) -> None:
    """Every tool span ends ok on a request of its own conversation, linked from it only."""
    import tooltap

    tooltap.flush()
    inference = {s.context.span_id: (s.attributes or {}).get("gen_ai.response.id")
                 for s in rec.inference()}  # fmt: skip
    linked: dict[int, list[str]] = {}
    for span in rec.inference():
        for link in span.links:
            if (link.attributes or {}).get("tooltap.link") == "tool_result":
                linked.setdefault(link.context.span_id, []).append(
                    (span.attributes or {})["gen_ai.response.id"]
                )
    tools = rec.tools()
    assert len(tools) == sum(n for _, n in seen.values()) > 0
    for span in tools:
        attrs = dict(span.attributes or {})
        assert attrs["tooltap.result"] == "ok", attrs
        owner = seen[inference[span.parent.span_id]][0]
        ends = linked.get(span.context.span_id, [])
        assert [seen[r][0] for r in ends] == [owner], (attrs, ends)
    assert rec.total("tooltap.tool_results") == len(tools)


@pytest.mark.parametrize(("dialect", "mode"), REUSED)
def test_threads_of_conversations_never_cross(
    rec: Any, sims: dict[str, Simulator], dialect: str, mode: str
) -> None:
    api, seen, lock = APIS[dialect], {}, threading.Lock()
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def worker(number: int) -> None:
        client = make_client(dialect, sims[mode], sync=True)
        barrier.wait()
        try:
            for k in range(2):
                asyncio.run(talk(api, client, 2 * number + k, questions(2 * number + k, False),
                                 seen, lock))  # fmt: skip
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    check_apart(rec, seen)


@pytest.mark.parametrize(("dialect", "mode"), REUSED)
async def test_asyncio_conversations_never_cross(
    rec: Any, sims: dict[str, Simulator], dialect: str, mode: str
) -> None:
    api, seen, lock = APIS[dialect], {}, threading.Lock()
    client = make_client(dialect, sims[mode], sync=False)
    talks = (talk(api, client, n, questions(n, False), seen, lock) for n in range(50))
    await asyncio.wait_for(asyncio.gather(*talks), 60)
    check_apart(rec, seen)


@pytest.mark.parametrize(("dialect", "mode"), REUSED)
async def test_identical_conversations_each_end_every_call_once(
    rec: Any, sims: dict[str, Simulator], dialect: str, mode: str
) -> None:
    """The control: 50 conversations asking the very same thing are one on the wire; each
    call still ends ok once, nothing is orphaned, duplicate or unknown."""
    import tooltap

    api, seen, lock = APIS[dialect], {}, threading.Lock()
    client = make_client(dialect, sims[mode], sync=False)
    talks = (talk(api, client, n, questions(n, True), seen, lock) for n in range(50))
    await asyncio.wait_for(asyncio.gather(*talks), 60)
    tooltap.flush()
    calls = sum(n for _, n in seen.values())
    assert len(rec.tools()) == calls > 0
    assert rec.total("tooltap.tool_results", tooltap__result="ok") == calls
    assert rec.total("tooltap.tool_results") == calls


@pytest.mark.parametrize("mode", ["numbered", "kimi"])
async def test_results_between_split_model_turns_end_their_calls(
    rec: Any, sims: dict[str, Simulator], mode: str
) -> None:
    """Call A, result A, call B, result B: both calls end ok on that request, none orphaned,
    concurrently in 20 conversations."""
    seen: Seen = {}
    lock = threading.Lock()
    client = make_client("openai.chat", sims[mode], sync=False)
    await asyncio.wait_for(asyncio.gather(
        *(talk(SplitChat(), client, n, questions(n, False), seen, lock) for n in range(20))),
        60)  # fmt: skip
    check_apart(rec, seen)


class TextChat(Chat):
    """smolagents' order: the calls named in an assistant text turn, their results sent
    back as one user message (``Observation: ...``), no ``tool`` message. ``structured``:
    the calls kept as the model sent them, only the results as text."""

    def __init__(self, structured: bool = False) -> None:
        self.structured = structured

    async def step(self, client: Any, history: list[Any], rewrite: bool = False) -> Any:
        tools = [{"type": "function", "function": {"name": TOOL, "parameters": SCHEMA}}]
        last = len(history) > 3  # the third request: an answer, no more calls
        reply = await resolve(client.chat.completions.create(
            model="gpt-4o-mini", messages=history, tools=tools,
            tool_choice="none" if last else "auto"))  # fmt: skip
        message = reply.choices[0].message
        calls = message.tool_calls or []
        if not calls:
            history.append({"role": "assistant", "content": message.content})
            return reply.id, []
        named = [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                 for c in calls]  # fmt: skip
        if self.structured:
            history.append({"role": "assistant", "tool_calls": [
                {"id": n["id"], "type": "function",
                 "function": {"name": n["name"], "arguments": n["arguments"]}}
                for n in named]})  # fmt: skip
        else:
            history.append({"role": "assistant", "content": f"Calling tools:\n{named}"})
        observed = [RESULTS[json.loads(c.function.arguments)["key"]] for c in calls]
        history.append({"role": "user", "content": f"Observation:\n{observed}"})
        return reply.id, [(c.id, c.function.name) for c in calls]


@pytest.mark.parametrize("structured", [False, True], ids=["text-turn", "structured-turn"])
@pytest.mark.parametrize("mode", ["numbered", "kimi"])
async def test_calls_answered_as_text_end_unanswered_not_orphaned(
    rec: Any, sims: dict[str, Simulator], mode: str, structured: bool
) -> None:
    """Each call ends ``unanswered`` on its conversation's next request: no error, no
    ERROR status, counted as such; nothing is left to orphan at flush."""
    import tooltap

    seen: Seen = {}
    lock = threading.Lock()
    client = make_client("openai.chat", sims[mode], sync=False)
    await asyncio.wait_for(asyncio.gather(
        *(talk(TextChat(structured), client, n, questions(n, False)[:1], seen, lock)
          for n in range(10))),
        60)  # fmt: skip
    tooltap.flush()
    tools = rec.tools()
    assert len(tools) == sum(n for _, n in seen.values()) == 40  # two requests of two calls
    for span in tools:
        attrs = dict(span.attributes or {})
        assert attrs["tooltap.result"] == "unanswered", attrs
        assert "error.type" not in attrs
        assert span.status.status_code.name == "UNSET"
    assert rec.total("tooltap.tool_results", tooltap__result="unanswered") == 40
    assert rec.total("tooltap.tool_results") == 40  # none orphaned


async def test_a_provider_switch_mid_conversation_is_no_duplicate(rec: Any) -> None:
    """OpenAI Responses answers the calls; the conversation goes on with Gemini, which is
    sent the same results again (as ``{"result": ...}``): nothing new, nothing duplicate."""
    from google.genai import types

    import tooltap

    sim = Simulator().start()
    try:
        openai_client = make_client("openai.responses", sim, sync=True)
        history: list[Any] = [{"role": "user", "content": questions(0, False)[0]}]
        _, calls = await APIS["openai.responses"].step(openai_client, history)
        assert len(calls) == 2
        await APIS["openai.responses"].step(openai_client, history)  # the results: ok
        function_calls = [i for i in history if i.get("type") == "function_call"]
        outputs = {i["call_id"]: i["output"] for i in history
                   if i.get("type") == "function_call_output"}  # fmt: skip
        contents = [
            types.Content(role="user", parts=[types.Part(text=questions(0, False)[0])]),
            types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall(
                id=c["call_id"], name=c["name"], args=json.loads(c["arguments"])))
                for c in function_calls]),
            types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
                id=c["call_id"], name=c["name"], response={"result": outputs[c["call_id"]]}))
                for c in function_calls]),
        ]  # fmt: skip
        google = make_client("google.genai", sim, sync=True)
        await resolve(google.generate_content(model="gemini-2.5-flash", contents=contents))
    finally:
        sim.stop()
    tooltap.flush()
    assert rec.total("tooltap.tool_results", tooltap__result="ok") == 2
    assert rec.total("tooltap.tool_results") == 2  # no duplicate, no unknown_call
