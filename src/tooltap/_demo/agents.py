"""Small agents, one per SDK, written as any app would: no tooltap code inside.

Each agent asks the simulator "how tall am I and how much do I weigh?", runs the
tools the model asks for through a :class:`~tooltap.harness.ToolRegistry`, sends the
results back and returns the final answer. The demo instruments them from outside.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import tooltap

QUESTION = "How tall am I, and how much do I weigh?"
VALUES = {"height": "170 cm", "weight": "70 kg"}


def make_registry() -> tooltap.harness.ToolRegistry:
    """The demo's one tool, as an app would register it."""
    registry = tooltap.harness.ToolRegistry()

    @registry.tool(
        schema={
            "type": "object",
            "properties": {"key": {"type": "string", "enum": sorted(VALUES)}},
            "required": ["key"],
        }
    )
    def lookup_demo_value(key: str) -> str:
        """Look up one of the user's stored values (height, weight)."""
        return VALUES[key]

    return registry


@dataclass
class Turn:
    """What one model response gave the agent."""

    sdk_object: Any
    parsed: tooltap.Parsed


class Agent:
    """One SDK, one dialect: ask, run tools, answer. Subclasses speak the SDK."""

    dialect = ""

    def __init__(
        self, base_url: str, registry: tooltap.harness.ToolRegistry, *, stream: bool
    ) -> None:
        self.base_url = base_url
        self.registry = registry
        self.stream = stream

    def run(
        self,
        *,
        headers: Mapping[str, str] | None = None,
        abandon: bool = False,
        duplicate: bool = False,
        force_tool: bool = False,
    ) -> str:
        """One conversation; returns the final answer (or raises the SDK's exception)."""
        history = self.start(QUESTION)
        first = self.send(history, dict(headers or {}), force_tool=force_tool)
        if not first.parsed.calls and not first.parsed.problems:
            return self.text(first.sdk_object)
        if _incomplete(first.parsed):
            raise IncompleteResponse(first.parsed)
        if abandon:
            return "(abandoned: the tool calls were never answered)"
        turn = self.registry.run_sync(first.parsed, dialect=self.dialect)
        results = turn.messages * 2 if duplicate else turn.messages  # a harness bug
        final = self.send(self.append(history, first, results), {})
        return self.text(final.sdk_object)

    def start(self, question: str) -> list[Any]:
        return [{"role": "user", "content": question}]

    def send(
        self, history: list[Any], headers: dict[str, str], *, force_tool: bool = False
    ) -> Turn:
        raise NotImplementedError

    def append(self, history: list[Any], turn: Turn, results: list[dict[str, Any]]) -> list[Any]:
        raise NotImplementedError

    def text(self, sdk_object: Any) -> str:
        raise NotImplementedError


def _incomplete(parsed: tooltap.Parsed) -> bool:
    """Whether the response stopped early (then nothing from it may run)."""
    return not parsed.complete or any(
        p.kind in ("truncated_stream", "truncated_json") for p in parsed.problems
    )


class IncompleteResponse(Exception):
    """The response stopped early: nothing from it is executed."""

    def __init__(self, parsed: tooltap.Parsed) -> None:
        kinds = sorted({p.kind for p in parsed.problems})
        super().__init__(f"incomplete response ({', '.join(kinds) or 'no terminal event'})")
        self.parsed = parsed


class OpenAIChatAgent(Agent):
    dialect = "openai.chat"

    def send(
        self, history: list[Any], headers: dict[str, str], *, force_tool: bool = False
    ) -> Turn:
        import openai

        client = openai.OpenAI(base_url=self.base_url, api_key="sk-demo", max_retries=2)
        kwargs: dict[str, Any] = {
            "model": "gpt-4o-mini",
            "messages": history,
            "tools": self.registry.declarations(self.dialect),
            "extra_headers": headers,
        }
        if force_tool:
            kwargs["tool_choice"] = "required"
        if self.stream:
            with client.chat.completions.stream(**kwargs) as events:
                for _ in events:
                    pass
                obj: Any = events.get_final_completion()
        else:
            obj = client.chat.completions.create(**kwargs)
        return Turn(obj, tooltap.core.parse_response(obj, self.dialect))

    def append(self, history: list[Any], turn: Turn, results: list[dict[str, Any]]) -> list[Any]:
        message = turn.sdk_object.choices[0].message
        calls = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.function.name, "arguments": c.function.arguments},
            }
            for c in message.tool_calls or ()
        ]
        return [
            *history,
            {"role": "assistant", "content": message.content, "tool_calls": calls},
            *results,
        ]

    def text(self, sdk_object: Any) -> str:
        return str(sdk_object.choices[0].message.content or "")


class OpenAIResponsesAgent(Agent):
    dialect = "openai.responses"

    def send(
        self, history: list[Any], headers: dict[str, str], *, force_tool: bool = False
    ) -> Turn:
        import openai

        client = openai.OpenAI(base_url=self.base_url, api_key="sk-demo", max_retries=2)
        kwargs: dict[str, Any] = {
            "model": "gpt-4.1-mini",
            "input": history,
            "tools": self.registry.declarations(self.dialect),
            "extra_headers": headers,
        }
        if self.stream:
            with client.responses.stream(**kwargs) as events:
                for _ in events:
                    pass
                obj: Any = events.get_final_response()
        else:
            obj = client.responses.create(**kwargs)
        return Turn(obj, tooltap.core.parse_response(obj, self.dialect))

    def append(self, history: list[Any], turn: Turn, results: list[dict[str, Any]]) -> list[Any]:
        calls = [
            {
                "type": "function_call",
                "call_id": item.call_id,
                "name": item.name,
                "arguments": item.arguments,
            }
            for item in turn.sdk_object.output
            if item.type == "function_call"
        ]
        return [*history, *calls, *results]

    def text(self, sdk_object: Any) -> str:
        return str(sdk_object.output_text)


