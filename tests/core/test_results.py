"""result_message(s): native shapes per dialect, and a round trip through parse_request
(directly, and through the real SDKs onto a loopback socket)."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import boto3
import cohere
import ollama
import openai
import pytest
from botocore.config import Config
from google import genai
from google.genai import types as gt

from tests.loopback_capture import sent as _sent
from tooltap import ToolCall
from tooltap.core import DIALECTS, parse_request, result_message, result_messages


def _call(dialect: str, call_id: str | None = "id_1", name: str = "lookup") -> ToolCall:
    provider = dialect.split(".")[0]
    return ToolCall(name, {"key": "height"}, provider, call_id, 0, None, dialect)


# --- shapes ------------------------------------------------------------------------------


def test_chat_shape() -> None:
    call = _call("openai.chat")
    assert result_message(call, "170 cm") == {
        "role": "tool",
        "tool_call_id": "id_1",
        "content": "170 cm",
    }
    assert result_message(call, {"cm": 170, "ciudad": "Málaga"})["content"] == (
        '{"cm": 170, "ciudad": "Málaga"}'  # JSON, non-ASCII kept
    )
    assert result_message(call, "no scale", is_error=True)["content"] == '{"error": "no scale"}'


def test_responses_shape() -> None:
    call = _call("openai.responses")
    assert result_message(call, [1, "ü"]) == {
        "type": "function_call_output",
        "call_id": "id_1",
        "output": '[1, "ü"]',
    }
    assert json.loads(result_message(call, {"a": 1}, is_error=True)["output"]) == {
        "error": {"a": 1}
    }


def test_anthropic_shape() -> None:
    call = _call("anthropic.messages")
    assert result_message(call, "170 cm") == {
        "type": "tool_result",
        "tool_use_id": "id_1",
        "content": "170 cm",
        "is_error": False,
    }
    blocks = [{"type": "text", "text": "a"}, {"type": "image", "source": {}}]
    assert result_message(call, blocks)["content"] is blocks  # content blocks pass through
    assert result_message(call, [1, 2])["content"] == "[1, 2]"
    got = result_message(call, {"why": "niño"}, is_error=True)
    assert (got["content"], got["is_error"]) == ('{"why": "niño"}', True)


def test_google_shape() -> None:
    call = _call("google.genai", call_id=None)
    assert result_message(call, {"cm": 170}) == {
        "functionResponse": {"name": "lookup", "response": {"cm": 170}}
    }
    assert result_message(call, 170) == {
        "functionResponse": {"name": "lookup", "response": {"output": 170}}
    }
    assert result_message(call, "broken", is_error=True)["functionResponse"]["response"] == {
        "error": "broken"
    }
    already = {"error": {"code": 3}}
    assert result_message(call, already, is_error=True)["functionResponse"]["response"] is already
    with_id = result_message(_call("google.genai", call_id="g-7"), "x")
    assert with_id["functionResponse"]["id"] == "g-7"


def test_unserialisable_output_does_not_raise() -> None:
    class Thing:
        def __str__(self) -> str:
            return "thing"

    assert result_message(_call("openai.chat"), {"t": Thing()})["content"] == '{"t": "thing"}'


def test_call_without_dialect_is_refused() -> None:
    call = ToolCall("f", {}, "openai", "c", 0)
    with pytest.raises(ValueError, match="dialect"):
        result_message(call, "x")


def test_result_messages_group_per_dialect() -> None:
    a1, a2 = _call("anthropic.messages", "t1"), _call("anthropic.messages", "t2")
    grouped = result_messages([(a1, "x"), (a2, "y", True)])
    assert grouped == [
        {
            "role": "user",
            "content": [result_message(a1, "x"), result_message(a2, "y", is_error=True)],
        }
    ]
    g1, g2 = _call("google.genai", None), _call("google.genai", None, "other")
    assert result_messages([(g1, 1), (g2, 2)]) == [
        {"role": "user", "parts": [result_message(g1, 1), result_message(g2, 2)]}
    ]
    c1, c2 = _call("openai.chat", "c1"), _call("openai.chat", "c2")
    assert result_messages([(c1, "x"), (c2, "y")]) == [
        result_message(c1, "x"),
        result_message(c2, "y"),
    ]
    assert result_messages([]) == []
    with pytest.raises(ValueError, match="several dialects"):
        result_messages([(c1, "x"), (a1, "y")])


# --- round trip through parse_request -------------------------------------------------------


def _assistant_turn(dialect: str, calls: list[ToolCall]) -> dict[str, Any]:
    """The model turn that made ``calls``, as the client sends it back."""
    if dialect == "openai.chat":
        return {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": c.call_id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.args)},
                }
                for c in calls
            ],
        }
    if dialect == "anthropic.messages":
        return {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": c.call_id, "name": c.name, "input": c.args}
                for c in calls
            ],
        }
    if dialect == "cohere.chat":
        return {
            "role": "assistant",
            "tool_plan": "look up",
            "tool_calls": [
                {
                    "id": c.call_id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.args)},
                }
                for c in calls
            ],
        }
    if dialect == "ollama.chat":
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": c.name, "arguments": c.args}} for c in calls],
        }
    if dialect == "bedrock.converse":
        return {
            "role": "assistant",
            "content": [
                {"toolUse": {"toolUseId": c.call_id, "name": c.name, "input": c.args}}
                for c in calls
            ],
        }
    if dialect == "google.genai":
        return {
            "role": "model",
            "parts": [
                {
                    "functionCall": {
                        "name": c.name,
                        "args": c.args,
                        **({"id": c.call_id} if c.call_id else {}),
                    }
                }
                for c in calls
            ],
        }
    raise AssertionError(dialect)


def _request(
    dialect: str, calls: list[ToolCall], outcome: list[tuple[Any, bool]]
) -> dict[str, Any]:
    """A follow-up request body that carries one result per call."""
    results = result_messages([(c, out, err) for c, (out, err) in zip(calls, outcome, strict=True)])
    if dialect == "openai.responses":
        items = [
            {
                "type": "function_call",
                "call_id": c.call_id,
                "name": c.name,
                "arguments": json.dumps(c.args),
            }
            for c in calls
        ]
        return {"model": "m", "input": [{"role": "user", "content": "hi"}, *items, *results]}
    turn = _assistant_turn(dialect, calls)
    if dialect == "google.genai":
        return {"contents": [{"role": "user", "parts": [{"text": "hi"}]}, turn, *results]}
    if dialect == "bedrock.converse":
        return {"messages": [{"role": "user", "content": [{"text": "hi"}]}, turn, *results]}
    return {"model": "m", "messages": [{"role": "user", "content": "hi"}, turn, *results]}


def _calls(dialect: str) -> list[ToolCall]:
    provider = dialect.split(".")[0]
    with_ids = dialect not in ("google.genai", "ollama.chat")
    return [
        ToolCall(
            "lookup", {"key": "height"}, provider, "c_h" if with_ids else None, 0, None, dialect
        ),
        ToolCall(
            "lookup", {"key": "weight"}, provider, "c_w" if with_ids else None, 1, None, dialect
        ),
        ToolCall(
            "save",
            {"v": "ñ"},
            provider,
            "c_s" if with_ids else ("g_s" if dialect == "google.genai" else None),
            2,
            None,
            dialect,
        ),
    ]


OUTCOME = [("170 cm", False), ({"reason": "scale broken"}, True), ({"ok": True}, False)]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_round_trip(dialect: str) -> None:
    calls = _calls(dialect)
    body = _request(dialect, calls, OUTCOME)
    info = parse_request(json.dumps(body, ensure_ascii=False).encode(), dialect)
    _assert_found(info, calls)


def _assert_found(info: Any, calls: list[ToolCall]) -> None:
    assert info.problems == ()
    got = [(r.call_id, r.name, r.is_error) for r in info.tool_results]
    assert got == [(c.call_id, c.name, err) for c, (_, err) in zip(calls, OUTCOME, strict=True)]
    if info.dialect in ("google.genai", "ollama.chat"):  # id-less: by name + position
        assert [r.call_args for r in info.tool_results] == [c.args for c in calls]


# --- round trip through the real SDKs (the bytes they put on the wire) ------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_round_trip_through_the_sdk(dialect: str, capture: tuple[str, list[bytes]]) -> None:
    url, bodies = capture
    calls = _calls(dialect)
    body = _request(dialect, calls, OUTCOME)
    sent = _sent(bodies, lambda: _send_through_sdk(dialect, url, body))
    _assert_found(parse_request(sent, dialect), calls)


def _send_through_sdk(dialect: str, url: str, body: dict[str, Any]) -> Any:
    """Send ``body`` to ``url`` with the dialect's own SDK client."""
    if dialect == "openai.chat":
        oai = openai.OpenAI(api_key="k", base_url=f"{url}/v1", max_retries=0)
        return oai.chat.completions.create(**body)
    if dialect == "openai.responses":
        oai = openai.OpenAI(api_key="k", base_url=f"{url}/v1", max_retries=0)
        return oai.responses.create(**body)
    if dialect == "anthropic.messages":
        ant = anthropic.Anthropic(api_key="k", base_url=url, max_retries=0)
        return ant.messages.create(max_tokens=10, **body)
    if dialect == "ollama.chat":
        return ollama.Client(host=url).chat(**body)
    if dialect == "cohere.chat":
        co = cohere.ClientV2(api_key="k", base_url=url)
        return co.chat(**body, request_options={"max_retries": 0})
    if dialect == "bedrock.converse":
        bedrock = boto3.client(
            "bedrock-runtime",
            endpoint_url=url,
            region_name="us-east-1",
            aws_access_key_id="AKIDEXAMPLE",
            aws_secret_access_key="secret",
            config=Config(retries={"total_max_attempts": 1}),
        )
        return bedrock.converse(modelId="m", **body)
    goo = genai.Client(api_key="k", http_options=gt.HttpOptions(base_url=url))
    return goo.models.generate_content(model="gemini-x", **body)
