"""The "application": each real SDK, sync or async, and the picture of what it saw.

``App(dialect, base_url, sync)`` makes a real client aimed at a loopback server;
``await app.view(variant)`` runs one streamed request and returns everything the
application could observe, as comparable data: every event (pydantic dump, in
order), text, the raw response's status/headers and ``.parse()`` result, the
helpers' final objects, and any exception (exact type, message, status, body).
Two runs are transparent to tooltap when their views are equal.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import anthropic
import openai
from google import genai
from google.genai import types as gtypes

from tests.reliability.support import dump, failure

MODELS = {
    "openai.chat": "gpt-4o-mini",
    "openai.responses": "gpt-4.1-mini",
    "anthropic.messages": "claude-sonnet-4-6",
    "google.genai": "gemini-2.5-flash",
}
USER = "How tall am I, and how much do I weigh?"
SCHEMA = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}
#: The request variants each SDK offers for a stream.
VARIANTS = {
    "openai.chat": ("plain", "raw", "helper"),
    "openai.responses": ("plain", "raw", "helper"),
    "anthropic.messages": ("plain", "raw", "helper"),
    "google.genai": ("plain",),
}


async def resolve(value: Any) -> Any:
    """``await`` an async client's result; pass a sync one through."""
    return await value if inspect.isawaitable(value) else value


async def each(iterable: Any, out: list[Any]) -> None:
    """Append the dump of every item of a sync or async iterable to ``out``."""
    if hasattr(iterable, "__aiter__"):
        async for item in iterable:
            out.append(dump(item))
    else:
        for item in iterable:
            out.append(dump(item))


async def close(value: Any) -> None:
    """``close()`` / ``aclose()`` / ``close()`` coroutine, whichever the object has."""
    for name in ("aclose", "close"):
        method = getattr(value, name, None)
        if callable(method):
            await resolve(method())
            return


