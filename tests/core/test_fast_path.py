"""The reducers' fast paths change speed, never results.

Every stream is parsed twice: by ``StreamParser`` as shipped, and by the same parser
with its fast path switched off (every event decoded by the full path). The calls
returned by each ``feed`` and the final ``Parsed`` must be equal, whatever the chunking,
the argument text (quotes, backslashes, control characters, non-ASCII, raw UTF-8) or a
corrupted byte. Hit counters make sure the fast path really ran where it should.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import examples
from tests.corpus import load_cases
from tooltap._core._json import loads, loads_str, unescape
from tooltap._core.stream import FAST_PATHS_ENV, fast_paths
from tooltap.core import Limits, StreamParser

Stream = Callable[..., bytes]


def _dumps(value: Any, ascii_only: bool) -> str:
    return json.dumps(value, ensure_ascii=ascii_only, separators=(",", ":"))


def chat_stream(calls: list[tuple[str, list[str]]], ascii_only: bool, late: bool = False) -> bytes:
    """OpenAI Chat chunks as OpenAI sends them (compact, ``obfuscation`` padding).

    ``late``: one more argument delta after the finish chunk (a provider bug).
    """
    head = (
        '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o",'
        '"service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":'
    )

    def chunk(delta: dict[str, Any], finish: str | None = None, pad: str = "xY1") -> str:
        reason = "null" if finish is None else f'"{finish}"'
        tail = f',"logprobs":null,"finish_reason":{reason}}}],"obfuscation":"{pad}"}}'
        return f"data: {head}{_dumps(delta, ascii_only)}{tail}\n\n"

    out = [chunk({"role": "assistant", "content": None})]
    for index, (name, fragments) in enumerate(calls):
        start = {"index": index, "id": f"call_{index}", "type": "function"}
        out.append(chunk({"tool_calls": [{**start, "function": {"name": name, "arguments": ""}}]}))
        for n, fragment in enumerate(fragments):
            delta = {"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}
            out.append(chunk(delta, pad="a" * (n % 5)))
    out.append(chunk({}, "tool_calls"))
    if late:
        out.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}))
    return ("".join(out) + "data: [DONE]\n\n").encode()


def responses_stream(
    calls: list[tuple[str, list[str]]], ascii_only: bool, late: bool = False
) -> bytes:
    """OpenAI Responses events in both key orders OpenAI uses for argument deltas.

    ``late``: each call gets one more delta after its item is done.
    """
    out: list[str] = []

    def emit(kind: str, text: str) -> None:
        out.append(f"event: {kind}\ndata: {text}\n\n")

    emit("response.created", '{"type":"response.created","response":{"id":"resp_1"}}')
    for index, (name, fragments) in enumerate(calls):
        item = {"type": "function_call", "id": f"fc_{index}", "call_id": f"call_{index}"}
        item |= {"name": name, "arguments": ""}
        added = {"type": "response.output_item.added", "output_index": index, "item": item}
        emit("response.output_item.added", _dumps(added, ascii_only))
        for n, fragment in enumerate(fragments):
            quoted = _dumps(fragment, ascii_only)
            if n % 2:
                text = (
                    f'{{"type":"response.function_call_arguments.delta","sequence_number":{n},'
                    f'"item_id":"fc_{index}","output_index":{index},"delta":{quoted},'
                    f'"obfuscation":"Qz{n}"}}'
                )
            else:
                text = (
                    f'{{"type":"response.function_call_arguments.delta","delta":{quoted},'
                    f'"item_id":"fc_{index}","obfuscation":"pad","output_index":{index},'
                    f'"sequence_number":{n}}}'
                )
            emit("response.function_call_arguments.delta", text)
        whole = "".join(fragments)
        done = {"type": "response.function_call_arguments.done", "item_id": f"fc_{index}"}
        done |= {"output_index": index, "arguments": whole}
        emit("response.function_call_arguments.done", _dumps(done, ascii_only))
        item_done = {"type": "response.output_item.done", "output_index": index}
        item_done["item"] = {**item, "arguments": whole, "status": "completed"}
        emit("response.output_item.done", _dumps(item_done, ascii_only))
        if late:
            emit(
                "response.function_call_arguments.delta",
                f'{{"type":"response.function_call_arguments.delta","item_id":"fc_{index}",'
                f'"output_index":{index},"delta":"}}"}}',
            )
    final = '{"type":"response.completed","response":{"id":"resp_1","status":"completed"}}'
    emit("response.completed", final)
    return "".join(out).encode()


def anthropic_stream(
    calls: list[tuple[str, list[str]]], ascii_only: bool, late: bool = False
) -> bytes:
    """Anthropic Messages events, with the whitespace padding Anthropic adds.

    ``late``: one more delta for the first tool block after it stopped.
    """
    out: list[str] = []

    def emit(kind: str, value: dict[str, Any], pad: int = 0) -> None:
        text = _dumps(value, ascii_only)
        if pad:
            text = text[:-1] + " " * pad + "}"
        out.append(f"event: {kind}\ndata: {text}\n\n")

    emit("message_start", {"type": "message_start", "message": {"id": "msg_1", "model": "c"}})
    emit("content_block_start", {"type": "content_block_start", "index": 0})
    text_block = {"type": "text_delta", "text": "Calling tools."}
    emit("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": text_block})
    emit("content_block_stop", {"type": "content_block_stop", "index": 0})
    for index, (name, fragments) in enumerate(calls, start=1):
        block = {"type": "tool_use", "id": f"toolu_{index}", "name": name, "input": {}}
        start = {"type": "content_block_start", "index": index, "content_block": block}
        emit("content_block_start", start)
        emit("ping", {"type": "ping"})
        for n, fragment in enumerate(["", *fragments]):
            delta = {"type": "input_json_delta", "partial_json": fragment}
            event = {"type": "content_block_delta", "index": index, "delta": delta}
            emit("content_block_delta", event, n % 4)
        emit("content_block_stop", {"type": "content_block_stop", "index": index})
    if late:
        delta = {"type": "input_json_delta", "partial_json": "}"}
        emit("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": delta})
    emit("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}})
    emit("message_stop", {"type": "message_stop"})
    return "".join(out).encode()


STREAMS: dict[str, Stream] = {
    "openai.chat": chat_stream,
    "openai.responses": responses_stream,
    "anthropic.messages": anthropic_stream,
}


class Counted:
    """A parser whose fast path (the reducer's ``fast``) counts the events it took."""

    def __init__(self, dialect: str, limits: Limits | None = None) -> None:
        self.parser = StreamParser(dialect, limits=limits)
        self.hits = 0
        fast = self.parser._fast
        assert fast is not None

        def counting(block: bytes) -> bool:
            handled = fast(block)
            self.hits += handled
            return handled

        self.parser._fast = counting


@contextmanager
def fast_paths_off() -> Iterator[None]:
    """``TOOLTAP_FAST_PATHS=0`` while the block runs."""
    before = os.environ.get(FAST_PATHS_ENV)
    os.environ[FAST_PATHS_ENV] = "0"
    try:
        yield
    finally:
        if before is None:
            del os.environ[FAST_PATHS_ENV]
        else:
            os.environ[FAST_PATHS_ENV] = before


def slow(dialect: str, limits: Limits | None = None) -> StreamParser:
    """A parser made with ``TOOLTAP_FAST_PATHS=0``: every event decoded by the full path."""
    with fast_paths_off():
        parser = StreamParser(dialect, limits=limits)
    assert parser._fast is None
    return parser


@pytest.mark.parametrize("dialect", sorted(STREAMS))
def test_the_switch_turns_the_fast_paths_off_and_on_again(dialect: str) -> None:
    assert fast_paths() and StreamParser(dialect)._fast is not None
    with fast_paths_off():
        assert not fast_paths()
        off = StreamParser(dialect)
    on = StreamParser(dialect)
    assert off._fast is None and on._fast is not None
    body = STREAMS[dialect]([("write", fragments('{"path": "a.md"}', 3))], True)
    assert run(on, by_event(body)) == run(off, by_event(body))


def run(parser: StreamParser, chunks: list[bytes]) -> tuple[list[Any], Any]:
    return [parser.feed(chunk) for chunk in chunks], parser.close()


def compare(dialect: str, chunks: list[bytes], limits: Limits | None = None) -> int:
    """Parse with and without the fast path; assert equal; return the fast path's hits."""
    counted = Counted(dialect, limits)
    fast = run(counted.parser, chunks)
    reference = run(slow(dialect, limits), chunks)
    assert fast == reference
    return counted.hits


def by_event(body: bytes) -> list[bytes]:
    """One chunk per event, as streaming servers flush them."""
    return [block + b"\n\n" for block in body.split(b"\n\n") if block]


def cut(body: bytes, points: list[int]) -> list[bytes]:
    marks = sorted({p for p in points if 0 < p < len(body)})
    return [body[a:b] for a, b in zip([0, *marks], [*marks, len(body)], strict=True)]


def fragments(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


ARGS = {"path": 'C:\\notes\\"a".md', "content": "line 1\nline\t2 é 東京 🌧 \u0001", "n": [1, 2.5]}


@pytest.mark.parametrize("dialect", sorted(STREAMS))
@pytest.mark.parametrize("ascii_only", [True, False], ids=["escaped", "utf8"])
def test_fast_path_handles_the_deltas_and_agrees(dialect: str, ascii_only: bool) -> None:
    text = json.dumps(ARGS, ensure_ascii=False)
    calls = [("write", fragments(text, 4)), ("read", fragments('{"k": "v"}', 3))]
    body = STREAMS[dialect](calls, ascii_only)
    hits = compare(dialect, by_event(body))
    deltas = sum(len(f) for _, f in calls)
    assert hits >= deltas  # every argument delta (and Anthropic's text/empty deltas) was fast
    parsed = StreamParser(dialect)
    for chunk in by_event(body):
        parsed.feed(chunk)
    assert [c.args for c in parsed.close().calls] == [ARGS, {"k": "v"}]


@pytest.mark.parametrize("case", [c for c in load_cases() if c.stream], ids=lambda c: c.name)
def test_corpus_streams_agree(case: Any) -> None:
    chunks = by_event(case.body)
    if case.dialect in STREAMS:
        compare(case.dialect, chunks)
        compare(case.dialect, cut(case.body, list(range(7, len(case.body), 61))))
    else:
        parser = StreamParser(case.dialect)
        assert parser._fast is None  # Google sends whole calls: no fast path


def test_corpus_fast_path_hits_real_provider_shapes() -> None:
    hits: dict[str, int] = dict.fromkeys(STREAMS, 0)
    for case in load_cases():
        if case.stream and case.dialect in STREAMS:
            hits[case.dialect] += compare(case.dialect, by_event(case.body))
    assert all(count > 20 for count in hits.values()), hits


#: Private-use characters that ``corrupt`` turns into raw bytes inside the encoded events.
RAW_BYTES = {
    "\ue000": b'"',
    "\ue001": b"\\",
    "\ue002": b"\x00",
    "\ue003": b"\xff",
    "\ue004": b"\t",
    "\ue005": b"\\u12",
    "\ue006": b"\\x",
    "\ue007": b"\xc3",
}
JSON_TEXT = st.text(
    st.characters(codec="utf-8", exclude_characters="".join(RAW_BYTES))
    | st.sampled_from(['"', "\\", "\n", "\x00", "\u2028", "🌧"]),
    max_size=60,
)
CORRUPT_TEXT = st.text(st.sampled_from(["a", '"', "\\", *RAW_BYTES]), max_size=12)


def corrupt(body: bytes) -> bytes:
    """Put raw bytes where the private-use markers were (invalid JSON, bad escapes...)."""
    for marker, raw in RAW_BYTES.items():
        body = body.replace(marker.encode(), raw)
    return body


MUTATION = st.tuples(
    st.integers(min_value=0),
    st.sampled_from([b'"', b"\\", b"\x00", b"\xff", b"}", b" ", b"a", b"\n", b"\r", b"u"]),
    st.sampled_from(["insert", "replace", "delete"]),
)


def mutate(body: bytes, spot: int, byte: bytes, how: str) -> bytes:
    at = spot % (len(body) + 1)
    if how == "insert":
        return body[:at] + byte + body[at:]
    if how == "replace":
        return body[:at] + byte + body[at + 1 :]
    return body[:at] + body[at + 1 :]


@examples(300)
@given(
    dialect=st.sampled_from(sorted(STREAMS)),
    texts=st.lists(JSON_TEXT, min_size=1, max_size=3),
    size=st.integers(min_value=1, max_value=7),
    ascii_only=st.booleans(),
    mutations=st.lists(MUTATION, max_size=2),
    points=st.lists(st.integers(min_value=0, max_value=4000), max_size=6),
    limit=st.sampled_from([4_194_304, 40, 12, 3]),
    late=st.booleans(),
)
def test_any_stream_agrees(
    dialect: str,
    texts: list[str],
    size: int,
    ascii_only: bool,
    mutations: list[tuple[int, bytes, str]],
    points: list[int],
    limit: int,
    late: bool,
) -> None:
    calls = [
        (f"tool_{i}", fragments(json.dumps({"v": t}, ensure_ascii=False), size))
        for i, t in enumerate(texts)
    ]
    body = STREAMS[dialect](calls, ascii_only, late)
    for mutation in mutations:
        body = mutate(body, *mutation)
    limits = Limits(max_argument_bytes=limit)
    compare(dialect, by_event(body), limits)
    compare(dialect, cut(body, points), limits)


@examples(300)
@given(
    dialect=st.sampled_from(sorted(STREAMS)),
    texts=st.lists(CORRUPT_TEXT, min_size=1, max_size=6),
    limit=st.sampled_from([4_194_304, 5]),
)
def test_corrupt_fragments_agree(dialect: str, texts: list[str], limit: int) -> None:
    """Raw quotes, backslashes, bad escapes, NULs and bad UTF-8 inside argument deltas."""
    body = corrupt(STREAMS[dialect]([("t", texts)], False))
    compare(dialect, by_event(body), Limits(max_argument_bytes=limit))


def test_usage_in_the_repeated_head_keeps_last_value_semantics() -> None:
    """A head carrying usage is never learnt: a later chunk's usage must win, as decoded."""
    chunks = by_event(chat_stream([("t", ['{"a"', ": 1}"])], True))
    for n, usage in enumerate([1, 1, 2, 1]):  # role, call start, delta, delta
        field = b'"usage":{"prompt_tokens":%d},"choices"' % usage
        chunks[n] = chunks[n].replace(b'"choices"', field)
    compare("openai.chat", chunks)
    parser = StreamParser("openai.chat")
    for chunk in chunks:
        parser.feed(chunk)
    usage = parser.close().usage
    assert usage is not None and usage.input_tokens == 1


@pytest.mark.parametrize("dialect", sorted(STREAMS))
@pytest.mark.parametrize("ending", [b"}}}", b"} x}", b"}", b"}]", b'}},"k":1}', b"} }\t"])
def test_a_delta_with_another_ending_takes_the_full_path(dialect: str, ending: bytes) -> None:
    """Whatever follows the fragment's closing quote must be the exact tail, else decode."""
    chunks = by_event(STREAMS[dialect]([("t", ['{"a"', ': "b"}'])], True))
    for n, chunk in enumerate(chunks):
        if b'b\\"}' in chunk:  # the second fragment's delta: change its ending
            cut = chunk.index(b'b\\"}') + 3
            chunks[n] = chunk[:cut] + ending + b"\n\n"
    compare(dialect, chunks)


def test_usage_after_an_arguments_delta_is_kept() -> None:
    """Fields after the fixed tail (here a usage object) take the chunk off the fast path."""
    chunks = by_event(chat_stream([("t", ['{"a"', ": 1}"])], True))
    chunks[3] = chunks[3].replace(b',"obfuscation"', b',"usage":{"prompt_tokens":7},"obfuscation"')
    compare("openai.chat", chunks)
    parser = StreamParser("openai.chat")
    for chunk in chunks:
        parser.feed(chunk)
    usage = parser.close().usage
    assert usage is not None and usage.input_tokens == 7


def test_a_nested_choices_key_is_not_learnt() -> None:
    """Bytes before a ``choices`` key one level down are not a head: a chunk repeating
    them cannot be valid, and must be reported as not JSON, as decoding does."""
    chunks = by_event(chat_stream([("t", ['{"a"', ": 1}"])], True))
    nested = b'"x":{"n":1,"choices":[1]},"choices"'
    chunks[0] = chunks[0].replace(b'"choices"', nested)
    head = chunks[0][: chunks[0].index(b'"choices":[1]')]
    chunks[2] = head + chunks[2][chunks[2].index(b'"choices"') :]
    compare("openai.chat", chunks)
    parser = StreamParser("openai.chat")
    for chunk in chunks:
        parser.feed(chunk)
    assert "unexpected_shape" in [p.kind for p in parser.close().problems]


def test_oversized_events_are_dropped_not_fast() -> None:
    calls = [("write", ["x" * 300])]
    body = anthropic_stream(calls, True)
    limits = Limits(max_event_bytes=200)
    assert compare("anthropic.messages", by_event(body), limits) >= 1
    parser = StreamParser("anthropic.messages", limits=limits)
    for chunk in by_event(body):
        parser.feed(chunk)
    assert "oversized_event" in [p.kind for p in parser.close().problems]


def test_split_surrogate_pair_is_rejoined() -> None:
    """A pair cut between two fragments (UTF-16 servers) decodes to the one character."""
    for dialect, stream in STREAMS.items():
        pieces = ['{"v": "\ud83d', '\ude00"}']
        raw = stream([("t", pieces)], True)
        parser = StreamParser(dialect)
        for chunk in by_event(raw):
            parser.feed(chunk)
        assert parser.close().calls[0].args == {"v": "😀"}, dialect


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def _json_result(fn: Callable[[bytes], Any], data: bytes) -> Any:
    try:
        return ("ok", repr(fn(data)))
    except (ValueError, RecursionError) as exc:
        return ("error", type(exc).__name__, str(exc))


@examples(200)
@given(value=JSON_VALUES, ascii_only=st.booleans())
def test_loads_is_json_loads(value: Any, ascii_only: bool) -> None:
    data = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert _json_result(loads, data) == _json_result(json.loads, data)


@pytest.mark.parametrize(
    "data",
    [
        b'"\\ud83d"',  # lone surrogate escape: jiter refuses, json accepts
        b"\xef\xbb\xbf{}",  # BOM
        '{"a": 1}'.encode("utf-16"),
        b"[" * 500 + b"]" * 500,
        b"{",
        b"NaN",
        b'{"a":1,"a":2}',
        b"",
    ],
)
def test_loads_matches_json_on_odd_input(data: bytes) -> None:
    assert _json_result(loads, data) == _json_result(json.loads, data)


def test_loads_decodes_what_json_loads_cannot_recurse_into() -> None:
    deep = b'{"a":' + b"[" * 995 + b"]" * 995 + b"}"  # json.loads takes it at a stack's top
    assert _json_result(json.loads, deep)[:2] == ("error", "RecursionError")
    assert list(loads(deep)) == ["a"]
    with pytest.raises(json.JSONDecodeError):  # unclosed, and too deep: said so
        loads(b"[" * 100_000)


def test_unescape_joins_bodies() -> None:
    assert unescape(bytearray(b'a\\"b') + b"\\ud83d" + b"\\ude00\\n") == 'a"b😀\n'


@examples(200)
@given(
    text=st.text(max_size=40)
    | st.sampled_from(["\ufeff{}", '"\\ud800"', "[" * 300, "{", "01", "\ud800", '{"a":1,"a":2}'])
)
def test_loads_str_is_json_loads(text: str) -> None:
    assert _json_result(lambda _: loads_str(text), b"") == _json_result(
        lambda _: json.loads(text), b""
    )


@pytest.mark.parametrize("dialect", sorted(STREAMS))
def test_every_way_of_reading_takes_the_deltas_fast_and_agrees(dialect: str) -> None:
    """One event per read, the whole rest of the stream in one read, reads that cut
    events: the fast path takes the argument deltas event by event in each, and the parse
    is the full path's."""
    text = json.dumps(ARGS, ensure_ascii=False)
    calls = [("write", fragments(text, 4)), ("read", fragments('{"k": "v"}', 3))]
    body = STREAMS[dialect](calls, False)
    events = by_event(body)
    deltas = sum(len(f) for _, f in calls)
    ways = {
        "by event": events,
        "coalesced": [events[0], b"".join(events[1:])],
        "cut": cut(body, list(range(5, len(body), 37))),
        "reads of 300 bytes": cut(body, list(range(300, len(body), 300))),
        "reads of 1000 bytes": cut(body, list(range(1000, len(body), 1000))),
    }
    hits = {way: compare(dialect, chunks) for way, chunks in ways.items()}
    assert hits["by event"] >= deltas
    assert hits["coalesced"] >= deltas
    # reads that cut events: the decoder finishes the cut event, then the fast path goes on
    assert hits["reads of 1000 bytes"] >= deltas // 3


@pytest.mark.parametrize("dialect", sorted(STREAMS))
def test_each_dialects_deltas_skip_the_decoder_whatever_their_random_padding(
    dialect: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenAI's argument deltas differ from event to event in their ``obfuscation`` value
    (and Responses' in ``sequence_number`` and key order): none of them reaches the
    reducer's full path, but (Chat) those before the stream's head is learnt."""
    text = json.dumps(ARGS, ensure_ascii=False)
    calls = [("write", fragments(text, 4)), ("read", fragments('{"k": "v", "n": 12}', 3))]
    events = by_event(STREAMS[dialect](calls, False))
    parser = StreamParser(dialect)
    decoded: list[bytes] = []
    reducer = type(parser._reducer)
    event = reducer.event

    def seen(self: Any, ev: Any) -> Any:
        decoded.append(ev.data)
        return event(self, ev)

    monkeypatch.setattr(reducer, "event", seen)
    for chunk in events:
        parser.feed(chunk)
    assert [c.args for c in parser.close().calls] == [ARGS, {"k": "v", "n": 12}]
    marker = {
        "openai.chat": b'"arguments":"',
        "anthropic.messages": b"input_json_delta",
        "openai.responses": b"arguments.delta",
    }
    deltas = [e for e in events if marker[dialect] in e and b"delta" in e]
    deltas = [e for e in deltas if b'"arguments":""' not in e and b'"partial_json":""' not in e]
    reached = [e for e in deltas if any(data and data in e for data in decoded)]
    assert len(deltas) > 10
    assert len(reached) <= len(calls)


def test_interleaved_responses_calls_agree() -> None:
    """Deltas of two open Responses items, alternating: each is found by its item id, and
    the calls come out as the full path gives them."""
    text_a, text_b = json.dumps({"a": "x" * 40}), json.dumps({"b": list(range(12))})
    body = responses_stream([("a", fragments(text_a, 3)), ("b", fragments(text_b, 3))], False)
    events = by_event(body)
    deltas = [e for e in events if b"arguments.delta" in e]
    others = [e for e in events if e not in deltas]
    adds = [e for e in others if b"output_item.added" in e]
    rest = [e for e in others if e not in adds]
    of = {i: [e for e in deltas if b'"item_id":"fc_%d"' % i in e] for i in (0, 1)}
    mixed = [x for pair in zip(of[0], of[1], strict=False) for x in pair]
    mixed += of[0][len(of[1]) :] + of[1][len(of[0]) :]
    chunks = others[:1] + adds + mixed + [e for e in rest if e is not others[0]]
    assert compare("openai.responses", chunks) >= len(mixed)
    parser = StreamParser("openai.responses")
    for chunk in chunks:
        parser.feed(chunk)
    assert [c.args for c in parser.close().calls] == [json.loads(text_a), json.loads(text_b)]


def _misshapen(event: bytes) -> list[bytes]:
    """``event`` (one whole event) in shapes the fast path must decline: CRLF line ends, a
    CR inside the data line, no blank line, blank-line padding, two events at once."""
    inside = event.rfind(b"data: ") + 9
    return [
        event[:-2] + b"\r\n\r\n",
        event.replace(b"\n", b"\r\n"),
        event[:inside] + b"\r" + event[inside:],
        event[:-1],
        event + b"\n",
        event + event,
    ]


@pytest.mark.parametrize("dialect", sorted(STREAMS))
def test_fast_path_declines_chunks_that_are_not_one_plain_event(dialect: str) -> None:
    calls = [("write", fragments(json.dumps(ARGS), 4)), ("read", fragments('{"k": "v"}', 3))]
    events = by_event(STREAMS[dialect](calls, True))
    counted = Counted(dialect)
    fast = counted.parser._reducer.fast  # type: ignore[attr-defined]
    for event in events:
        for shape in _misshapen(event):
            assert fast(shape) is False, shape
        counted.parser.feed(event)
    assert counted.hits >= sum(len(f) for _, f in calls)  # the plain events were fast
    assert counted.parser.close() == run(slow(dialect), events)[1]


@pytest.mark.parametrize("dialect", sorted(STREAMS))
@pytest.mark.parametrize("limit", [0, 7, 19, 33, 47, 1000])
def test_the_argument_limit_crossed_among_consecutive_deltas_agrees(
    dialect: str, limit: int
) -> None:
    """Argument deltas with comment events among them: the argument limit, wherever it falls
    among the deltas, decides the same on the fast path as on the full path."""
    text = json.dumps({"path": "/tmp/é\\x", "body": 'say "hi"\n' * 3})
    calls = [("write", fragments(text, 3)), ("read", fragments('{"k": "v"}', 2))]
    body = STREAMS[dialect](calls, False)
    chunks = by_event(body)
    for n in range(len(chunks) - 5, 0, -5):
        chunks.insert(n, b": keep-alive\n\n")
    assert compare(dialect, chunks, Limits(max_argument_bytes=limit)) >= 1
    compare(dialect, cut(body, list(range(0, len(body), 97))), Limits(max_argument_bytes=limit))
