"""The harness with boto3 Converse, ollama and cohere: declarations, calls and results in each
dialect's own shape, through the real clients and the simulator (which answers 400 unless
every call of a turn gets its one result)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import boto3
import cohere
import ollama
import pytest
from botocore.config import Config

import tooltap
from tooltap.harness import ToolRegistry
from tooltap.simulator import Simulator

VALUES = {"height": "170 cm", "weight": "70 kg"}
FINAL = "You are 170 cm tall and weigh 70 kg."


def registry() -> ToolRegistry:
    reg = ToolRegistry()

    @reg.tool(
        schema={
            "type": "object",
            "properties": {"key": {"type": "string", "enum": sorted(VALUES)}},
            "required": ["key"],
        }
    )
    def lookup_demo_value(key: str) -> str:
        """Look up one stored value of the user: height or weight."""
        return VALUES[key]

    return reg


def converse(sim: Simulator, reg: ToolRegistry) -> tuple[list[Any], Callable[..., Any]]:
    dialect = "bedrock.converse"
    client = boto3.client(
        "bedrock-runtime",
        endpoint_url=sim.bedrock_endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="not-a-secret",
        config=Config(retries={"total_max_attempts": 1}),
    )

    def send(history: list[Any]) -> tuple[Any, list[Any], str]:
        response = client.converse(
            modelId="anthropic.claude-x",
            messages=history,
            toolConfig={"tools": reg.declarations(dialect)},
        )
        message = response["output"]["message"]
        text = "".join(b.get("text", "") for b in message["content"])
        return tooltap.core.parse_response(response, dialect), [message], text

    return [{"role": "user", "content": [{"text": "How tall am I?"}]}], send


def ollama_chat(sim: Simulator, reg: ToolRegistry) -> tuple[list[Any], Callable[..., Any]]:
    client = ollama.Client(host=sim.ollama_host)

    def send(history: list[Any]) -> tuple[Any, list[Any], str]:
        response = client.chat(
            model="llama3.2", messages=history, tools=reg.declarations("ollama.chat")
        )
        parsed = tooltap.core.parse_response(response, "ollama.chat")
        return parsed, [response.message.model_dump(exclude_none=True)], response.message.content

    return [{"role": "user", "content": "How tall am I?"}], send


def cohere_chat(sim: Simulator, reg: ToolRegistry) -> tuple[list[Any], Callable[..., Any]]:
    client = cohere.ClientV2(api_key="not-a-key", base_url=sim.cohere_base_url)

    def send(history: list[Any]) -> tuple[Any, list[Any], str]:
        response = client.chat(
            model="command-a", messages=history, tools=reg.declarations("cohere.chat")
        )
        parsed = tooltap.core.parse_response(response, "cohere.chat")
        text = "".join(c.text for c in response.message.content or [] if c.type == "text")
        return parsed, [response.message.dict(exclude_none=True)], text

    return [{"role": "user", "content": "How tall am I?"}], send


@pytest.mark.parametrize("loop", [converse, ollama_chat, cohere_chat])
def test_a_conversation_reaches_its_final_answer(sim: Simulator, loop: Any) -> None:
    reg = registry()
    history, send = loop(sim, reg)
    parsed, turn, _ = send(history)
    assert sorted(c.args["key"] for c in parsed.calls) == ["height", "weight"]
    result = reg.run_sync(parsed, history=history)
    assert {o.output for o in result.outcomes} == set(VALUES.values())
    _, _, text = send([*history, *turn, *result.messages])
    assert text == FINAL
