"""Each fault, as the real SDKs see it over real sockets."""

from __future__ import annotations

import time
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from google.genai import errors as gerrors

from tests.simulator.drivers import (
    DRIVERS,
    AnthropicDriver,
    ChatDriver,
    GoogleDriver,
    ResponsesDriver,
)
from tooltap.simulator import Fault, Simulator

STATUS_ERRORS = (openai.APIStatusError, anthropic.APIStatusError, gerrors.APIError)
USER = [{"role": "user", "content": "How tall am I?"}]
CHAT_TOOLS = ChatDriver.tools


def status_of(exc: BaseException) -> int:
    return int(getattr(exc, "status_code", None) or getattr(exc, "code", 0))


def error_headers(exc: BaseException) -> Any:
    response = getattr(exc, "response", None)
    return getattr(response, "headers", {})


_CLIENTS: dict[tuple[Any, ...], Any] = {}


def openai_client(sim: Simulator, max_retries: int = 0, timeout: float = 5.0) -> openai.OpenAI:
    key = ("openai", sim.url, max_retries, timeout)
    if key not in _CLIENTS:  # SDK clients are slow to build: share them
        _CLIENTS[key] = openai.OpenAI(
            base_url=sim.openai_base_url,
            api_key="sk-test",
            max_retries=max_retries,
            timeout=timeout,
        )
    return _CLIENTS[key]  # type: ignore[no-any-return]


def anthropic_client(sim: Simulator) -> anthropic.Anthropic:
    key = ("anthropic", sim.url)
    if key not in _CLIENTS:
        _CLIENTS[key] = anthropic.Anthropic(
            base_url=sim.anthropic_base_url, api_key="sk-a", max_retries=0, timeout=5.0
        )
    return _CLIENTS[key]  # type: ignore[no-any-return]


ANTHROPIC_KW: dict[str, Any] = {
    "model": "claude-simulated-1",
    "max_tokens": 100,
    "messages": USER,
    "tools": AnthropicDriver.tools,
}


@pytest.mark.parametrize("dialect", list(DRIVERS))
def test_rate_limit_is_a_429_with_retry_after(sim: Simulator, dialect: str) -> None:
    sim.inject(Fault("rate_limit", retry_after=0.1), dialect=dialect)
    with pytest.raises(STATUS_ERRORS) as info:
        DRIVERS[dialect](sim, stream=False).turn()
    assert status_of(info.value) == 429
    assert error_headers(info.value)["retry-after"] == "0.1"
    if dialect.startswith("openai"):
        assert isinstance(info.value, openai.RateLimitError)
        assert info.value.code == "rate_limit_exceeded"
        assert error_headers(info.value)["retry-after-ms"] == "100"
    elif dialect == "anthropic.messages":
        assert isinstance(info.value, anthropic.RateLimitError)
    else:
        assert info.value.status == "RESOURCE_EXHAUSTED"  # type: ignore[attr-defined]
        assert info.value.details["error"]["details"][0]["retryDelay"] == "0.1s"  # type: ignore[attr-defined]
    assert [r.fault for r in sim.requests] == ["rate_limit;retry_after=0.1"]


@pytest.mark.parametrize(
    ("dialect", "words"),
    [
        ("openai.chat", "exceeded your current quota"),
        ("openai.responses", "exceeded your current quota"),
        ("anthropic.messages", "credit balance is too low"),
        ("google.genai", "credits are depleted"),
    ],
)
def test_insufficient_balance_is_a_429_saying_so(sim: Simulator, dialect: str, words: str) -> None:
    sim.inject(Fault("insufficient_balance"))
    with pytest.raises(STATUS_ERRORS) as info:
        DRIVERS[dialect](sim, stream=True).turn()
    assert status_of(info.value) == 429
    assert words in str(info.value)
    if dialect.startswith("openai"):
        assert info.value.code == "insufficient_quota"  # type: ignore[union-attr]


@pytest.mark.parametrize("dialect", list(DRIVERS))
def test_server_error_and_overloaded(sim: Simulator, dialect: str) -> None:
    sim.inject(Fault("server_error", status=502))
    sim.inject(Fault("overloaded"))
    driver = DRIVERS[dialect](sim, stream=False)
    for expected in (502, 529 if dialect == "anthropic.messages" else 503):
        with pytest.raises(STATUS_ERRORS) as info:
            driver.turn()
        assert status_of(info.value) == expected
    if dialect == "anthropic.messages":
        assert isinstance(info.value, anthropic.OverloadedError)
    assert len(driver.turn().calls) == 2  # the queue is empty again


