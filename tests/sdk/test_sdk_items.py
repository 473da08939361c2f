"""Inside an SDK's stream loop, tool calls come from the items the SDK decoded, and they
are the very ``Parsed`` the bytes give.

Each property generates a stream (interleaved tool calls, text, an error event, a cut
anywhere, any chunking), serves it to the real SDK (an httpx2 ``MockTransport``), reads
it as an app does, and compares what tooltap recorded with ``StreamParser`` over the
same bytes; when the stream ends as it should, the recorded result must come from the
items (``ItemParser.close``), not from the bytes. Each runs four times: with the bytes
kept whole; with them trimmed after every read (``TapState.trim``), where a stream that
does not end as it should is parsed on from the reducer the items left; with the
SDK's objects readable by attribute only, where the readers cannot take their fields
from a ``__dict__``; and under a ``max_argument_bytes`` that many calls' arguments pass.
The Anthropic one runs a fifth time with every object of one class (``SimpleNamespace``),
where its reader, which tells events apart by their classes once seen, must still read
each for what it is.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pydantic
import pytest
from google import genai
from google.genai import types
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import examples
from tests.recorder import Recorder
from tooltap._core import stream_items
from tooltap._core.dialects import anthropic_items
from tooltap._core.model import Limits, Parsed
from tooltap._core.stream import StreamParser
from tooltap._patch import sdk_stream, tap_stream
from tooltap._telemetry.operation import Operation

_ARGS = st.dictionaries(
    st.text(min_size=1, max_size=6),
    st.one_of(st.integers(), st.text(max_size=12), st.booleans()),
    max_size=3,
)


class _Seen:
    """What tooltap recorded for each response, whether the items gave it, and how many
    times the bytes kept were trimmed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.parsed: list[Parsed] = []
        self.from_items = 0
        self.trims = 0
        record, close = Operation.record_parsed, stream_items.ItemParser.close
        fork = stream_items.ItemParser.fork

        def items_fork(parser: stream_items.ItemParser) -> Any:
            base = fork(parser)
            self.trims += base is not None
            return base

        monkeypatch.setattr(stream_items.ItemParser, "fork", items_fork)

        def record_parsed(op: Operation, parsed: Parsed, *args: Any, **kwargs: Any) -> None:
            self.parsed.append(parsed)
            record(op, parsed, *args, **kwargs)

        def items_close(parser: stream_items.ItemParser) -> Parsed:
            self.from_items += 1
            return close(parser)

        monkeypatch.setattr(Operation, "record_parsed", record_parsed)
        monkeypatch.setattr(stream_items.ItemParser, "close", items_close)

    def take(self) -> tuple[Parsed, int]:
        (parsed,) = self.parsed
        from_items, self.parsed, self.from_items = self.from_items, [], 0
        return parsed, from_items


def _by_bytes(dialect: str, chunks: list[bytes], limits: Limits | None = None) -> Parsed:
    parser = StreamParser(dialect, limits=limits)
    for chunk in chunks:
        parser.feed(chunk)
    return parser.close()


def _chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points) if b > a]


def _transport(lib: Any, chunks: list[bytes]) -> Any:
    """A transport of ``lib`` (httpx or httpx2) answering with ``chunks`` as they are."""

    class Body(lib.SyncByteStream):  # type: ignore[misc]
        def __iter__(self) -> Iterator[bytes]:
            yield from chunks

    def handler(request: Any) -> Any:
        return lib.Response(200, headers={"content-type": "text/event-stream"}, stream=Body())

    return lib.MockTransport(handler)


def _anthropic_client(chunks: list[bytes]) -> anthropic.Anthropic:
    http = httpx2.Client(transport=_transport(httpx2, chunks))
    return anthropic.Anthropic(
        api_key="sk-ant-test", base_url="http://anthropic.test", http_client=http, max_retries=0
    )


