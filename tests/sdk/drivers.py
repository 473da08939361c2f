"""Drive the lookup conversation through each real SDK, sync or async, streamed or not.

One async driver per API serves both client kinds: ``resolve`` awaits what the
async client returns and passes the sync client's values through; ``drain`` and
``entered`` do the same for iterators and stream managers. Every driver returns
the tool calls *as the SDK itself assembled them* (its own objects), so tests can
compare them with what tooltap reported.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, ClassVar, Final

import anthropic
import httpx
import httpx2
import openai
from google import genai
from google.genai import types

from tooltap.simulator import Simulator

USER = "How tall am I, and how much do I weigh?"
RESULTS = {"height": "170 cm", "weight": "70 kg"}
SCHEMA = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}
TEMPERATURE = 0.25
MAX_TOKENS = 256
STOP = ["###"]
#: The ``gen_ai.request.*`` attributes each driver's requests set.
PARAMS = {"gen_ai.request.temperature": TEMPERATURE, "gen_ai.request.max_tokens": MAX_TOKENS}

Calls = list[tuple[str | None, str, dict[str, Any]]]


async def resolve(value: Any) -> Any:
    """``await value`` for an async client's awaitable, else ``value``."""
    return await value if inspect.isawaitable(value) else value


async def drain(iterable: Any) -> list[Any]:
    """Every item of a sync or async iterable."""
    if hasattr(iterable, "__aiter__"):
        return [item async for item in iterable]
    return list(iterable)


@asynccontextmanager
async def entered(manager: Any) -> AsyncIterator[Any]:
    """``async with`` or ``with``, whichever the manager supports."""
    if hasattr(manager, "__aenter__"):
        async with manager as value:
            yield value
    else:
        with manager as value:
            yield value


#: anthropic >= 2 traces its own calls (the ``open_telemetry`` client option).
ANTHROPIC_TRACES: Final = int(anthropic.__version__.split(".")[0]) >= 2


@dataclass
class Turn:
    """Turn 1 as the SDK assembled it: its calls, and what turn 2 must send back."""

    calls: Calls
    reply: Any