def test_sdk_retries_consume_repeated_faults(sim: Simulator) -> None:
    sim.inject(Fault("rate_limit", retry_after=0.01), dialect="openai", times=2)
    client = openai_client(sim, max_retries=2)
    done = client.chat.completions.create(model="m", messages=USER, tools=CHAT_TOOLS)
    assert len(done.choices[0].message.tool_calls or []) == 2
    assert [r.fault for r in sim.requests] == ["rate_limit;retry_after=0.01"] * 2 + [None]


def test_faults_are_fifo_per_matching_dialect(sim: Simulator) -> None:
    sim.inject(Fault("rate_limit"), dialect="anthropic.messages")
    sim.inject(Fault("server_error"))
    with pytest.raises(openai.InternalServerError):
        openai_client(sim).chat.completions.create(model="m", messages=USER)
    with pytest.raises(anthropic.RateLimitError):
        anthropic_client(sim).messages.create(**ANTHROPIC_KW)
    assert anthropic_client(sim).messages.create(**ANTHROPIC_KW).stop_reason == "tool_use"


def test_fault_header_picks_a_fault_per_request(sim: Simulator) -> None:
    header = {"x-tooltap-sim-fault": "rate_limit;retry_after=0.25"}
    with pytest.raises(openai.RateLimitError) as info:
        ChatDriver(sim, stream=False, extra_headers=header).turn()
    assert info.value.response.headers["retry-after"] == "0.25"
    with pytest.raises(gerrors.ClientError):
        GoogleDriver(sim, stream=True, extra_headers=header).turn()
    assert [r.fault for r in sim.requests] == ["rate_limit;retry_after=0.25"] * 2
    bad = {"x-tooltap-sim-fault": "no_such_fault"}
    with pytest.raises(anthropic.BadRequestError, match="unknown fault kind"):
        anthropic_client(sim).messages.create(**ANTHROPIC_KW, extra_headers=bad)


def test_error_event_openai_chat(sim: Simulator) -> None:
    sim.inject(Fault("error_event"))
    seen = []
    stream = openai_client(sim).chat.completions.create(
        model="m", messages=USER, tools=CHAT_TOOLS, stream=True
    )
    with pytest.raises(openai.APIError, match="server had an error"):
        for chunk in stream:
            seen += chunk.choices[0].delta.tool_calls or []
    assert seen and seen[0].id.startswith("call_")


def test_error_event_openai_responses(sim: Simulator) -> None:
    sim.inject(Fault("error_event"))
    events = list(
        openai_client(sim).responses.create(
            model="m", input="hi", tools=ResponsesDriver.tools, stream=True
        )
    )
    kinds = [e.type for e in events]
    assert "response.function_call_arguments.delta" in kinds
    assert kinds[-1] == "response.failed" and "response.completed" not in kinds
    assert events[-1].response.error.code == "server_error"  # type: ignore[union-attr]
    assert [e.sequence_number for e in events] == list(range(len(events)))


def test_error_event_anthropic(sim: Simulator) -> None:
    sim.inject(Fault("error_event"))
    kinds = []
    with pytest.raises(anthropic.APIStatusError, match="overloaded_error"):
        for event in anthropic_client(sim).messages.create(**ANTHROPIC_KW, stream=True):
            kinds.append(event.type)
    assert "content_block_start" in kinds and "message_stop" not in kinds


def test_error_event_google_and_non_stream(sim: Simulator) -> None:
    sim.inject(Fault("error_event"), times=2)
    with pytest.raises(gerrors.ServerError) as info:
        GoogleDriver(sim, stream=True).turn()
    assert info.value.code == 500
    with pytest.raises(openai.InternalServerError):
        openai_client(sim).chat.completions.create(model="m", messages=USER, tools=CHAT_TOOLS)


def _chat_stream_args(stream: Any) -> tuple[dict[int, str], list[str | None]]:
    args: dict[int, str] = {}
    finishes = []
    for chunk in stream:
        for choice in chunk.choices:
            finishes.append(choice.finish_reason)
            for call in choice.delta.tool_calls or []:
                args[call.index] = args.get(call.index, "") + (call.function.arguments or "")
    return args, finishes


def test_truncate_args_openai_chat(sim: Simulator) -> None:
    sim.inject(Fault("truncate_args"))
    stream = openai_client(sim).chat.completions.create(
        model="m", messages=USER, tools=CHAT_TOOLS, stream=True
    )
    args, finishes = _chat_stream_args(stream)
    assert args[0] == '{"key":"height"}'
    assert args[1] and '{"key":"weight"}'.startswith(args[1]) and args[1] != '{"key":"weight"}'
    assert "tool_calls" not in finishes


