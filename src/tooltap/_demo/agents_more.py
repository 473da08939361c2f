"""The demo's agents beyond the three SDKs: boto3 Bedrock Converse, Claude on Bedrock
(anthropic's ``AnthropicBedrock``), cohere's ``ClientV2`` and ollama's ``Client``.

A streamed turn is folded into the SDK's whole-response shape, as an app would keep it;
a stream that never reached its last event is an incomplete response.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import tooltap

from .agents import Agent, AnthropicAgent, Turn

#: Credentials boto3 and AnthropicBedrock sign with: the simulator checks none.
AWS_KEYS = {"aws_access_key_id": "AKIAIOSFODNN7EXAMPLE", "aws_secret_access_key": "not-a-secret"}
BEDROCK_MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"


def _turn(obj: dict[str, Any], dialect: str, *, finished: bool) -> Turn:
    parsed = tooltap.core.parse_response(obj, dialect)
    if not finished:  # the stream ended before its last event
        parsed = dataclasses.replace(parsed, complete=False)
    return Turn(obj, parsed)


class BedrockConverseAgent(Agent):
    dialect = "bedrock.converse"

    def start(self, question: str) -> list[Any]:
        return [{"role": "user", "content": [{"text": question}]}]

    def send(
        self, history: list[Any], headers: dict[str, str], *, force_tool: bool = False
    ) -> Turn:
        import boto3  # type: ignore[import-untyped]
        from botocore.config import Config  # type: ignore[import-untyped]

        client = boto3.client(
            "bedrock-runtime",
            endpoint_url=self.base_url,
            region_name="us-east-1",
            config=Config(retries={"total_max_attempts": 3, "mode": "standard"}),
            **AWS_KEYS,
        )
        tools: dict[str, Any] = {"tools": self.registry.declarations(self.dialect)}
        if force_tool:
            tools["toolChoice"] = {"any": {}}
        kwargs = {"modelId": BEDROCK_MODEL, "messages": history, "toolConfig": tools}
        if not self.stream:
            response = client.converse(**kwargs)
            return Turn(response, tooltap.core.parse_response(response, self.dialect))
        return _converse_events(client.converse_stream(**kwargs)["stream"], self.dialect)

    def append(self, history: list[Any], turn: Turn, results: list[dict[str, Any]]) -> list[Any]:
        return [*history, turn.sdk_object["output"]["message"], *results]

    def text(self, sdk_object: Any) -> str:
        content = sdk_object["output"]["message"]["content"]
        return "".join(b.get("text", "") for b in content)


def _converse_events(events: Any, dialect: str) -> Turn:
    """The Converse response the events boto3 yields add up to: blocks that ended only."""
    open_blocks: dict[int, dict[str, Any]] = {}
    content: list[dict[str, Any]] = []
    stop: str | None = None
    for event in events:
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            use = start["start"].get("toolUse")
            if use is not None:
                open_blocks[start["contentBlockIndex"]] = {"toolUse": {**use, "input": ""}}
        elif "contentBlockDelta" in event:
            index, delta = (event["contentBlockDelta"][k] for k in ("contentBlockIndex", "delta"))
            block = open_blocks.setdefault(index, {"text": ""})
            if "toolUse" in delta:
                block["toolUse"]["input"] += delta["toolUse"]["input"]
            elif "text" in delta:
                block["text"] += delta["text"]
        elif "contentBlockStop" in event:
            ended = open_blocks.pop(event["contentBlockStop"]["contentBlockIndex"], None)
            if ended is not None and "toolUse" in ended:
                use = ended["toolUse"]
                ended = {"toolUse": {**use, "input": json.loads(use["input"] or "{}")}}
            if ended is not None:
                content.append(ended)
        elif "messageStop" in event:
            stop = event["messageStop"]["stopReason"]
    message = {"role": "assistant", "content": content}
    obj = {"output": {"message": message}, "stopReason": stop or ""}
    return _turn(obj, dialect, finished=stop is not None)


class AnthropicBedrockAgent(AnthropicAgent):
    """Claude on Bedrock through anthropic's own client: the Anthropic dialect, signed."""

    model = BEDROCK_MODEL

    def client(self) -> Any:
        import anthropic

        return anthropic.AnthropicBedrock(
            aws_access_key=AWS_KEYS["aws_access_key_id"],
            aws_secret_key=AWS_KEYS["aws_secret_access_key"],
            aws_region="us-east-1",
            base_url=self.base_url,
            max_retries=2,
        )


