"""How far back a request's history is read, and the fingerprint of its conversation.

Results stand anywhere after their own call's model turn (openai-agents with litellm:
call A, result A, call B, result B; pydantic-ai with Mistral: the result, an assistant
"OK", more). A request reads back to the oldest turn still holding an open call of its
conversation (the horizon the caller gives for the fingerprint), and at least to its
last model turn.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tooltap.core import parse_request

SYSTEM = {"role": "system", "content": "You are a weather bot."}
USER = {"role": "user", "content": "Weather in Paris and Rome?"}


def _call(call_id: str, city: str) -> dict[str, Any]:
    arguments = json.dumps({"city": city})
    return {"id": call_id, "type": "function",
            "function": {"name": "get_weather", "arguments": arguments}}  # fmt: skip


def _split_turns() -> list[dict[str, Any]]:
    """One response's two calls as two model turns, each followed by its result."""
    return [
        SYSTEM,
        USER,
        {"role": "assistant", "tool_calls": [_call("call_0", "Paris")]},
        {"role": "tool", "tool_call_id": "call_0", "content": "sunny"},
        {"role": "assistant", "tool_calls": [_call("call_1", "Rome")]},
        {"role": "tool", "tool_call_id": "call_1", "content": "rainy"},
    ]


def _chat(messages: list[dict[str, Any]], horizon: Any = None) -> Any:
    body = {"model": "m", "messages": messages}
    return parse_request(json.dumps(body).encode(), "openai.chat", horizon)


def test_without_a_horizon_only_the_results_after_the_last_model_turn_are_read() -> None:
    info = _chat(_split_turns())
    assert [(r.call_id, r.turn, r.history) for r in info.tool_results] == [("call_1", 4, False)]
    assert [t.index for t in info.model_turns] == [4]
    assert info.history_length == 6


def test_a_horizon_reads_back_to_the_oldest_open_call_and_finds_each_results_turn() -> None:
    asked: list[int] = []

    def horizon(fingerprint: int) -> int:
        asked.append(fingerprint)
        return 2  # the response to a 2-message request delivered both calls

    info = _chat(_split_turns(), horizon)
    assert asked == [info.fingerprint]
    got = [(r.call_id, r.name, r.call_args, r.turn, r.position, r.history)
           for r in info.tool_results]  # fmt: skip
    assert got == [
        ("call_0", "get_weather", {"city": "Paris"}, 2, 0, True),
        ("call_1", "get_weather", {"city": "Rome"}, 4, 0, False),
    ]
    assert [t.index for t in info.model_turns] == [2, 4]


def test_a_result_before_a_text_turn_is_read_with_its_call() -> None:
    """pydantic-ai with Mistral: the result, then an assistant ``OK``, then a user file."""
    messages = [
        USER,
        {"role": "assistant", "tool_calls": [_call("call_0", "Paris")]},
        {"role": "tool", "tool_call_id": "call_0", "content": "sunny"},
        {"role": "assistant", "content": "OK"},
        {"role": "user", "content": "and this file?"},
    ]
    assert _chat(messages).tool_results == ()
    info = _chat(messages, lambda fp: 1)
    assert [(r.call_id, r.turn, r.history) for r in info.tool_results] == [("call_0", 1, True)]
    assert [t.text for t in info.model_turns] == ["", "OK"]  # a text turn keeps its text
    assert [(t.index, t.calls) for t in info.model_turns] == [
        (1, (("call_0", "get_weather", None),)),
        (3, ()),
    ]


def test_the_read_stops_at_the_horizon() -> None:
    """Turns older than the horizon are not read: the cost is the tail."""
    old = [{"role": "assistant", "tool_calls": [_call(f"old_{i}", "Oslo")]} for i in range(50)]
    messages = [USER, *old, *_split_turns()[2:]]
    info = _chat(messages, lambda fp: 51)
    assert [t.index for t in info.model_turns] == [51, 53]