def test_truncate_args_openai_responses(sim: Simulator) -> None:
    sim.inject(Fault("truncate_args"))
    deltas: dict[int, str] = {}
    stream = openai_client(sim).responses.create(
        model="m", input="hi", tools=ResponsesDriver.tools, stream=True
    )
    kinds = []
    for event in stream:
        kinds.append(event.type)
        if event.type == "response.function_call_arguments.delta":
            deltas[event.output_index] = deltas.get(event.output_index, "") + event.delta
    assert deltas[0] == '{"key":"height"}' and '{"key":"weight"}'.startswith(deltas[1])
    assert deltas[1] != '{"key":"weight"}' and "response.completed" not in kinds


def test_truncate_args_anthropic(sim: Simulator) -> None:
    sim.inject(Fault("truncate_args"))
    partial: dict[int, str] = {}
    for event in anthropic_client(sim).messages.create(**ANTHROPIC_KW, stream=True):
        if event.type == "content_block_delta" and event.delta.type == "input_json_delta":
            partial[event.index] = partial.get(event.index, "") + event.delta.partial_json
    assert partial[0] == '{"key":"height"}'
    assert '{"key":"weight"}'.startswith(partial[1]) and partial[1] != '{"key":"weight"}'


def test_truncate_args_google(sim: Simulator) -> None:
    sim.inject(Fault("truncate_args"))
    driver = GoogleDriver(sim, stream=True)
    seen = []
    with pytest.raises(gerrors.UnknownApiResponseError, match=r'"args": \{"key": $'):
        for chunk in driver.client(True).models.generate_content_stream(**driver._kwargs()):
            seen += chunk.function_calls or []
    assert [c.args for c in seen] == [{"key": "height"}]


def test_truncate_bytes_closes_cleanly_or_mid_chunk(sim: Simulator, http: httpx2.Client) -> None:
    body = {"model": "m", "messages": USER, "tools": CHAT_TOOLS, "stream": True}
    url = sim.openai_base_url + "/chat/completions"
    full = http.post(url, json=body).content
    events = full.split(b"\n\n")
    at = len(b"\n\n".join(events[:3])) + 2  # exactly three whole events
    sim.inject(Fault("truncate_bytes", at=at))
    cut = http.post(url, json=body)
    assert cut.headers["connection"] == "close" and "content-length" not in cut.headers
    assert len(cut.content) == at and cut.content.count(b"data: ") == 3
    sim.inject(Fault("truncate_bytes", at=at))
    chunks = list(openai_client(sim).chat.completions.create(**body))  # clean EOF: no error
    assert len(chunks) == 3 and chunks[-1].choices[0].finish_reason is None
    sim.inject(Fault("truncate_bytes", at=at, framing="chunked"))
    with pytest.raises(httpx2.RemoteProtocolError):
        http.post(url, json=body)
    sim.inject(Fault("truncate_bytes", at=at, framing="chunked"))
    with pytest.raises(openai.APIConnectionError):
        list(openai_client(sim).chat.completions.create(**body))


def test_invalid_json_args(sim: Simulator) -> None:
    sim.inject(Fault("invalid_json_args"))
    done = openai_client(sim).chat.completions.create(model="m", messages=USER, tools=CHAT_TOOLS)
    calls = done.choices[0].message.tool_calls or []
    assert [c.function.arguments for c in calls] == ['{"key": height}', '{"key":"weight"}']  # type: ignore[union-attr]
    sim.inject(Fault("invalid_json_args", index=1))
    partial: dict[int, str] = {}
    for event in anthropic_client(sim).messages.create(**ANTHROPIC_KW, stream=True):
        if event.type == "content_block_delta" and event.delta.type == "input_json_delta":
            partial[event.index] = partial.get(event.index, "") + event.delta.partial_json
    assert partial == {0: '{"key":"height"}', 1: '{"key": weight}'}
    sim.inject(Fault("invalid_json_args"))
    message = anthropic_client(sim).messages.create(**ANTHROPIC_KW)
    assert [b.input for b in message.content] == ['{"key": height}', {"key": "weight"}]  # type: ignore[union-attr]


def test_invalid_json_args_google_wire(sim: Simulator, http: httpx2.Client) -> None:
    sim.inject(Fault("invalid_json_args"))
    url = sim.url + "/v1beta/models/gemini-2.5-flash:generateContent"
    body = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": [{"functionDeclarations": [{"name": "lookup_demo_value"}]}],
    }
    parts = http.post(url, json=body).json()["candidates"][0]["content"]["parts"]
    assert [p["functionCall"]["args"] for p in parts] == ['{"key": height}', {"key": "weight"}]