class CohereAgent(Agent):
    dialect = "cohere.chat"

    def send(
        self, history: list[Any], headers: dict[str, str], *, force_tool: bool = False
    ) -> Turn:
        import cohere

        client = cohere.ClientV2(api_key="demo-cohere-key", base_url=self.base_url)
        kwargs: dict[str, Any] = {
            "model": "command-a-03-2025",
            "messages": history,
            "tools": self.registry.declarations(self.dialect),
            "request_options": {"additional_headers": headers, "max_retries": 2},
        }
        if force_tool:
            kwargs["tool_choice"] = "REQUIRED"
        if not self.stream:
            obj = client.chat(**kwargs).model_dump(mode="json", exclude_none=True)
            return Turn(obj, tooltap.core.parse_response(obj, self.dialect))
        return _cohere_events(client.chat_stream(**kwargs), self.dialect)

    def append(self, history: list[Any], turn: Turn, results: list[dict[str, Any]]) -> list[Any]:
        message = turn.sdk_object["message"]
        kept = {k: v for k, v in message.items() if k in ("role", "tool_plan", "tool_calls")}
        return [*history, kept, *results]

    def text(self, sdk_object: Any) -> str:
        content = sdk_object["message"].get("content") or ()
        return "".join(block.get("text", "") for block in content)


def _cohere_events(events: Any, dialect: str) -> Turn:
    """The v2 chat response the client's stream events add up to."""
    calls: dict[int, dict[str, Any]] = {}
    text, plan = "", ""
    finish: str | None = None
    for event in events:
        if event.type == "content-delta":
            text += event.delta.message.content.text
        elif event.type == "tool-plan-delta":
            plan += event.delta.message.tool_plan
        elif event.type == "tool-call-start":
            call = event.delta.message.tool_calls.model_dump(mode="json", exclude_none=True)
            call["function"].setdefault("arguments", "")
            calls[event.index] = call
        elif event.type == "tool-call-delta":
            piece = event.delta.message.tool_calls.function.arguments
            calls[event.index]["function"]["arguments"] += piece
        elif event.type == "message-end":
            finish = event.delta.finish_reason
    message: dict[str, Any] = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    if calls:
        message.update(tool_plan=plan, tool_calls=list(calls.values()))
    return _turn({"message": message, "finish_reason": finish}, dialect, finished=bool(finish))


class OllamaAgent(Agent):
    dialect = "ollama.chat"

    def send(
        self, history: list[Any], headers: dict[str, str], *, force_tool: bool = False
    ) -> Turn:
        import ollama

        client = ollama.Client(host=self.base_url, headers=headers)
        tools = self.registry.declarations(self.dialect)
        if not self.stream:
            response = client.chat(model="llama3.2", messages=history, tools=tools)
            obj = response.model_dump(mode="json", exclude_none=True)
            return Turn(obj, tooltap.core.parse_response(obj, self.dialect))
        text, calls, last = "", [], None
        for part in client.chat(model="llama3.2", messages=history, tools=tools, stream=True):
            text += part.message.content or ""
            calls += [c.model_dump(mode="json") for c in part.message.tool_calls or ()]
            last = part
        message = {"role": "assistant", "content": text, "tool_calls": calls}
        done = last is not None and bool(last.done)
        reason = last.done_reason if last is not None and done else None
        obj = {"message": message, "done": done, "done_reason": reason}
        return _turn(obj, self.dialect, finished=done)

    def append(self, history: list[Any], turn: Turn, results: list[dict[str, Any]]) -> list[Any]:
        message = turn.sdk_object["message"]
        kept = {k: message.get(k) for k in ("role", "content", "tool_calls")}
        return [*history, kept, *results]

    def text(self, sdk_object: Any) -> str:
        return str(sdk_object["message"].get("content") or "")


#: The agents by the SDK they speak (a dialect, or ``anthropic.bedrock``).
AGENTS: dict[str, type[Agent]] = {
    "bedrock.converse": BedrockConverseAgent,
    "anthropic.bedrock": AnthropicBedrockAgent,
    "cohere.chat": CohereAgent,
    "ollama.chat": OllamaAgent,
}
