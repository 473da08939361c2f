"""Generated streams shaped like real traffic, checked against the SDKs' own accumulators.

Parallel calls whose deltas interleave (Chat Completions by ``index``, Responses by
``item_id``, Anthropic by content block ``index``), error events at any point, argument
text broken where no continuation mends it, Snowflake Cortex's empty legacy
``function_call`` beside real ``tool_calls``. Fed in any chunking, ``StreamParser``
returns exactly the calls the SDK assembles from the same events (openai's
``ChatCompletionStreamState`` and ``ResponseStreamState``, anthropic's
``accumulate_event``), but for calls the stream cut (``truncated_json``) and calls whose
arguments are not JSON (``invalid_json``); the whole-body twin of a stream agrees too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.core.test_split_property import PROFILE, feed_in_pieces
from tooltap import Parsed, ToolCall
from tooltap.core import parse_request, parse_response

pytest.importorskip("openai")
pytest.importorskip("anthropic")

from anthropic._models import construct_type as anthropic_construct
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import RawMessageStreamEvent
from openai._models import construct_type as openai_construct
from openai._types import omit
from openai.lib.streaming.chat._completions import ChatCompletionStreamState
from openai.lib.streaming.responses._responses import ResponseStreamState
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseStreamEvent

COMPACT = {"separators": (",", ":"), "ensure_ascii": False}
_names = st.from_regex(r"[a-z][a-z_]{0,11}", fullmatch=True)
_values = st.one_of(st.integers(-99, 99), st.text(max_size=8), st.booleans(), st.none())
_args = st.dictionaries(
    st.text(st.characters(codec="utf-8"), max_size=6),
    st.one_of(_values, st.lists(_values, min_size=1, max_size=3)),
    max_size=3,
)


@dataclass
class Spec:
    """One generated call: its arguments text (maybe broken) split into fragments."""

    name: str
    call_id: str
    text: str
    pieces: list[str]
    broken: bool


def _break(text: str) -> str | None:
    """``text`` with an array closed by ``}``: no continuation can make it JSON."""
    cut = text.rfind("]")
    return None if cut < 0 else text[:cut] + "}" + text[cut + 1 :]


@st.composite
def specs(draw: st.DrawFn, n_max: int = 3) -> list[Spec]:
    out = []
    for i in range(draw(st.integers(1, n_max))):
        args = draw(_args)
        text = json.dumps(args, ensure_ascii=draw(st.booleans()))
        broken = False
        if draw(st.integers(0, 4)) == 0:
            bad = _break(json.dumps({**args, "list": [1, 2]}))
            assert bad is not None
            text, broken = bad, True
        cuts = sorted(set(draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=4))))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        out.append(Spec(draw(_names) + str(i), f"call_{i}", text, pieces, broken))
    return out


@st.composite
def schedules(draw: st.DrawFn, calls: list[Spec], interleave: bool) -> list[tuple[int, int]]:
    """The order of ``(call, piece)`` deltas: each call's pieces in order, calls started
    in order, merged at random (interleaved) or one after the other."""
    if not interleave:
        return [(c, p) for c, spec in enumerate(calls) for p in range(len(spec.pieces))]
    left = [list(range(len(spec.pieces))) for spec in calls]
    order: list[tuple[int, int]] = []
    started = 0
    while any(left):
        ready = [i for i in range(started) if left[i]] + ([started] if started < len(calls) else [])
        c = draw(st.sampled_from(ready))
        started = max(started, c + 1)
        order.append((c, left[c].pop(0)))
    return order


def _sse(events: list[tuple[str | None, Any]]) -> list[bytes]:
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data, **COMPACT)  # type: ignore[arg-type]
        out.append((f"event: {name}\n" if name else "").encode() + f"data: {text}\n\n".encode())
    return out


def chunkings() -> st.SearchStrategy[tuple[bool, list[int]]]:
    """Event by event (as servers flush), or cut anywhere."""
    return st.tuples(st.booleans(), st.lists(st.integers(0, 1 << 16), max_size=12))


def feed(
    events: list[bytes], dialect: str, chunking: tuple[bool, list[int]]
) -> tuple[list[ToolCall], Parsed]:
    body = b"".join(events)
    by_event, cuts = chunking
    if by_event:
        cuts = [sum(len(e) for e in events[:i]) for i in range(1, len(events))]
    else:
        cuts = [c % (len(body) + 1) for c in cuts]
    emitted, parsed = feed_in_pieces(body, cuts, dialect)
    assert parsed == parse_response(body, dialect)
    assert emitted == list(parsed.calls)
    return emitted, parsed


def check_against(parsed: Parsed, reference: list[tuple[str, str | None, str]], cut: bool) -> None:
    """``parsed.calls`` are the reference calls (name, id, arguments text) that are JSON,
    in order; a missing one is ``invalid_json``, or (the stream cut) ``truncated_json``."""
    problems = {p.call_id or p.name: p.kind for p in parsed.problems if p.call_index is not None}
    got = [(c.name, c.call_id, c.args) for c in parsed.calls]
    want = []
    for name, call_id, text in reference:
        try:
            args = json.loads(text) if text.strip() else {}
        except ValueError:
            assert problems.get(call_id or name) in (
                ("invalid_json", "truncated_json") if cut else ("invalid_json",)
            ), (call_id, parsed.problems)
            continue
        if cut and (name, call_id, args) not in got:
            assert problems.get(call_id or name) == "truncated_json", (call_id, parsed.problems)
            continue
        want.append((name, call_id, args))
    assert got == want
    assert not any(p.detail.endswith("after it finished") for p in parsed.problems)


# --- Chat Completions -------------------------------------------------------------------------

HEAD = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}


def chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return {**HEAD, "choices": [choice]}


@st.composite
def chat_streams(draw: st.DrawFn) -> tuple[list[tuple[str | None, Any]], list[Spec], bool, bool]:
    calls = draw(specs())
    order = draw(schedules(calls, draw(st.booleans())))
    cortex = draw(st.booleans())  # an empty legacy function_call in every delta
    events: list[tuple[str | None, Any]] = [
        (None, chat_chunk({"role": "assistant", "content": None}))
    ]
    started: set[int] = set()
    for c, p in order:
        spec = calls[c]
        if c in started:
            tc: dict[str, Any] = {"index": c, "function": {"arguments": spec.pieces[p]}}
        else:
            started.add(c)
            function = {"name": spec.name, "arguments": spec.pieces[p]}
            tc = {"index": c, "id": spec.call_id, "type": "function", "function": function}
        delta: dict[str, Any] = {"tool_calls": [tc]}
        if cortex:
            delta["function_call"] = {"name": "", "arguments": ""}
        events.append((None, chat_chunk(delta)))
    events.append((None, chat_chunk({}, "tool_calls")))
    events.append((None, "[DONE]"))
    error_at = draw(st.one_of(st.none(), st.integers(1, len(events) - 1)))
    if error_at is not None:  # Groq: an error event ends the stream there
        err = {"error": {"message": "failed", "type": "invalid_request_error", "code": "x"}}
        events = [*events[:error_at], ("error", err)]
    return events, calls, cortex, error_at is not None


def chat_reference(
    events: list[tuple[str | None, Any]],
) -> tuple[list[tuple[str, str | None, str]], Any]:
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    for name, data in events:
        if name is None and data != "[DONE]":
            state.handle_chunk(ChatCompletionChunk.model_validate(data))
    snapshot = state.current_completion_snapshot
    message = snapshot.choices[0].message
    calls = [(t.function.name, t.id, t.function.arguments) for t in message.tool_calls or ()]
    return calls, snapshot


@given(stream=chat_streams(), chunking=chunkings())
@PROFILE
def test_chat_matches_the_sdk_accumulator(stream: Any, chunking: tuple[bool, list[int]]) -> None:
    events, _calls, cortex, errored = stream
    _, parsed = feed(_sse(events), "openai.chat", chunking)
    reference, snapshot = chat_reference(events)
    check_against(parsed, reference, cut=errored)
    assert parsed.complete is not errored
    if errored:
        return
    assert all(p.kind == "invalid_json" for p in parsed.problems), parsed.problems
    body = snapshot.model_dump(mode="json", exclude_none=True)
    body["choices"][0]["finish_reason"] = "tool_calls"
    if cortex:
        body["choices"][0]["message"]["function_call"] = {"name": "", "arguments": ""}
    whole = parse_response(json.dumps(body).encode(), "openai.chat")
    assert whole.calls == parsed.calls
    assert [p.kind for p in whole.problems] == [p.kind for p in parsed.problems]


# --- Responses --------------------------------------------------------------------------------


@st.composite
def responses_streams(draw: st.DrawFn) -> tuple[list[tuple[str | None, Any]], list[Spec], bool]:
    calls = draw(specs())
    order = draw(schedules(calls, draw(st.booleans())))
    seq = iter(range(1, 10_000))

    def ev(kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
        return kind, {"type": kind, "sequence_number": next(seq), **fields}

    def item(c: int, status: str, text: str) -> dict[str, Any]:
        spec = calls[c]
        return {"id": f"fc_{c}", "type": "function_call", "status": status,
                "arguments": text, "call_id": spec.call_id, "name": spec.name}  # fmt: skip

    resp = {"id": "resp_1", "object": "response", "created_at": 1, "model": "m", "output": [],
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}  # fmt: skip
    events = [ev("response.created", response={**resp, "status": "in_progress"})]
    for c in range(len(calls)):
        events.append(
            ev("response.output_item.added", output_index=c, item=item(c, "in_progress", ""))
        )
    for c, p in order:
        delta = calls[c].pieces[p]
        events.append(
            ev(
                "response.function_call_arguments.delta",
                item_id=f"fc_{c}",
                output_index=c,
                delta=delta,
            )
        )
    for c, spec in enumerate(calls):
        events.append(ev("response.function_call_arguments.done", item_id=f"fc_{c}",
                         output_index=c, arguments=spec.text))  # fmt: skip
        events.append(
            ev("response.output_item.done", output_index=c, item=item(c, "completed", spec.text))
        )
    output = [item(c, "completed", spec.text) for c, spec in enumerate(calls)]
    events.append(
        ev("response.completed", response={**resp, "status": "completed", "output": output})
    )
    error_at = draw(st.one_of(st.none(), st.integers(1, len(events) - 1)))
    if error_at is not None:
        if draw(st.booleans()):
            failed = {**resp, "status": "failed", "error": {"code": "server_error", "message": "x"}}
            last = ev("response.failed", response=failed)
        else:
            last = ev("error", code="server_error", message="x", param=None)
        events = [*events[:error_at], last]
    return list(events), calls, error_at is not None


def responses_reference(events: list[tuple[str | None, Any]]) -> list[tuple[str, str | None, str]]:
    state: ResponseStreamState[Any] = ResponseStreamState(input_tools=omit, text_format=omit)
    for _, data in events:
        if data["type"] in ("error", "response.failed"):
            break
        state.handle_event(openai_construct(type_=ResponseStreamEvent, value=data))
    snapshot = state._completed_response or state._ResponseStreamState__current_snapshot  # type: ignore[attr-defined]
    if snapshot is None:
        return []
    return [(o.name, o.call_id, o.arguments) for o in snapshot.output if o.type == "function_call"]


@given(stream=responses_streams(), chunking=chunkings())
@PROFILE
def test_responses_match_the_sdk_accumulator(stream: Any, chunking: tuple[bool, list[int]]) -> None:
    events, _calls, errored = stream
    _, parsed = feed(_sse(events), "openai.responses", chunking)
    check_against(parsed, responses_reference(events), cut=errored)
    assert parsed.complete is not errored
    if errored:
        assert any(p.kind == "error_event" for p in parsed.problems)
        return
    whole = parse_response(json.dumps(events[-1][1]["response"]).encode(), "openai.responses")
    assert whole.calls == parsed.calls
    assert [p.kind for p in whole.problems] == [p.kind for p in parsed.problems]


# --- Anthropic --------------------------------------------------------------------------------


@st.composite
def anthropic_streams(draw: st.DrawFn) -> tuple[list[tuple[str | None, Any]], list[Spec], bool]:
    calls = draw(specs())
    order = draw(schedules(calls, draw(st.booleans())))
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "c",
               "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 1, "output_tokens": 1}}  # fmt: skip

    def ev(kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
        return kind, {"type": kind, **fields}

    events = [ev("message_start", message=message)]
    for c, spec in enumerate(calls):
        block = {"type": "tool_use", "id": spec.call_id, "name": spec.name, "input": {}}
        events.append(ev("content_block_start", index=c, content_block=block))
    for c, p in order:
        delta = {"type": "input_json_delta", "partial_json": calls[c].pieces[p]}
        events.append(ev("content_block_delta", index=c, delta=delta))
    events += [ev("content_block_stop", index=c) for c in range(len(calls))]
    events.append(ev("message_delta", delta={"stop_reason": "tool_use", "stop_sequence": None},
                     usage={"output_tokens": 9}))  # fmt: skip
    events.append(ev("message_stop"))
    error_at = draw(st.one_of(st.none(), st.integers(1, len(events) - 1)))
    if error_at is not None:
        err = {"type": "overloaded_error", "message": "Overloaded"}
        events = [*events[:error_at], ev("error", error=err)]
    return list(events), calls, error_at is not None


def anthropic_reference(
    events: list[tuple[str | None, Any]], calls: list[Spec]
) -> list[tuple[str, str | None, str]]:
    """Each started block's text; the SDK's accumulated input must be that text decoded
    (it raises on text that is not JSON: those deltas are kept from it)."""
    snapshot: Any = None
    bufs: dict[int, bytes] = {}
    texts: dict[int, str] = {}
    for _, data in events:
        if data["type"] == "error":
            break
        if data["type"] == "content_block_start":
            texts[data["index"]] = ""
        if data["type"] == "content_block_delta":
            texts[data["index"]] += data["delta"]["partial_json"]
            if calls[data["index"]].broken:
                continue
        event = anthropic_construct(type_=RawMessageStreamEvent, value=data)
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=bufs)
    for c, text in texts.items():
        if not calls[c].broken and text == calls[c].text:
            assert snapshot.content[c].input == json.loads(text)
    return [(calls[c].name, calls[c].call_id, text) for c, text in texts.items()]


@given(stream=anthropic_streams(), chunking=chunkings())
@PROFILE
def test_anthropic_matches_the_sdk_accumulator(
    stream: Any, chunking: tuple[bool, list[int]]
) -> None:
    events, calls, errored = stream
    _, parsed = feed(_sse(events), "anthropic.messages", chunking)
    check_against(parsed, anthropic_reference(events, calls), cut=errored)
    assert parsed.complete is not errored


# --- requests: every place a tool may be declared ---------------------------------------------

_tools = st.lists(
    st.tuples(_names, st.sampled_from(["function", "custom"])),
    min_size=1,
    max_size=6,
    unique_by=lambda t: t[0],
)


@given(tools=_tools, data=st.data())
@PROFILE
def test_responses_declarations_anywhere_are_declared(
    tools: list[tuple[str, str]], data: st.DataObject
) -> None:
    def tool(name: str, kind: str) -> dict[str, Any]:
        if kind == "function":
            return {"type": "function", "name": name, "parameters": {"type": "object"}}
        return {"type": "custom", "name": name}

    flat = {"model": "m", "input": "hi", "tools": [tool(*t) for t in tools]}
    top: list[dict[str, Any]] = []
    items: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]
    for name, kind in tools:
        place = data.draw(st.sampled_from(["top", "additional", "namespace", "search"]))
        if place == "top":
            top.append(tool(name, kind))
        elif place == "additional":
            items.append(
                {"type": "additional_tools", "role": "developer", "tools": [tool(name, kind)]}
            )
        elif place == "namespace":
            top.append(
                {"type": "namespace", "name": "ns", "description": "d", "tools": [tool(name, kind)]}
            )
        else:
            items.append({"type": "tool_search_output", "call_id": "ts", "execution": "client",
                          "status": "completed", "tools": [tool(name, kind)]})  # fmt: skip
    spread = parse_request({"model": "m", "input": items, "tools": top}, "openai.responses")
    assert spread.tools == parse_request(flat, "openai.responses").tools
    assert spread.problems == ()


@given(names=st.lists(_names, min_size=1, max_size=5, unique=True), snake=st.booleans())
@PROFILE
def test_google_tools_may_be_one_object(names: list[str], snake: bool) -> None:
    key = "function_declarations" if snake else "functionDeclarations"
    decls = [{"name": n, "parameters": {"type": "OBJECT"}} for n in names]
    contents = [{"role": "user", "parts": [{"text": "hi"}]}]
    one = parse_request({"contents": contents, "tools": {key: decls}}, "google.genai")
    listed = parse_request({"contents": contents, "tools": [{key: decls}]}, "google.genai")
    assert one == listed and set(one.tools) == set(names) and one.problems == ()