class OpenAIChat:
    dialect = "openai.chat"
    provider = "openai"
    model = "gpt-4o-mini"
    params = PARAMS

    def client(
        self, sim: Simulator, *, sync: bool, tracer_provider: Any = None, **options: Any
    ) -> Any:
        cls = openai.OpenAI if sync else openai.AsyncOpenAI
        return cls(base_url=sim.openai_base_url, api_key="sk-test", **options)

    def _request(self, messages: list[Any]) -> dict[str, Any]:
        tools = [
            {"type": "function", "function": {"name": "lookup_demo_value", "parameters": SCHEMA}}
        ]
        return {
            "model": self.model,
            "messages": messages,
            "tools": tools,
            "temperature": TEMPERATURE,
            "max_tokens": MAX_TOKENS,
        }

    async def _message(self, client: Any, stream: bool, messages: list[Any]) -> Any:
        request = self._request(messages)
        if not stream:
            return (await resolve(client.chat.completions.create(**request))).choices[0].message
        async with entered(client.chat.completions.stream(**request)) as events:
            await drain(events)
            return (await resolve(events.get_final_completion())).choices[0].message

    async def raw(self, client: Any, stream: bool) -> tuple[Any, list[Any]]:
        """``create`` as is: the returned object, and the item(s) it gives the app."""
        request = self._request([{"role": "user", "content": USER}])
        result = await resolve(client.chat.completions.create(**request, stream=stream))
        return result, await drain(result) if stream else [result]

    async def turn1(self, client: Any, stream: bool) -> Turn:
        message = await self._message(client, stream, [{"role": "user", "content": USER}])
        calls = [
            (c.id, c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls
        ]
        return Turn(calls, message)

    async def turn2(self, client: Any, stream: bool, turn: Turn) -> str:
        messages: list[Any] = [
            {"role": "user", "content": USER},
            turn.reply.model_dump(exclude_none=True, include={"role", "content", "tool_calls"}),
        ]
        messages += [
            {"role": "tool", "tool_call_id": cid, "content": RESULTS[args["key"]]}
            for cid, _, args in turn.calls
        ]
        return str((await self._message(client, stream, messages)).content)


class OpenAIResponses:
    dialect = "openai.responses"
    provider = "openai"
    model = "gpt-4.1-mini"
    params = PARAMS

    client = OpenAIChat.client

    def _request(self, items: list[Any]) -> dict[str, Any]:
        tools = [{"type": "function", "name": "lookup_demo_value", "parameters": SCHEMA}]
        return {
            "model": self.model,
            "input": items,
            "tools": tools,
            "temperature": TEMPERATURE,
            "max_output_tokens": MAX_TOKENS,
        }

    async def _response(self, client: Any, stream: bool, items: list[Any]) -> Any:
        request = self._request(items)
        if not stream:
            return await resolve(client.responses.create(**request))
        async with entered(client.responses.stream(**request)) as events:
            await drain(events)
            return await resolve(events.get_final_response())

    async def raw(self, client: Any, stream: bool) -> tuple[Any, list[Any]]:
        """``create`` as is: the returned object, and the item(s) it gives the app."""
        request = self._request([{"role": "user", "content": USER}])
        result = await resolve(client.responses.create(**request, stream=stream))
        return result, await drain(result) if stream else [result]

    async def turn1(self, client: Any, stream: bool) -> Turn:
        response = await self._response(client, stream, [{"role": "user", "content": USER}])
        items = [item for item in response.output if item.type == "function_call"]
        return Turn([(i.call_id, i.name, json.loads(i.arguments)) for i in items], items)

    async def turn2(self, client: Any, stream: bool, turn: Turn) -> str:
        items: list[Any] = [{"role": "user", "content": USER}]
        items += [
            {
                "type": "function_call",
                "call_id": i.call_id,
                "name": i.name,
                "arguments": i.arguments,
            }
            for i in turn.reply
        ]
        items += [
            {"type": "function_call_output", "call_id": cid, "output": RESULTS[args["key"]]}
            for cid, _, args in turn.calls
        ]
        return str((await self._response(client, stream, items)).output_text)


class Anthropic:
    dialect = "anthropic.messages"
    provider = "anthropic"
    model = "claude-sonnet-4-6"

    params: ClassVar = {
        "gen_ai.request.stop_sequences": tuple(STOP),
        "gen_ai.request.max_tokens": MAX_TOKENS,
    }

    def __init__(self, *, traced: bool = False) -> None:
        self.traced = traced

    def client(
        self, sim: Simulator, *, sync: bool, tracer_provider: Any = None, **options: Any
    ) -> Any:
        cls = anthropic.Anthropic if sync else anthropic.AsyncAnthropic
        if ANTHROPIC_TRACES:  # anthropic >= 2: its own tracing, on for the traced driver
            options["open_telemetry"] = (
                {"tracer_provider": tracer_provider} if self.traced else False
            )
        return cls(base_url=sim.anthropic_base_url, api_key="sk-ant-test", **options)

    def _request(self, messages: list[Any]) -> dict[str, Any]:
        tools = [{"name": "lookup_demo_value", "input_schema": SCHEMA}]
        return {
            "model": self.model,
            "messages": messages,
            "tools": tools,
            "stop_sequences": STOP,
            "max_tokens": MAX_TOKENS,
        }

    async def _message(self, client: Any, stream: bool, messages: list[Any]) -> Any:
        request = self._request(messages)
        if not stream:
            return await resolve(client.messages.create(**request))
        async with entered(client.messages.stream(**request)) as events:
            await drain(events)
            return await resolve(events.get_final_message())

    async def raw(self, client: Any, stream: bool) -> tuple[Any, list[Any]]:
        """``create`` as is: the returned object, and the item(s) it gives the app."""
        request = self._request([{"role": "user", "content": USER}])
        result = await resolve(client.messages.create(**request, stream=stream))
        return result, await drain(result) if stream else [result]

    async def turn1(self, client: Any, stream: bool) -> Turn:
        message = await self._message(client, stream, [{"role": "user", "content": USER}])
        blocks = [b for b in message.content if b.type == "tool_use"]
        return Turn([(b.id, b.name, b.input) for b in blocks], blocks)

    async def turn2(self, client: Any, stream: bool, turn: Turn) -> str:
        uses = [
            {"type": "tool_use", "id": b.id, "name": b.name, "input": b.input} for b in turn.reply
        ]
        results = [
            {"type": "tool_result", "tool_use_id": cid, "content": RESULTS[args["key"]]}
            for cid, _, args in turn.calls
        ]
        messages = [
            {"role": "user", "content": USER},
            {"role": "assistant", "content": uses},
            {"role": "user", "content": results},
        ]
        message = await self._message(client, stream, messages)
        return "".join(b.text for b in message.content if b.type == "text")


@dataclass
class GoogleModels:
    """``client.models`` or ``client.aio.models``, keeping the client alive (it closes on GC)."""

    client: genai.Client
    sync: bool

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client.models if self.sync else self.client.aio.models, name)