@pytest.mark.parametrize("dialect", list(DRIVERS))
def test_stall_times_the_client_out(sim: Simulator, dialect: str) -> None:
    sim.inject(Fault("stall", seconds=3))
    timeouts = (openai.APITimeoutError, anthropic.APITimeoutError, httpx2.TimeoutException)
    started = time.monotonic()
    with pytest.raises(timeouts):
        DRIVERS[dialect](sim, stream=False, timeout=0.3).turn()
    assert time.monotonic() - started < 2.5


def test_stall_mid_stream_after_first_event(sim: Simulator) -> None:
    sim.inject(Fault("stall", seconds=3))
    chunks: list[Any] = []
    stream = openai_client(sim, timeout=0.3).chat.completions.create(
        model="m", messages=USER, tools=CHAT_TOOLS, stream=True
    )
    with pytest.raises(openai.APITimeoutError):
        chunks.extend(stream)
    assert len(chunks) == 1 and chunks[0].choices[0].delta.role == "assistant"


async def test_stall_google_aiohttp(sim: Simulator) -> None:
    sim.inject(Fault("stall", seconds=3))
    with pytest.raises(TimeoutError):
        await GoogleDriver(sim, stream=True, timeout=0.3).aturn()


@pytest.mark.parametrize("dialect", list(DRIVERS))
def test_reset_before_the_response(sim: Simulator, dialect: str) -> None:
    sim.inject(Fault("reset"))
    errors = (openai.APIConnectionError, anthropic.APIConnectionError, httpx2.TransportError)
    with pytest.raises(errors):
        DRIVERS[dialect](sim, stream=False).turn()


async def test_reset_google_aiohttp_and_mid_stream(sim: Simulator) -> None:
    import aiohttp

    sim.inject(Fault("reset"))
    with pytest.raises(aiohttp.ClientError):
        await GoogleDriver(sim, stream=False).aturn()
    sim.inject(Fault("reset", at=200))
    with pytest.raises(openai.APIConnectionError):
        await ChatDriver(sim, stream=True).aturn()


@pytest.mark.parametrize("dialect", list(DRIVERS))
def test_chunk_size_one_changes_nothing_visible(dialect: str) -> None:
    text = "Mides 170 cm — ¡listo! 🎉"
    with Simulator(final_text=text) as sim:
        sim.inject(Fault("chunk_size", size=1), times=2)
        driver = DRIVERS[dialect](sim, stream=True)
        first = driver.turn()
        assert [c.args for c in first.calls] == [{"key": "height"}, {"key": "weight"}]
        driver.answer(first, [(c.call_id, c.name, "x") for c in first.calls])
        assert driver.turn().text == text
        assert [r.fault for r in sim.requests] == ["chunk_size;size=1"] * 2


async def test_chunk_size_odd_google_aiohttp() -> None:
    text = "Mides 170 cm — ¡listo! 🎉"
    with Simulator(final_text=text) as sim:
        sim.inject(Fault("chunk_size", size=3), times=2)
        driver = GoogleDriver(sim, stream=True)
        first = await driver.aturn()
        driver.answer(first, [(c.call_id, c.name, "x") for c in first.calls])
        assert (await driver.aturn()).text == text


def test_delay_postpones_the_response(sim: Simulator) -> None:
    sim.inject(Fault("delay", seconds=0.3))
    started = time.monotonic()
    done = anthropic_client(sim).messages.create(**ANTHROPIC_KW)
    assert time.monotonic() - started >= 0.3 and done.stop_reason == "tool_use"


def test_buffered_sends_headers_then_the_whole_stream_at_once(sim: Simulator) -> None:
    """A buffering proxy's release: headers at once, every event in one write after the wait."""
    sim.inject(Fault("buffered", seconds=0.4))
    body = {"model": "gpt-4o-mini", "messages": USER, "tools": CHAT_TOOLS, "stream": True}
    started = time.monotonic()
    with (
        httpx2.Client(timeout=5) as client,
        client.stream("POST", sim.openai_base_url + "/chat/completions", json=body) as response,
    ):
        headers_after = time.monotonic() - started
        chunks = list(response.iter_raw())
        body_after = time.monotonic() - started
    data = b"".join(chunks)
    assert headers_after < 0.3 and body_after >= 0.4
    assert data.count(b"\n\n") >= 5 and data.rstrip().endswith(b"data: [DONE]")
    assert len(chunks[0]) > 0.9 * len(data)  # one write: the first read carries it all