@pytest.mark.parametrize(
    ("dialect", "first", "later"),
    [
        ("openai.responses", {"model": "m", "instructions": "Be brief.", "input": "Hi there"},
         {"model": "m", "instructions": "Be brief.", "input": [
             {"role": "user", "content": [{"type": "input_text", "text": "Hi there"}]},
             {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
             {"type": "function_call_output", "call_id": "c", "output": "x"}]}),
        ("anthropic.messages", {"model": "m", "system": "Be brief.", "messages": [
            {"role": "user", "content": "Hi there", "cache_control": {"type": "ephemeral"}}]},
         {"model": "m", "system": [{"type": "text", "text": "Be brief."}], "messages": [
             {"role": "user", "content": [{"type": "text", "text": "Hi there"}]},
             {"role": "assistant", "content": [
                 {"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}]}),
        ("google.genai", {"systemInstruction": {"parts": [{"text": "Be brief."}]},
                          "contents": [{"role": "user", "parts": [{"text": "Hi there"}]}]},
         {"systemInstruction": {"parts": [{"text": "Be brief."}]},
          "contents": [{"role": "user", "parts": [{"text": "Hi there"}]},
                       {"role": "model", "parts": [{"functionCall": {"name": "f"}}]}]}),
    ],
)  # fmt: skip
def test_every_request_of_a_conversation_has_its_fingerprint(
    dialect: str, first: dict[str, Any], later: dict[str, Any]
) -> None:
    one, two = parse_request(first, dialect), parse_request(later, dialect)
    assert one.fingerprint is not None and one.fingerprint == two.fingerprint
    assert one.system_fingerprint is not None
    assert one.system_fingerprint == two.system_fingerprint
    other = json.loads(json.dumps(first).replace("Hi there", "Hi their"))
    assert parse_request(other, dialect).fingerprint != one.fingerprint
    system = parse_request(json.loads(json.dumps(first).replace("Be brief.", "Be long.")), dialect)
    assert system.fingerprint == one.fingerprint  # a framework may change it for one request
    assert system.system_fingerprint != one.system_fingerprint


def test_a_body_naming_its_conversation_has_no_fingerprint() -> None:
    """The history is on the server: the conversation is the one named."""
    body = {"model": "m", "previous_response_id": "resp_1",
            "input": [{"type": "function_call_output", "call_id": "c", "output": "x"}]}  # fmt: skip
    info = parse_request(body, "openai.responses")
    assert (info.fingerprint, info.history_length) == (None, None)
    assert [r.call_id for r in info.tool_results] == ["c"]


def test_the_fingerprint_costs_the_same_however_long_the_first_turn() -> None:
    def cost(size: int) -> float:
        body = {"model": "m", "messages": [{"role": "user", "content": "x" * size}]}
        start = time.perf_counter()
        for _ in range(200):
            parse_request(body, "openai.chat")
        return time.perf_counter() - start

    cost(10)
    assert cost(50_000_000 // 200) < 5 * cost(10) + 0.05


@pytest.mark.parametrize("value", ["sunny", '{"temp": 20, "sky": "clear"}'])
def test_a_result_has_one_digest_whichever_dialect_carries_it(value: str) -> None:
    """One conversation may switch providers: the same result re-sent is the same result."""
    parsed = json.loads(value) if value.startswith("{") else None
    call = {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}
    bodies = {
        "openai.chat": {"messages": [
            USER, {"role": "assistant", "tool_calls": [_call("c", "Paris")]},
            {"role": "tool", "tool_call_id": "c", "content": value}]},
        "openai.responses": {"input": [
            USER, call, {"type": "function_call_output", "call_id": "c", "output": value}]},
        "anthropic.messages": {"messages": [
            USER, {"role": "assistant", "content": [
                {"type": "tool_use", "id": "c", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c",
                                          "content": [{"type": "text", "text": value}]}]}]},
        "google.genai": {"contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"functionCall": {"id": "c", "name": "f"}}]},
            {"role": "user", "parts": [{"functionResponse": {
                "id": "c", "name": "f",
                "response": parsed if parsed is not None else {"result": value}}}]}]},
    }  # fmt: skip
    digests = {d: parse_request(b, d).tool_results[0].digest for d, b in bodies.items()}
    assert len(set(digests.values())) == 1, digests
    other = json.loads(
        json.dumps(bodies["openai.chat"]).replace("sunny", "rainy").replace("20", "21")
    )
    assert parse_request(other, "openai.chat").tool_results[0].digest not in digests.values()


def _split_turns_of(dialect: str) -> dict[str, Any]:
    """``_split_turns`` as ``dialect`` sends it: two model turns, each with its result."""
    cities = (("t0", "Paris", "sunny"), ("t1", "Rome", "rainy"))
    messages: list[dict[str, Any]] = []
    if dialect == "bedrock.converse":
        messages.append({"role": "user", "content": [{"text": USER["content"]}]})
        for cid, city, sky in cities:
            use = {"toolUseId": cid, "name": "get_weather", "input": {"city": city}}
            result = {"toolUseId": cid, "content": [{"text": sky}]}
            messages += [{"role": "assistant", "content": [{"toolUse": use}]},
                         {"role": "user", "content": [{"toolResult": result}]}]  # fmt: skip
        return {"system": [{"text": SYSTEM["content"]}], "messages": messages}
    messages += [SYSTEM, USER]
    for cid, city, sky in cities:
        if dialect == "cohere.chat":
            messages += [{"role": "assistant", "tool_calls": [_call(cid, city)]},
                         {"role": "tool", "tool_call_id": cid, "content": sky}]  # fmt: skip
        else:  # ollama.chat: no ids, arguments as an object, results by tool name
            fn = {"name": "get_weather", "arguments": {"city": city}}
            messages += [{"role": "assistant", "tool_calls": [{"function": fn}]},
                         {"role": "tool", "tool_name": "get_weather", "content": sky}]  # fmt: skip
    return {"model": "m", "messages": messages}


@pytest.mark.parametrize(
    ("dialect", "ids"),
    [("bedrock.converse", ("t0", "t1")), ("cohere.chat", ("t0", "t1")), ("ollama.chat", None)],
)
def test_the_other_readers_read_back_to_the_horizon_too(
    dialect: str, ids: tuple[str, str] | None
) -> None:
    """Converse and Cohere by their call ids, Ollama (no ids) by name and arguments."""
    body = _split_turns_of(dialect)
    tail = parse_request(body, dialect)
    assert [r.turn for r in tail.tool_results] == [4 if dialect != "bedrock.converse" else 3]
    info = parse_request(body, dialect, lambda fp: 1)
    turns = [t.index for t in info.model_turns]
    assert turns == ([1, 3] if dialect == "bedrock.converse" else [2, 4])
    got = [(r.call_id, r.name, r.call_args, r.turn, r.history) for r in info.tool_results]
    assert got == [
        (ids[0] if ids else None, "get_weather", {"city": "Paris"}, turns[0], True),
        (ids[1] if ids else None, "get_weather", {"city": "Rome"}, turns[1], False),
    ]
    again = json.loads(json.dumps(body).replace("Paris and Rome", "Oslo"))
    assert info.fingerprint is not None
    assert parse_request(again, dialect).fingerprint != info.fingerprint
    shorter = json.loads(json.dumps(body))
    shorter["messages"] = shorter["messages"][: 2 if dialect == "bedrock.converse" else 3]
    assert parse_request(shorter, dialect).fingerprint == info.fingerprint