def _anthropic_read(chunks: list[bytes]) -> None:
    _drain(_anthropic_client(chunks).messages.create(
        model="claude-x", max_tokens=64, stream=True,
        messages=[{"role": "user", "content": "weather?"}],
    ))  # fmt: skip


def _drain(stream: Any) -> None:
    try:
        for _ in stream:
            pass
    except Exception:  # noqa: BLE001, S110 - the SDK's own failure on the stream: recorded
        pass


def _openai_client(chunks: list[bytes]) -> openai.OpenAI:
    http = httpx2.Client(transport=_transport(httpx2, chunks))
    return openai.OpenAI(
        api_key="sk-test", base_url="http://openai.test/v1", http_client=http, max_retries=0
    )


def _chat_read(chunks: list[bytes]) -> None:
    _drain(_openai_client(chunks).chat.completions.create(
        model="gpt-x", stream=True, messages=[{"role": "user", "content": "weather?"}],
    ))  # fmt: skip


def _responses_read(chunks: list[bytes]) -> None:
    _drain(_openai_client(chunks).responses.create(model="gpt-x", input="weather?", stream=True))


def _google_read(chunks: list[bytes]) -> None:
    http = types.HttpOptions(
        base_url="http://google.test", client_args={"transport": _transport(httpx, chunks)}
    )
    client = genai.Client(api_key="goog-test", http_options=http)
    _drain(client.models.generate_content_stream(model="gemini-x", contents="weather?"))


#: How the items are read: the bytes kept before a trim as shipped, or trimmed after every
#: read; or the SDK's objects only readable by attribute (no ``__dict__``); or with the
#: arguments kept up to ``_SMALL`` characters (``max_argument_bytes``).
MODES = ["kept", "trimmed", "by-attribute", "small limit"]
_MODES = pytest.mark.parametrize("mode", MODES)
#: A ``max_argument_bytes`` that many generated arguments pass (``_ARGS``: up to ~60).
_SMALL = Limits(max_argument_bytes=24)


class _Attrs:
    """An SDK object whose fields can be read by attribute only, as objects that do not
    keep them in a ``__dict__`` (its models and lists of them, wrapped alike)."""

    __slots__ = ("_of",)

    def __init__(self, of: Any) -> None:
        self._of = of

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name != "__pydantic_extra__":
            raise AttributeError(name)
        return _by_attribute(getattr(self._of, name))


def _by_attribute(value: Any) -> Any:
    if isinstance(value, pydantic.BaseModel):
        return _Attrs(value)
    if isinstance(value, list):
        return [_by_attribute(v) for v in value]
    return value


def _namespace(value: Any) -> Any:
    if isinstance(value, pydantic.BaseModel):
        return SimpleNamespace(**{k: _namespace(v) for k, v in value.__dict__.items()})
    if isinstance(value, list):
        return [_namespace(v) for v in value]
    return value


def _read_as(monkeypatch: pytest.MonkeyPatch, wrap: Callable[[Any], Any]) -> None:
    """Every item parser gets the SDK's objects as ``wrap`` makes them."""
    init = stream_items.ItemParser.__init__

    def wrapped_init(parser: stream_items.ItemParser, reader: Any, reducer: Any) -> None:
        init(parser, reader, reducer)
        parser.item = lambda obj: reader.item(wrap(obj))

    monkeypatch.setattr(stream_items.ItemParser, "__init__", wrapped_init)


