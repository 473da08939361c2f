"""Drive the real SDKs through the lookup conversation against the simulator.

One driver per dialect; each turn runs sync or async, streamed or not, and reads the
answer from the SDK's own objects.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, ClassVar

import anthropic
import httpx2
import openai
from google import genai
from google.genai import types as gtypes

from tooltap.simulator import Simulator

VALUES = {"height": "170 cm", "weight": "70 kg"}
_SYNC_CLIENTS: dict[tuple[Any, ...], Any] = {}
TIMEOUT = 5.0


@dataclass
class Call:
    call_id: str | None
    name: str
    args: Any  # a dict, or the raw text when the arguments are not valid JSON


@dataclass
class Outcome:
    calls: list[Call] = field(default_factory=list)
    text: str = ""
    raw: Any = None  # the SDK's final object (message, response, chunks...)


def _args(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def lookup_results(calls: list[Call]) -> list[str]:
    return [VALUES[c.args["key"]] for c in calls]


class Driver:
    dialect = ""

    def __init__(
        self, sim: Simulator, *, stream: bool, timeout: float = TIMEOUT, **options: Any
    ) -> None:
        self.sim = sim
        self.stream = stream
        self.timeout = timeout
        self.options = options  # extra SDK request kwargs (extra_headers, tool_choice...)
        self._async_clients: dict[bool, Any] = {}
        self.history: list[Any] = self.start()

    def start(self) -> list[Any]:
        raise NotImplementedError

    def build(self, sync: bool, variant: bool = False) -> Any:
        raise NotImplementedError

    def client(self, sync: bool, variant: bool = False) -> Any:
        """Sync clients are shared (TLS setup makes them slow to build); async ones are per loop."""
        if not sync:
            if variant not in self._async_clients:
                self._async_clients[variant] = self.build(False, variant)
            return self._async_clients[variant]
        key = (type(self).__name__, self.sim.url, self.timeout)
        if key not in _SYNC_CLIENTS:
            _SYNC_CLIENTS[key] = self.build(True)
        return _SYNC_CLIENTS[key]

    def answer(self, outcome: Outcome, results: list[tuple[str | None, str, str]]) -> None:
        """Append the model turn and the (call_id, name, content) results to the history."""
        raise NotImplementedError

    def turn(self) -> Outcome:
        raise NotImplementedError

    async def aturn(self) -> Outcome:
        raise NotImplementedError

    async def run_turn(self, sync: bool) -> Outcome:
        return self.turn() if sync else await self.aturn()


class ChatDriver(Driver):
    dialect = "openai.chat"
    tools: ClassVar[list[dict[str, Any]]] = [
        {
            "type": "function",
            "function": {
                "name": "lookup_demo_value",
                "parameters": {"type": "object", "properties": {"key": {"type": "string"}}},
            },
        }
    ]

    def build(self, sync: bool, variant: bool = False) -> Any:
        return (openai.OpenAI if sync else openai.AsyncOpenAI)(
            base_url=self.sim.openai_base_url,
            api_key="sk-test",
            max_retries=0,
            timeout=self.timeout,
        )

    def start(self) -> list[Any]:
        return [{"role": "user", "content": "How tall am I and how much do I weigh?"}]

    def _kwargs(self) -> dict[str, Any]:
        return {
            "model": "gpt-4o-mini",
            "messages": self.history,
            "tools": self.tools,
            **self.options,
        }

    def _outcome(self, message: Any) -> Outcome:
        calls = [
            Call(t.id, t.function.name, _args(t.function.arguments))
            for t in message.tool_calls or []
        ]
        return Outcome(calls, message.content or "", message)

    def turn(self) -> Outcome:
        client = self.client(True)
        if not self.stream:
            return self._outcome(
                client.chat.completions.create(**self._kwargs()).choices[0].message
            )
        with client.chat.completions.stream(**self._kwargs()) as stream:
            return self._outcome(stream.get_final_completion().choices[0].message)

    async def aturn(self) -> Outcome:
        client = self.client(False)
        if not self.stream:
            done = await client.chat.completions.create(**self._kwargs())
            return self._outcome(done.choices[0].message)
        async with client.chat.completions.stream(**self._kwargs()) as stream:
            return self._outcome((await stream.get_final_completion()).choices[0].message)

    def answer(self, outcome: Outcome, results: list[tuple[str | None, str, str]]) -> None:
        self.history.append(outcome.raw.model_dump(exclude_none=True, exclude={"parsed"}))
        for call_id, _name, content in results:
            self.history.append({"role": "tool", "tool_call_id": call_id, "content": content})


class ResponsesDriver(Driver):
    dialect = "openai.responses"
    tools: ClassVar[list[dict[str, Any]]] = [
        {
            "type": "function",
            "name": "lookup_demo_value",
            "parameters": {"type": "object", "properties": {"key": {"type": "string"}}},
        }
    ]

    build = ChatDriver.build

    def start(self) -> list[Any]:
        return [{"role": "user", "content": "How tall am I and how much do I weigh?"}]

    def _kwargs(self) -> dict[str, Any]:
        return {"model": "gpt-4.1-mini", "input": self.history, "tools": self.tools, **self.options}

    def _outcome(self, response: Any) -> Outcome:
        calls = [
            Call(o.call_id, o.name, _args(o.arguments))
            for o in response.output
            if o.type == "function_call"
        ]
        return Outcome(calls, response.output_text, response)

    def turn(self) -> Outcome:
        client = self.client(True)
        if not self.stream:
            return self._outcome(client.responses.create(**self._kwargs()))
        with client.responses.stream(**self._kwargs()) as stream:
            return self._outcome(stream.get_final_response())

    async def aturn(self) -> Outcome:
        client = self.client(False)
        if not self.stream:
            return self._outcome(await client.responses.create(**self._kwargs()))
        async with client.responses.stream(**self._kwargs()) as stream:
            return self._outcome(await stream.get_final_response())

    def answer(self, outcome: Outcome, results: list[tuple[str | None, str, str]]) -> None:
        self.history += [
            o.model_dump(exclude_none=True, exclude={"parsed_arguments"})
            for o in outcome.raw.output
        ]
        for call_id, _name, content in results:
            self.history.append(
                {"type": "function_call_output", "call_id": call_id, "output": content}
            )


class AnthropicDriver(Driver):
    dialect = "anthropic.messages"
    tools: ClassVar[list[dict[str, Any]]] = [
        {
            "name": "lookup_demo_value",
            "input_schema": {"type": "object", "properties": {"key": {"type": "string"}}},
        }
    ]

    def build(self, sync: bool, variant: bool = False) -> Any:
        return (anthropic.Anthropic if sync else anthropic.AsyncAnthropic)(
            base_url=self.sim.anthropic_base_url,
            api_key="sk-ant-test",
            max_retries=0,
            timeout=self.timeout,
        )

    def start(self) -> list[Any]:
        return [{"role": "user", "content": "How tall am I and how much do I weigh?"}]

    def _kwargs(self) -> dict[str, Any]:
        return {
            "model": "claude-simulated-1",
            "max_tokens": 256,
            "messages": self.history,
            "tools": self.tools,
            **self.options,
        }

    def _outcome(self, message: Any) -> Outcome:
        calls = [Call(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"]
        text = "".join(b.text for b in message.content if b.type == "text")
        return Outcome(calls, text, message)

    def turn(self) -> Outcome:
        client = self.client(True)
        if not self.stream:
            return self._outcome(client.messages.create(**self._kwargs()))
        with client.messages.stream(**self._kwargs()) as stream:
            return self._outcome(stream.get_final_message())

    async def aturn(self) -> Outcome:
        client = self.client(False)
        if not self.stream:
            return self._outcome(await client.messages.create(**self._kwargs()))
        async with client.messages.stream(**self._kwargs()) as stream:
            return self._outcome(await stream.get_final_message())

    def answer(self, outcome: Outcome, results: list[tuple[str | None, str, str]]) -> None:
        self.history.append(
            {"role": "assistant", "content": [b.model_dump() for b in outcome.raw.content]}
        )
        blocks = [
            {"type": "tool_result", "tool_use_id": call_id, "content": content}
            for call_id, _name, content in results
        ]
        self.history.append({"role": "user", "content": blocks})


class GoogleDriver(Driver):
    dialect = "google.genai"

    def build(self, sync: bool, variant: bool = False) -> Any:
        """``variant``: async over httpx2 instead of the SDK's default aiohttp."""
        httpx_async = variant
        options = gtypes.HttpOptions(
            base_url=self.sim.google_base_url,
            timeout=int(self.timeout * 1000),
            retry_options=gtypes.HttpRetryOptions(attempts=1),
            httpx_async_client=httpx2.AsyncClient(timeout=self.timeout) if httpx_async else None,
        )
        return genai.Client(api_key="test-key", http_options=options)

    def start(self) -> list[Any]:
        return [gtypes.Content(role="user", parts=[gtypes.Part(text="How tall am I?")])]

    def _config(self) -> gtypes.GenerateContentConfig:
        declaration = gtypes.FunctionDeclaration(
            name="lookup_demo_value",
            parameters_json_schema={"type": "object", "properties": {"key": {"type": "string"}}},
        )
        headers = self.options.get("extra_headers")
        return gtypes.GenerateContentConfig(
            tools=[gtypes.Tool(function_declarations=[declaration])],
            tool_config=self.options.get("tool_config"),
            automatic_function_calling=gtypes.AutomaticFunctionCallingConfig(disable=True),
            http_options=gtypes.HttpOptions(headers=headers) if headers else None,
        )

    def _outcome(self, chunks: list[Any]) -> Outcome:
        calls = [
            Call(fc.id, fc.name or "", fc.args)
            for chunk in chunks
            for fc in chunk.function_calls or []
        ]
        text = "".join(chunk.text or "" for chunk in chunks if not chunk.function_calls)
        parts = [p for chunk in chunks for p in chunk.candidates[0].content.parts or []]
        return Outcome(calls, text, gtypes.Content(role="model", parts=parts))

    def _kwargs(self) -> dict[str, Any]:
        return {"model": "gemini-2.5-flash", "contents": self.history, "config": self._config()}

    def turn(self) -> Outcome:
        models = self.client(True).models
        if not self.stream:
            return self._outcome([models.generate_content(**self._kwargs())])
        return self._outcome(list(models.generate_content_stream(**self._kwargs())))

    async def aturn(self, *, httpx_async: bool = False) -> Outcome:
        models = self.client(False, httpx_async).aio.models
        if not self.stream:
            return self._outcome([await models.generate_content(**self._kwargs())])
        stream = await models.generate_content_stream(**self._kwargs())
        return self._outcome([chunk async for chunk in stream])

    def answer(self, outcome: Outcome, results: list[tuple[str | None, str, str]]) -> None:
        self.history.append(outcome.raw)
        parts = [
            gtypes.Part(
                function_response=gtypes.FunctionResponse(
                    id=call_id, name=name, response={"result": content}
                )
            )
            for call_id, name, content in results
        ]
        self.history.append(gtypes.Content(role="user", parts=parts))


DRIVERS: dict[str, type[Driver]] = {
    d.dialect: d for d in (ChatDriver, ResponsesDriver, AnthropicDriver, GoogleDriver)
}