class AnthropicAgent(Agent):
    dialect = "anthropic.messages"
    model = "claude-sonnet-4-6"

    def client(self) -> Any:
        import anthropic

        return anthropic.Anthropic(base_url=self.base_url, api_key="sk-ant-demo", max_retries=2)

    def send(
        self, history: list[Any], headers: dict[str, str], *, force_tool: bool = False
    ) -> Turn:
        client = self.client()
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": 512,
            "messages": history,
            "tools": self.registry.declarations(self.dialect),
            "extra_headers": headers,
        }
        if self.stream:
            with client.messages.stream(**kwargs) as events:
                for _ in events:
                    pass
                obj: Any = events.get_final_message()
        else:
            obj = client.messages.create(**kwargs)
        return Turn(obj, tooltap.core.parse_response(obj, self.dialect))

    def append(self, history: list[Any], turn: Turn, results: list[dict[str, Any]]) -> list[Any]:
        content = [block.model_dump(exclude_none=True) for block in turn.sdk_object.content]
        return [*history, {"role": "assistant", "content": content}, *results]

    def text(self, sdk_object: Any) -> str:
        return "".join(b.text for b in sdk_object.content if b.type == "text")


class GoogleAgent(Agent):
    dialect = "google.genai"

    def start(self, question: str) -> list[Any]:
        return [{"role": "user", "parts": [{"text": question}]}]

    def send(
        self, history: list[Any], headers: dict[str, str], *, force_tool: bool = False
    ) -> Turn:
        from google import genai
        from google.genai import types

        client = genai.Client(
            api_key="demo-google-key",
            http_options=types.HttpOptions(base_url=self.base_url, headers=headers),
        )
        tools: list[Any] = self.registry.declarations(self.dialect)
        config = types.GenerateContentConfig(tools=tools)
        if self.stream:
            chunks = list(
                client.models.generate_content_stream(
                    model="gemini-2.5-flash", contents=history, config=config
                )
            )
            finish = _finish(chunks[-1] if chunks else None)
            candidate: dict[str, Any] = {
                "content": {"role": "model", "parts": [p for c in chunks for p in _parts(c)]}
            }
            if finish is not None:
                candidate["finishReason"] = finish
            obj = {"candidates": [candidate]}
            parsed = tooltap.core.parse_response(obj, self.dialect)
            if finish is None:  # the stream ended before its last chunk
                parsed = dataclasses.replace(parsed, complete=False)
            return Turn(obj, parsed)
        response = client.models.generate_content(
            model="gemini-2.5-flash", contents=history, config=config
        )
        return Turn(response, tooltap.core.parse_response(response, self.dialect))

    def append(self, history: list[Any], turn: Turn, results: list[dict[str, Any]]) -> list[Any]:
        obj = turn.sdk_object
        parts = obj["candidates"][0]["content"]["parts"] if isinstance(obj, dict) else _parts(obj)
        return [*history, {"role": "model", "parts": parts}, *results]

    def text(self, sdk_object: Any) -> str:
        if isinstance(sdk_object, dict):
            parts = sdk_object["candidates"][0]["content"]["parts"]
            return "".join(p.get("text", "") for p in parts)
        return str(sdk_object.text or "")


def _parts(response: Any) -> list[dict[str, Any]]:
    """The candidate's parts as wire dicts (camelCase), ready to go back as history."""
    if not response.candidates or response.candidates[0].content is None:
        return []
    return [
        p.model_dump(mode="json", by_alias=True, exclude_none=True)
        for p in response.candidates[0].content.parts or ()
    ]


def _finish(response: Any) -> str | None:
    if response is None or not response.candidates:
        return None
    reason = response.candidates[0].finish_reason
    return None if reason is None else str(getattr(reason, "value", reason))


class TextResultsChatAgent(OpenAIChatAgent):
    """Sends its calls' results back as text, as smolagents does: the calls named in an
    assistant message, the results in a user ``Observation: ...``; then asks for the
    answer with no tool."""

    def run(
        self,
        *,
        headers: Mapping[str, str] | None = None,
        abandon: bool = False,
        duplicate: bool = False,
        force_tool: bool = False,
    ) -> str:
        import openai

        history = self.start(QUESTION)
        first = self.send(history, dict(headers or {}))
        turn = self.registry.run_sync(first.parsed, dialect=self.dialect)
        named = [{"id": c.call_id, "name": c.name, "arguments": c.args} for c in first.parsed.calls]
        observed = [m.get("content") for m in turn.messages]
        history += [
            {"role": "assistant", "content": f"Calling tools: {named}"},
            {"role": "user", "content": f"Observation: {observed}"},
        ]
        client = openai.OpenAI(base_url=self.base_url, api_key="sk-demo", max_retries=2)
        kwargs: dict[str, Any] = {
            "model": "gpt-4o-mini",
            "messages": history,
            "tools": self.registry.declarations(self.dialect),
            "tool_choice": "none",
        }
        return self.text(client.chat.completions.create(**kwargs))


AGENTS: dict[str, type[Agent]] = {
    a.dialect: a for a in (OpenAIChatAgent, OpenAIResponsesAgent, AnthropicAgent, GoogleAgent)
}