def _items_give_the_bytes_result(
    recorder: Recorder,
    monkeypatch: pytest.MonkeyPatch,
    streams: st.SearchStrategy[tuple[bytes, bool]],
    read: Callable[[list[bytes]], None],
    dialect: str,
    count: int,
    mode: str = "kept",
) -> None:
    """Each generated stream, in any chunking, read by the real SDK (``read``): tooltap
    records the ``Parsed`` its bytes give, from the items when the stream ends as it should
    (``mode``: one of ``MODES``, or ``one class``: every object a ``SimpleNamespace``, so
    that a reader telling items apart by their classes must not mistake one for another)."""
    limits = _SMALL if mode == "small limit" else None
    recorder.instrument(**({"limits": limits} if limits is not None else {}))
    seen = _Seen(monkeypatch)
    if mode == "trimmed":
        monkeypatch.setattr(tap_stream, "TRIM_BYTES", 1)
    elif mode == "by-attribute":
        _read_as(monkeypatch, _Attrs)
    elif mode == "one class":
        _read_as(monkeypatch, _namespace)

    @examples(count)
    @given(stream=streams, cuts=st.lists(st.integers(0, 1 << 16), max_size=8))
    def check(stream: tuple[bytes, bool], cuts: list[int]) -> None:
        body, whole = stream
        chunks = _chunked(body, cuts)
        read(chunks)
        parsed, from_items = seen.take()
        assert parsed == _by_bytes(dialect, chunks, limits)
        if whole:
            assert from_items == 1

    check()
    if mode == "trimmed":  # (each generated stream has several reads, of one event or more)
        assert seen.trims > count // 4


# -- anthropic ---------------------------------------------------------------------------