class App:
    """One real SDK client of ``dialect`` against ``base_url`` (a loopback server)."""

    def __init__(
        self, dialect: str, base_url: str, *, sync: bool, timeout: float = 10, **options: Any
    ) -> None:
        self.dialect = dialect
        self.sync = sync
        self.model = MODELS[dialect]
        if dialect.startswith("openai."):
            cls: Any = openai.OpenAI if sync else openai.AsyncOpenAI
            self.client = cls(
                base_url=base_url + "/v1",
                api_key="sk-test",
                max_retries=0,
                timeout=timeout,
                **options,
            )
        elif dialect == "anthropic.messages":
            cls = anthropic.Anthropic if sync else anthropic.AsyncAnthropic
            self.client = cls(
                base_url=base_url, api_key="sk-ant-test", max_retries=0, timeout=timeout, **options
            )
        else:
            http = gtypes.HttpOptions(
                base_url=base_url,
                timeout=int(timeout * 1000),
                retry_options=gtypes.HttpRetryOptions(attempts=1),
                **options,
            )
            self.client = genai.Client(api_key="goog-test", http_options=http)

    async def aclose(self) -> None:
        if self.dialect == "google.genai":
            await close(self.client if self.sync else self.client.aio)
        else:
            await close(self.client)

    # --- requests ------------------------------------------------------------------------

    def _chat(self, **extra: Any) -> dict[str, Any]:
        tools = [
            {"type": "function", "function": {"name": "lookup_demo_value", "parameters": SCHEMA}}
        ]
        messages = [{"role": "user", "content": USER}]
        return {"model": self.model, "messages": messages, "tools": tools, **extra}

    def _responses(self, **extra: Any) -> dict[str, Any]:
        tools = [{"type": "function", "name": "lookup_demo_value", "parameters": SCHEMA}]
        return {
            "model": self.model,
            "input": [{"role": "user", "content": USER}],
            "tools": tools,
            **extra,
        }

    def _anthropic(self, **extra: Any) -> dict[str, Any]:
        tools = [{"name": "lookup_demo_value", "input_schema": SCHEMA}]
        messages = [{"role": "user", "content": USER}]
        return {
            "model": self.model,
            "max_tokens": 256,
            "messages": messages,
            "tools": tools,
            **extra,
        }

    def _google(self) -> dict[str, Any]:
        declaration = gtypes.FunctionDeclaration(
            name="lookup_demo_value", parameters_json_schema=SCHEMA
        )
        config = gtypes.GenerateContentConfig(
            tools=[gtypes.Tool(function_declarations=[declaration])],
            automatic_function_calling=gtypes.AutomaticFunctionCallingConfig(disable=True),
        )
        return {"model": self.model, "contents": USER, "config": config}

    async def stream(self) -> Any:
        """Open one stream (its body unread): an SDK ``Stream``/``AsyncStream`` or Google's
        response generator (which sends its request on the first ``next``)."""
        if self.dialect == "google.genai":
            models = self.client.models if self.sync else self.client.aio.models
            return await resolve(models.generate_content_stream(**self._google()))
        resource, request = self._resource()
        return await resolve(resource.create(**request, stream=True))

    async def assembled(self) -> tuple[str | None, list[tuple[Any, str, Any]]]:
        """One streamed turn through the SDK's own accumulator: its response id and the
        ``(call_id, name, args)`` of every tool call as the SDK assembled them."""
        if self.dialect == "google.genai":
            stream = await self.stream()
            responses = [r async for r in stream] if hasattr(stream, "__aiter__") else list(stream)
            calls = [
                (c.id, c.name, dict(c.args or {}))
                for r in responses
                for c in r.function_calls or ()
            ]
            return responses[0].response_id, calls
        resource, request = self._resource()
        manager = resource.stream(**request)
        if hasattr(manager, "__aenter__"):
            async with manager as events:
                await each(events, [])
                final = await resolve(_final(events))
        else:
            with manager as events:
                await each(events, [])
                final = _final(events)
        if self.dialect == "openai.chat":
            raw = final.choices[0].message.tool_calls or []
            calls = [(c.id, c.function.name, json.loads(c.function.arguments)) for c in raw]
        elif self.dialect == "openai.responses":
            items = [i for i in final.output if i.type == "function_call"]
            calls = [(i.call_id, i.name, json.loads(i.arguments)) for i in items]
        else:
            calls = [(b.id, b.name, b.input) for b in final.content if b.type == "tool_use"]
        return final.id, calls

    # --- views ---------------------------------------------------------------------------

    async def view(self, variant: str = "plain", *, stream: bool = True) -> dict[str, Any]:
        """Run one request; everything the app saw, or where it failed and how."""
        seen: dict[str, Any] = {"events": []}
        try:
            await self._run(variant, stream, seen)
        except Exception as exc:  # noqa: BLE001 - the app's exception is part of the picture
            seen["raised"] = failure(exc)
        return seen

    async def _run(self, variant: str, stream: bool, seen: dict[str, Any]) -> None:
        events: list[Any] = seen["events"]
        if self.dialect == "google.genai":
            await self._run_google(stream, seen)
            return
        resource, request = self._resource()
        if variant == "plain":
            result = await resolve(resource.create(**request, stream=stream))
            if not stream:
                seen["result"] = dump(result)
                return
            await each(result, events)
        elif variant == "raw":
            raw = await resolve(resource.with_raw_response.create(**request, stream=stream))
            seen["raw"] = {
                "type": type(raw).__qualname__,
                "status": raw.status_code,
                "headers": sorted(raw.headers.items()),
                "url": str(raw.http_request.url),
            }
            parsed = await resolve(raw.parse())
            seen["parsed_type"] = type(parsed).__qualname__
            if not stream:
                seen["result"] = dump(parsed)
                return
            await each(parsed, events)
        else:
            await self._run_helper(resource, request, seen)

    def _resource(self) -> tuple[Any, dict[str, Any]]:
        if self.dialect == "openai.chat":
            return self.client.chat.completions, self._chat()
        if self.dialect == "openai.responses":
            return self.client.responses, self._responses()
        return self.client.messages, self._anthropic()

    async def _run_helper(
        self, resource: Any, request: dict[str, Any], seen: dict[str, Any]
    ) -> None:
        manager = resource.stream(**request)
        if hasattr(manager, "__aenter__"):
            async with manager as events:
                await each(events, seen["events"])
                seen["final"] = dump(await resolve(_final(events)))
        else:
            with manager as events:
                await each(events, seen["events"])
                seen["final"] = dump(_final(events))

    async def _run_google(self, stream: bool, seen: dict[str, Any]) -> None:
        models = self.client.models if self.sync else self.client.aio.models
        if not stream:
            response = await resolve(models.generate_content(**self._google()))
            seen["result"] = dump(response)
            seen["text"] = response.text
            return
        responses = await resolve(models.generate_content_stream(**self._google()))
        texts: list[str | None] = []
        seen["texts"] = texts
        if hasattr(responses, "__aiter__"):
            async for response in responses:
                seen["events"].append(dump(response))
                texts.append(response.text)
        else:
            for response in responses:
                seen["events"].append(dump(response))
                texts.append(response.text)


def _final(events: Any) -> Any:
    for name in ("get_final_completion", "get_final_response", "get_final_message"):
        method = getattr(events, name, None)
        if method is not None:
            return method()
    raise AttributeError("no final-object helper")
