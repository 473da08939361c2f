"""The benchmark cases: one request of the issue-6 workload through a real client.

Each case builds its client once (``make(url)``) and then runs one request per call
(``run(client)``), consuming the response the way an app would: every chunk or event
of a stream, or the parsed body. ``run`` returns ``(items, ttfc)``: how many items the
app saw and the wall time from the call to the first one (None for whole bodies).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CASES",
    "NON_LLM",
    "RAW",
    "TOOLS",
    "Case",
    "Outcome",
    "close_client",
    "long_history_request",
]

Outcome = tuple[int, float | None]

#: Declared tool schema: what ``benchmarks._sim.tool_args`` produces.
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "mode": {"type": "string", "enum": ["append", "replace"]},
        "lines": {"type": "array", "items": {"type": "integer"}},
        "content": {"type": "string"},
    },
    "required": ["path", "content"],
}
TOOLS = [f"write_note_{i}" for i in range(3)]
USER = [{"role": "user", "content": "Write the three notes."}]
MAX_TOKENS = 4096


@dataclass(frozen=True)
class Case:
    """One benchmark case: a client factory and one request."""

    name: str
    dialect: str
    streamed: bool
    make: Callable[[str], Any]
    run: Callable[[Any], Outcome]
    #: None when the case is sync; else its event loop (the case runs inside it).
    is_async: bool = False


def _drain(iterable: Any, start: float) -> Outcome:
    items, first = 0, None
    for _ in iterable:
        if first is None:
            first = time.perf_counter() - start
        items += 1
    return items, first


async def _adrain(iterable: Any, start: float) -> Outcome:
    items, first = 0, None
    async for _ in iterable:
        if first is None:
            first = time.perf_counter() - start
        items += 1
    return items, first


_loop: asyncio.AbstractEventLoop | None = None


def _sync(coro_fn: Callable[[Any], Coroutine[Any, Any, Outcome]]) -> Callable[[Any], Outcome]:
    """Run an async case to completion on one long-lived event loop."""

    def run(client: Any) -> Outcome:
        global _loop
        if _loop is None:
            _loop = asyncio.new_event_loop()
        return _loop.run_until_complete(coro_fn(client))

    return run


def close_client(case: Case, client: Any) -> None:
    """Close what ``case.make`` opened (async clients on the cases' event loop)."""
    target = getattr(client, "client", client)  # _Google keeps the genai client
    close = getattr(target, "aclose" if case.is_async else "close", None)
    if close is None and case.is_async:
        close = getattr(target, "close", None)
    if close is None:
        return
    result = close()
    if case.is_async and _loop is not None and asyncio.iscoroutine(result):
        _loop.run_until_complete(result)


# --- OpenAI Chat Completions -----------------------------------------------------------


def _openai(url: str) -> Any:
    import openai

    return openai.OpenAI(base_url=url + "/v1", api_key="sk-bench", max_retries=0)


def _aopenai(url: str) -> Any:
    import openai

    return openai.AsyncOpenAI(base_url=url + "/v1", api_key="sk-bench", max_retries=0)


def _chat_request() -> dict[str, Any]:
    tools = [{"type": "function", "function": {"name": n, "parameters": SCHEMA}} for n in TOOLS]
    return {"model": "gpt-4o-mini", "messages": USER, "tools": tools, "max_tokens": MAX_TOKENS}


def long_history_request(turns: int) -> dict[str, Any]:
    """A Chat Completions request whose history holds ``turns`` answered tool-call turns
    (~2.4 KB each: ~500 KB at 200), ending with a new result: what a long agent run re-sends."""
    messages: list[dict[str, Any]] = []
    for n in range(turns):
        args = {"path": f"notes/{n}.md", "mode": "append", "lines": list(range(8)),
                "content": f"note {n}: " + "x" * 900}  # fmt: skip
        messages.append({"role": "user", "content": f"Step {n}: write the next note."})
        messages.append(
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": f"call_{n}",
                        "type": "function",
                        "function": {"name": TOOLS[n % len(TOOLS)], "arguments": json.dumps(args)},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": f"call_{n}", "content": "ok " * 400})
        if n < turns - 1:
            messages.append({"role": "assistant", "content": f"Note {n} written."})
    return {**_chat_request(), "messages": messages}


def _history_body(turns: int) -> Callable[[Any], Outcome]:
    """A whole-body request re-sending ``turns`` answered turns (``long_history_request``)."""
    body = long_history_request(turns)

    def run(client: Any) -> Outcome:
        completion = client.chat.completions.create(**body)
        return len(completion.choices[0].message.tool_calls or ()), None

    return run


def _chat_stream(client: Any) -> Outcome:
    start = time.perf_counter()
    return _drain(client.chat.completions.create(**_chat_request(), stream=True), start)


def _chat_helper(client: Any) -> Outcome:
    start = time.perf_counter()
    with client.chat.completions.stream(**_chat_request()) as events:
        return _drain(events, start)


def _chat_body(client: Any) -> Outcome:
    completion = client.chat.completions.create(**_chat_request())
    return len(completion.choices[0].message.tool_calls), None


async def _chat_stream_async(client: Any) -> Outcome:
    start = time.perf_counter()
    stream = await client.chat.completions.create(**_chat_request(), stream=True)
    return await _adrain(stream, start)


# --- OpenAI Responses -----------------------------------------------------------------


def _responses_request() -> dict[str, Any]:
    tools = [{"type": "function", "name": n, "parameters": SCHEMA} for n in TOOLS]
    return {"model": "gpt-4.1-mini", "input": USER, "tools": tools, "max_output_tokens": MAX_TOKENS}


def _responses_stream(client: Any) -> Outcome:
    start = time.perf_counter()
    return _drain(client.responses.create(**_responses_request(), stream=True), start)


def _responses_helper(client: Any) -> Outcome:
    start = time.perf_counter()
    with client.responses.stream(**_responses_request()) as events:
        return _drain(events, start)


def _responses_body(client: Any) -> Outcome:
    response = client.responses.create(**_responses_request())
    return len(response.output), None


# --- Anthropic Messages ---------------------------------------------------------------


def _anthropic(url: str) -> Any:
    import anthropic

    return anthropic.Anthropic(base_url=url, api_key="sk-ant-bench", max_retries=0)


def _aanthropic(url: str) -> Any:
    import anthropic

    return anthropic.AsyncAnthropic(base_url=url, api_key="sk-ant-bench", max_retries=0)


def _messages_request() -> dict[str, Any]:
    tools = [{"name": n, "input_schema": SCHEMA} for n in TOOLS]
    return {"model": "claude-sonnet-5", "messages": USER, "tools": tools, "max_tokens": MAX_TOKENS}


def _messages_stream(client: Any) -> Outcome:
    start = time.perf_counter()
    return _drain(client.messages.create(**_messages_request(), stream=True), start)


def _messages_helper(client: Any) -> Outcome:
    start = time.perf_counter()
    with client.messages.stream(**_messages_request()) as events:
        return _drain(events, start)


def _messages_body(client: Any) -> Outcome:
    message = client.messages.create(**_messages_request())
    return len(message.content), None


async def _messages_stream_async(client: Any) -> Outcome:
    start = time.perf_counter()
    stream = await client.messages.create(**_messages_request(), stream=True)
    return await _adrain(stream, start)


# --- Google GenAI ---------------------------------------------------------------------


class _Google:
    """A google-genai client and its request config, built once."""

    def __init__(self, url: str) -> None:
        from google import genai
        from google.genai import types

        self.client = genai.Client(
            api_key="goog-bench", http_options=types.HttpOptions(base_url=url)
        )
        declarations = [
            types.FunctionDeclaration(name=n, parameters_json_schema=SCHEMA) for n in TOOLS
        ]
        self.config = types.GenerateContentConfig(
            tools=[types.Tool(function_declarations=declarations)],
            max_output_tokens=MAX_TOKENS,
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )
        self.contents = [types.Content(role="user", parts=[types.Part(text=USER[0]["content"])])]


def _google_stream(g: _Google) -> Outcome:
    start = time.perf_counter()
    chunks = g.client.models.generate_content_stream(
        model="gemini-2.5-flash", contents=g.contents, config=g.config
    )
    return _drain(chunks, start)


def _google_body(g: _Google) -> Outcome:
    response = g.client.models.generate_content(
        model="gemini-2.5-flash", contents=g.contents, config=g.config
    )
    return len(response.function_calls or ()), None


CASES: tuple[Case, ...] = (
    Case("openai.chat create(stream=True)", "openai.chat", True, _openai, _chat_stream),
    Case("openai.chat .stream() helper", "openai.chat", True, _openai, _chat_helper),
    Case(
        "openai.chat async stream", "openai.chat", True, _aopenai, _sync(_chat_stream_async), True
    ),
    Case("openai.chat not streamed", "openai.chat", False, _openai, _chat_body),
    Case(
        "openai.responses create(stream=True)", "openai.responses", True, _openai, _responses_stream
    ),
    Case("openai.responses .stream() helper", "openai.responses", True, _openai, _responses_helper),
    Case("openai.responses not streamed", "openai.responses", False, _openai, _responses_body),
    Case("anthropic create(stream=True)", "anthropic.messages", True, _anthropic, _messages_stream),
    Case("anthropic .stream() helper", "anthropic.messages", True, _anthropic, _messages_helper),
    Case(
        "anthropic async stream",
        "anthropic.messages",
        True,
        _aanthropic,
        _sync(_messages_stream_async),
        True,
    ),
    Case("anthropic not streamed", "anthropic.messages", False, _anthropic, _messages_body),
    Case("google generate_content_stream", "google.genai", True, _Google, _google_stream),
    Case("google generate_content", "google.genai", False, _Google, _google_body),
)


# --- traffic that is not LLM traffic --------------------------------------------------


def _plain(url: str) -> Any:
    import httpx2

    return httpx2.Client(base_url=url)


def _plain_post(client: Any) -> Outcome:
    response = client.post("/v1/search", json={"query": "tooltap", "page": 1})
    return len(response.content), None


def _plain_get(client: Any) -> Outcome:
    response = client.get("/v1/models")
    return len(response.content), None


def _raw(path: str, request: Callable[[], dict[str, Any]]) -> Callable[[Any], Outcome]:
    """An app reading an LLM stream as bytes over httpx2 (no SDK): the tap parses it all.
    Without an SDK's own parsing, its count is tooltap's per-chunk step nearly alone."""

    def run(client: Any) -> Outcome:
        body = {**request(), "stream": True}
        start = time.perf_counter()
        with client.stream("POST", path, json=body) as response:
            return _drain(response.iter_bytes(), start)

    return run


RAW: tuple[Case, ...] = (
    Case(
        "httpx2 raw SSE, openai.chat (no SDK)",
        "openai.chat",
        True,
        _plain,
        _raw("/v1/chat/completions", _chat_request),
    ),
    Case(
        "httpx2 raw SSE, openai.responses (no SDK)",
        "openai.responses",
        True,
        _plain,
        _raw("/v1/responses", _responses_request),
    ),
    Case(
        "httpx2 raw SSE, anthropic.messages (no SDK)",
        "anthropic.messages",
        True,
        _plain,
        _raw("/v1/messages", _messages_request),
    ),
)


def _forward(client: Any) -> Outcome:
    """A gateway (no SDK): each raw chunk of an Anthropic stream forwarded downstream as it
    arrives (to a buffer standing for the client's socket); the tap parses every chunk."""
    body = {**_messages_request(), "stream": True}
    downstream = bytearray()
    start = time.perf_counter()
    items, first = 0, None
    with client.stream("POST", "/v1/messages", json=body) as response:
        for chunk in response.iter_raw():
            if first is None:
                first = time.perf_counter() - start
            downstream += chunk
            items += 1
    return items, first


GATEWAY: tuple[Case, ...] = (
    Case(
        "httpx2 streaming proxy, anthropic.messages (no SDK)",
        "anthropic.messages",
        True,
        _plain,
        _forward,
    ),
)

NON_LLM: tuple[Case, ...] = (
    Case("httpx2 POST /v1/search (not LLM)", "", False, _plain, _plain_post),
    Case("httpx2 GET /v1/models (not LLM)", "", False, _plain, _plain_get),
)
#: Long conversations (``long_history_request``), counted by ``benchmarks._instructions``.
HISTORY: tuple[Case, ...] = tuple(
    Case(f"openai.chat history {turns} turns", "openai.chat", False, _openai, _history_body(turns))
    for turns in (10, 200)
)