@st.composite
def _anthropic_stream(draw: st.DrawFn) -> tuple[bytes, bool]:
    """SSE bytes of a Messages stream, and whether it ends as it should."""
    tools = draw(st.lists(_ARGS, max_size=3))
    text = draw(st.booleans())
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "content": [],
            "model": "claude-x", "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 12, "output_tokens": 1},
        }}),
    ]  # fmt: skip
    blocks = []
    if text:
        blocks.append(("text", None))
    blocks += [("tool_use", json.dumps(args, ensure_ascii=draw(st.booleans()))) for args in tools]
    pending: list[list[Any]] = []
    first = draw(st.sampled_from([0, 0, 300]))  # (300: past CPython's one-object small ints)
    for index, (kind, args) in enumerate(blocks, first):
        if kind == "text":
            block: dict[str, Any] = {"type": "text", "text": ""}
            pieces = ["Let me ", "look."]
        else:
            block = {"type": "tool_use", "id": f"toolu_{index}", "name": f"tool_{index}"}
            block["input"] = {}
            assert args is not None
            cuts = sorted(draw(st.lists(st.integers(0, len(args)), max_size=4)))
            pieces = [args[a:b] for a, b in zip([0, *cuts], [*cuts, len(args)], strict=True)]
            if draw(st.integers(0, 9)) == 0:  # a fragment that is not a string
                pieces.insert(draw(st.integers(0, len(pieces))), draw(st.sampled_from([7, None])))
        start = {"type": "content_block_start", "index": index, "content_block": block}
        events.append(("content_block_start", start))
        pending.append(pieces)
    order = draw(st.permutations([i for i, p in enumerate(pending) for _ in p]))
    for position in order:
        piece, index = pending[position].pop(0), first + position
        delta = (
            {"type": "text_delta", "text": piece}
            if blocks[position][0] == "text"
            else {"type": "input_json_delta", "partial_json": piece}
        )
        events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                               "delta": delta}))  # fmt: skip
        if draw(st.integers(0, 9)) == 0:
            events.append(("ping", {"type": "ping"}))
    for index in draw(st.permutations(range(first, first + len(blocks)))):
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    reason = draw(st.sampled_from(["tool_use", "end_turn", "max_tokens"]))
    end = {"stop_reason": reason, "stop_sequence": None}
    events.append(("message_delta", {"type": "message_delta", "delta": end,
                                     "usage": {"output_tokens": 40}}))  # fmt: skip
    events.append(("message_stop", {"type": "message_stop"}))
    whole = True
    if draw(st.integers(0, 4)) == 0:  # an error event ends it
        at = draw(st.integers(1, len(events)))
        error = {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
        events = [*events[:at], ("error", error)]
        whole = False
    compact = draw(st.booleans())
    body = b"".join(
        f"event: {name}\ndata: {json.dumps(data, separators=(',', ':') if compact else None)}"
        f"\n\n".encode()
        for name, data in events
    )
    if draw(st.integers(0, 4)) == 0:  # cut anywhere
        body = body[: draw(st.integers(0, len(body) - 1))]
        whole = False
    return body, whole


@pytest.mark.parametrize("mode", [*MODES, "one class"])
def test_anthropic_items_give_the_bytes_result(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    _items_give_the_bytes_result(
        recorder, monkeypatch, _anthropic_stream(), _anthropic_read, "anthropic.messages", 60,
        mode,
    )  # fmt: skip


# -- openai.chat -------------------------------------------------------------------------


@st.composite
def _chat_stream(draw: st.DrawFn) -> tuple[bytes, bool]:
    """SSE bytes of a Chat Completions stream, and whether it ends as it should."""
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
            "model": "gpt-x", "system_fingerprint": None}  # fmt: skip

    def chunk(choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        return {**head, "choices": choices, **extra}

    def delta(choice: int, body: dict[str, Any]) -> dict[str, Any]:
        return {"index": choice, "delta": body, "logprobs": None, "finish_reason": None}

    n = draw(st.integers(1, 2))
    chunks = [chunk([delta(c, {"role": "assistant", "content": ""}) for c in range(n)])]
    steps: list[tuple[int, dict[str, Any]]] = []
    for choice in range(n):
        tools = draw(st.lists(_ARGS, max_size=3))
        for index, args in enumerate(tools):
            text = json.dumps(args, ensure_ascii=draw(st.booleans()))
            cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=4)))
            pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
            first = {"index": index, "id": f"call_{choice}_{index}", "type": "function",
                     "function": {"name": f"tool_{index}", "arguments": ""}}  # fmt: skip
            steps.append((choice, {"tool_calls": [first]}))
            steps += [
                (choice, {"tool_calls": [{"index": index, "function": {"arguments": p}}]})
                for p in pieces
            ]
        if draw(st.booleans()):
            steps.append((choice, {"content": "ok"}))
    for choice, body in steps:  # (calls of one choice in order; choices may interleave)
        chunks.append(chunk([delta(choice, body)]))
    reason = draw(st.sampled_from(["tool_calls", "stop", "length"]))
    for choice in range(n):
        chunks.append(chunk([{"index": choice, "delta": {}, "logprobs": None,
                              "finish_reason": reason}]))  # fmt: skip
    if draw(st.booleans()):
        usage = {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12,
                 "prompt_tokens_details": {"cached_tokens": 2}}  # fmt: skip
        chunks.append(chunk([], usage=usage))
    whole = True
    if draw(st.integers(0, 4)) == 0:  # an error ends it
        at = draw(st.integers(1, len(chunks)))
        chunks = [*chunks[:at], {"error": {"message": "busy", "type": "server_error"}}]
        whole = False
    compact = draw(st.booleans())
    body = b"".join(
        f"data: {json.dumps(c, separators=(',', ':') if compact else None)}\n\n".encode()
        for c in chunks
    )
    if whole and draw(st.booleans()):
        body += b"data: [DONE]\n\n"
    if draw(st.integers(0, 4)) == 0:
        body = body[: draw(st.integers(0, len(body) - 1))]
        whole = False
    return body, whole