class Google:
    dialect = "google.genai"
    provider = "gcp.gemini"  # the Gemini API path form, on the loopback host
    model = "gemini-2.5-flash"
    params = PARAMS

    def __init__(self, transport: str = "default") -> None:
        """``default``: httpx2 sync, aiohttp async; ``httpx2`` or ``httpx``: that one for both."""
        self.transport = transport

    def _transports(self) -> dict[str, Any]:
        if self.transport == "httpx":
            return {
                "client_args": {"transport": httpx.HTTPTransport()},
                "async_client_args": {"transport": httpx.AsyncHTTPTransport()},
            }
        if self.transport == "httpx2":  # a transport of its own turns aiohttp off
            return {"async_client_args": {"transport": httpx2.AsyncHTTPTransport()}}
        return {}

    def client(
        self, sim: Simulator, *, sync: bool, tracer_provider: Any = None, **options: Any
    ) -> Any:
        http = types.HttpOptions(base_url=sim.google_base_url, **self._transports(), **options)
        return GoogleModels(genai.Client(api_key="goog-test", http_options=http), sync)

    def _config(self) -> types.GenerateContentConfig:
        declaration = types.FunctionDeclaration(
            name="lookup_demo_value", parameters_json_schema=SCHEMA
        )
        return types.GenerateContentConfig(
            tools=[types.Tool(function_declarations=[declaration])],
            temperature=TEMPERATURE,
            max_output_tokens=MAX_TOKENS,
        )

    async def _responses(self, models: Any, stream: bool, contents: list[Any]) -> list[Any]:
        request = {"model": self.model, "contents": contents, "config": self._config()}
        if not stream:
            return [await resolve(models.generate_content(**request))]
        return await drain(await resolve(models.generate_content_stream(**request)))

    async def raw(self, models: Any, stream: bool) -> tuple[Any, list[Any]]:
        """``generate_content[_stream]`` as is: the returned object, and the item(s) it gives."""
        user = types.Content(role="user", parts=[types.Part(text=USER)])
        request = {"model": self.model, "contents": [user], "config": self._config()}
        if not stream:
            result = await resolve(models.generate_content(**request))
            return result, [result]
        result = await resolve(models.generate_content_stream(**request))
        return result, await drain(result)

    async def turn1(self, models: Any, stream: bool) -> Turn:
        user = types.Content(role="user", parts=[types.Part(text=USER)])
        calls = [
            fc
            for r in await self._responses(models, stream, [user])
            for fc in r.function_calls or ()
        ]
        return Turn([(fc.id, fc.name, dict(fc.args or {})) for fc in calls], calls)

    async def turn2(self, models: Any, stream: bool, turn: Turn) -> str:
        answers = [
            types.Part(
                function_response=types.FunctionResponse(
                    id=fc.id, name=fc.name, response={"result": RESULTS[(fc.args or {})["key"]]}
                )
            )
            for fc in turn.reply
        ]
        contents = [
            types.Content(role="user", parts=[types.Part(text=USER)]),
            types.Content(role="model", parts=[types.Part(function_call=fc) for fc in turn.reply]),
            types.Content(role="user", parts=answers),
        ]
        return "".join(r.text or "" for r in await self._responses(models, stream, contents))


DRIVERS: dict[str, Any] = {
    "openai.chat": OpenAIChat(),
    "openai.responses": OpenAIResponses(),
    "anthropic": Anthropic(),
    **({"anthropic.traced": Anthropic(traced=True)} if ANTHROPIC_TRACES else {}),
    "google": Google(),
    "google.httpx2": Google("httpx2"),
    "google.httpx": Google("httpx"),
}