@_MODES
def test_openai_chat_items_give_the_bytes_result(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    _items_give_the_bytes_result(
        recorder, monkeypatch, _chat_stream(), _chat_read, "openai.chat", 60, mode
    )


# -- openai.responses --------------------------------------------------------------------


@st.composite
def _responses_stream(draw: st.DrawFn) -> tuple[bytes, bool]:
    """SSE bytes of a Responses stream, and whether it ends as it should."""
    response = {"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-x",
                "status": "in_progress", "output": []}  # fmt: skip
    events: list[dict[str, Any]] = [{"type": "response.created", "response": response}]
    items: list[dict[str, Any]] = []
    pieces: list[list[str]] = []
    if draw(st.booleans()):
        items.append({"type": "message", "id": "msg_0", "role": "assistant",
                      "status": "completed", "content": []})  # fmt: skip
        pieces.append(["Let me ", "look."])
    for args in draw(st.lists(_ARGS, max_size=3)):
        text = json.dumps(args, ensure_ascii=draw(st.booleans()))
        cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=4)))
        pieces.append([text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)])
        n = len(items)
        items.append({"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
                      "name": f"tool_{n}", "arguments": text, "status": "completed"})  # fmt: skip
    for pos, item in enumerate(items):
        added = {**item, "status": "in_progress"}
        if item["type"] == "function_call":
            added["arguments"] = ""
        events.append({"type": "response.output_item.added", "output_index": pos, "item": added})
    order = draw(st.permutations([i for i, p in enumerate(pieces) for _ in p]))
    for pos in order:
        piece = pieces[pos].pop(0)
        kind = "function_call_arguments" if items[pos]["type"] == "function_call" else "output_text"
        events.append({"type": f"response.{kind}.delta", "item_id": items[pos]["id"],
                       "output_index": pos, "delta": piece})  # fmt: skip
    for pos, item in enumerate(items):
        if item["type"] == "function_call":
            events.append({"type": "response.function_call_arguments.done", "item_id": item["id"],
                           "output_index": pos, "arguments": item["arguments"]})  # fmt: skip
        events.append({"type": "response.output_item.done", "output_index": pos, "item": item})
    status = draw(st.sampled_from(["completed", "incomplete"]))
    final = {**response, "status": status, "output": items,
             "usage": {"input_tokens": 9, "output_tokens": 5, "total_tokens": 14,
                       "input_tokens_details": {"cached_tokens": 1},
                       "output_tokens_details": {"reasoning_tokens": 0}}}  # fmt: skip
    if status == "incomplete":
        final["incomplete_details"] = {"reason": "max_output_tokens"}
    events.append({"type": f"response.{status}", "response": final})
    whole = True
    if draw(st.integers(0, 4)) == 0:  # an error event ends it
        at = draw(st.integers(1, len(events)))
        error = {"type": "error", "code": "server_error", "message": "busy", "param": None}
        events = [*events[:at], error]
        whole = False
    named = draw(st.booleans())
    compact = draw(st.booleans())
    body = b"".join(
        (
            (f"event: {e['type']}\n" if named else "")
            + "data: "
            + json.dumps({**e, "sequence_number": n}, separators=(",", ":") if compact else None)
            + "\n\n"
        ).encode()
        for n, e in enumerate(events)
    )
    if draw(st.integers(0, 4)) == 0:
        body = body[: draw(st.integers(0, len(body) - 1))]
        whole = False
    return body, whole


@_MODES
def test_openai_responses_items_give_the_bytes_result(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    _items_give_the_bytes_result(
        recorder, monkeypatch, _responses_stream(), _responses_read, "openai.responses", 60,
        mode,
    )  # fmt: skip


# -- google-genai ------------------------------------------------------------------------


@st.composite
def _google_stream(draw: st.DrawFn) -> tuple[bytes, bool]:
    """SSE bytes of a ``streamGenerateContent`` stream, and whether it ends as it should."""
    tools = draw(st.lists(_ARGS, max_size=3))
    chunks: list[dict[str, Any]] = []
    if draw(st.booleans()):
        chunks.append({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hm"}]}}]})
    for index, args in enumerate(tools):
        call: dict[str, Any] = {"name": f"tool_{index}", "args": args}
        if draw(st.booleans()):
            call["id"] = f"call_{index}"
        content = {"role": "model", "parts": [{"functionCall": call}]}
        chunks.append({"candidates": [{"content": content}]})
    chunks.append({
        "candidates": [{"content": {"role": "model", "parts": [{"text": ""}]},
                        "finishReason": draw(st.sampled_from(["STOP", "MAX_TOKENS"]))}],
        "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 4},
        "modelVersion": "gemini-x", "responseId": "resp_1",
    })  # fmt: skip
    for chunk in chunks[:-1]:
        chunk.update({"modelVersion": "gemini-x", "responseId": "resp_1"})
    whole = True
    if draw(st.integers(0, 4)) == 0:
        at = draw(st.integers(0, len(chunks)))
        chunks = [
            *chunks[:at],
            {"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}},
        ]
        whole = False
    end = draw(st.sampled_from(["\r\n\r\n", "\n\n"]))
    body = b"".join(f"data: {json.dumps(c)}{end}".encode() for c in chunks)
    if draw(st.integers(0, 4)) == 0:
        body = body[: draw(st.integers(0, len(body) - 1))]
        whole = False
    return body, whole


@pytest.mark.parametrize("mode", ["kept", "small limit"])
def test_google_items_give_the_bytes_result(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """(Under a small limit, the items' arguments are measured as the bytes' are: the bytes
    kept tell when one could exceed it.)"""
    _items_give_the_bytes_result(
        recorder, monkeypatch, _google_stream(), _google_read, "google.genai", 40, mode
    )


def test_unexpected_items_warn_once_then_the_bytes_decide(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An item the reader does not expect (another SDK's objects): one WARNING for the
    dialect, then that stream's bytes give the result, with no call lost."""
    recorder.instrument()
    seen = _Seen(monkeypatch)
    item = anthropic_items.Items.item
    taken = {"n": 0}

    def unexpected(reader: anthropic_items.Items, ev: Any) -> list[Any]:
        taken["n"] += 1
        if taken["n"] % 6 == 0:  # a later item, after the first call was handed on
            raise AttributeError("'Event' object has no attribute 'delta'")
        return item(reader, ev)

    monkeypatch.setattr(anthropic_items.Items, "item", unexpected)
    monkeypatch.setattr(sdk_stream, "_warned", set())
    caplog.set_level(logging.WARNING, logger="tooltap")
    events = [("message_start", {"type": "message_start", "message": {
        "id": "msg_1", "model": "claude-x", "stop_reason": None,
        "usage": {"input_tokens": 3, "output_tokens": 1}}})]  # fmt: skip
    for index in range(3):
        block = {"type": "tool_use", "id": f"toolu_{index}", "name": "lookup", "input": {}}
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index,
                                     "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": index,
                                     "delta": {"type": "input_json_delta",
                                               "partial_json": '{"city": "Oslo"}'}}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]  # fmt: skip
    events += [("message_stop", {"type": "message_stop"})]
    body = b"".join(f"event: {n}\ndata: {json.dumps(d)}\n\n".encode() for n, d in events)
    chunks = [body[i : i + 40] for i in range(0, len(body), 40)]

    for _ in range(2):
        _anthropic_read(chunks)
        parsed, from_items = seen.take()
        assert parsed == _by_bytes("anthropic.messages", chunks)
        assert [c.call_id for c in parsed.calls] == ["toolu_0", "toolu_1", "toolu_2"]
        assert from_items == 0

    warnings = [r for r in caplog.records if "not what tooltap reads" in r.getMessage()]
    assert len(warnings) == 1


def test_a_body_cut_inside_its_last_event_is_told_by_the_bytes(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every choice finished, then the body ends inside the usage chunk: the SDK drops
    that event, the bytes read it; the recorded result is the bytes' (with the usage)."""
    recorder.instrument()
    seen = _Seen(monkeypatch)
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    finish = {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    usage = {**head, "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 7,
                                              "total_tokens": 12}}  # fmt: skip
    body = f"data: {json.dumps(finish)}\n\ndata: {json.dumps(usage)}\n".encode()
    _chat_read([body])
    parsed, from_items = seen.take()
    assert parsed == _by_bytes("openai.chat", [body])
    assert parsed.usage is not None and parsed.usage.output_tokens == 7
    assert from_items == 0
