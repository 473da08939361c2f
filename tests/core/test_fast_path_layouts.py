"""The fast paths hold for any layout a server may give an event, with the same results.

The streams of ``test_fast_path`` are laid out again as other servers may send them:
keys in another order (at every depth), other spacing, ``event:`` lines or none, CRLF
line ends. Parsed with and without the fast paths, the results must be equal, and the
argument deltas must take the fast path once the stream's first one (of each Chat tool
call index) taught it the layout.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import examples
from tests.core.test_fast_path import (
    JSON_TEXT,
    STREAMS,
    by_event,
    compare,
    cut,
    fragments,
)
from tooltap.core import Limits

#: How a server may space its JSON: compact, Python's default, generous.
SEPARATORS = [(",", ":"), (", ", ": "), (" , ", " :  ")]
#: The dialects whose argument deltas learn their layout.
LEARNING = ("openai.chat", "openai.responses", "anthropic.messages")


def _reorder(value: Any, turn: int) -> Any:
    """``value`` with the keys of every object rotated by ``turn`` (reversed when odd)."""
    if isinstance(value, list):
        return [_reorder(v, turn) for v in value]
    if not isinstance(value, dict):
        return value
    items = [(k, _reorder(v, turn)) for k, v in value.items()]
    if turn % 2:
        items.reverse()
    shift = turn % len(items) if items else 0
    return dict(items[shift:] + items[:shift])


def relayout(
    body: bytes, turn: int, separators: tuple[str, str], events: bool, crlf: bool
) -> bytes:
    """Each event of ``body`` re-encoded in another layout (the same values)."""
    out: list[str] = []
    for block in body.decode().split("\n\n"):
        if not block:
            continue
        name, data = None, ""
        for line in block.split("\n"):
            field, _, value = line.partition(": ")
            if field == "event":
                name = value
            elif field == "data":
                data = value
        if data.startswith("{"):
            data = json.dumps(_reorder(json.loads(data), turn), separators=separators)
        lines = ([f"event: {name}"] if events and name else []) + [f"data: {data}"]
        out.append("\n".join(lines) + "\n\n")
    text = "".join(out)
    return (text.replace("\n", "\r\n") if crlf else text).encode()


@pytest.mark.parametrize("dialect", LEARNING)
@pytest.mark.parametrize("turn", [1, 2, 3])
@pytest.mark.parametrize("separators", SEPARATORS, ids=["compact", "default", "spaced"])
@pytest.mark.parametrize("events", [True, False], ids=["events", "data-only"])
@pytest.mark.parametrize("crlf", [False, True], ids=["lf", "crlf"])
def test_deltas_in_any_layout_take_the_fast_path(
    dialect: str, turn: int, separators: tuple[str, str], events: bool, crlf: bool
) -> None:
    text = json.dumps({"path": 'C:\\a "b".md', "text": "é 東京 🌧\n"}, ensure_ascii=False)
    calls = [("write", fragments(text, 4)), ("read", fragments('{"k": "v"}', 3))]
    body = relayout(STREAMS[dialect](calls, False), turn, separators, events, crlf)
    end = b"\r\n\r\n" if crlf else b"\n\n"
    hits = compare(dialect, [b + end for b in body.split(end) if b])
    deltas = sum(len(f) for _, f in calls)
    # All but the first of each layout, which taught it: Responses streams have two key
    # orders; Chat learns one layout per tool call index.
    layouts = {"openai.responses": 2, "openai.chat": len(calls)}.get(dialect, 1)
    assert hits >= deltas - layouts


def test_the_responses_layout_with_sequence_number_last_is_fast() -> None:
    """``type, item_id, output_index, delta, sequence_number``: other Responses servers."""
    events = ['{"type":"response.created","response":{"id":"r"}}']
    item = '{"type":"function_call","id":"fc_1","call_id":"c1","name":"f","arguments":""}'
    events.append(f'{{"type":"response.output_item.added","output_index":0,"item":{item}}}')
    pieces = fragments('{"city": "Oslo", "days": 3}', 2)
    events += [
        f'{{"type":"response.function_call_arguments.delta","item_id":"fc_1",'
        f'"output_index":0,"delta":{json.dumps(p)},"sequence_number":{n + 2}}}'
        for n, p in enumerate(pieces)
    ]
    events.append('{"type":"response.completed","response":{"id":"r","status":"completed"}}')
    body = "".join(f"data: {e}\n\n" for e in events).encode()
    assert compare("openai.responses", by_event(body)) == len(pieces) - 1


@examples(200)
@given(
    dialect=st.sampled_from(sorted(STREAMS)),
    texts=st.lists(JSON_TEXT, min_size=1, max_size=3),
    size=st.integers(min_value=1, max_value=7),
    turn=st.integers(min_value=0, max_value=5),
    separators=st.sampled_from(SEPARATORS),
    events=st.booleans(),
    crlf=st.booleans(),
    points=st.lists(st.integers(min_value=0, max_value=4000), max_size=6),
    limit=st.sampled_from([4_194_304, 12]),
    late=st.booleans(),
)
def test_any_layout_agrees(
    dialect: str,
    texts: list[str],
    size: int,
    turn: int,
    separators: tuple[str, str],
    events: bool,
    crlf: bool,
    points: list[int],
    limit: int,
    late: bool,
) -> None:
    calls = [
        (f"tool_{i}", fragments(json.dumps({"v": t}, ensure_ascii=False), size))
        for i, t in enumerate(texts)
    ]
    body = relayout(STREAMS[dialect](calls, False, late), turn, separators, events, crlf)
    limits = Limits(max_argument_bytes=limit)
    end = b"\r\n\r\n" if crlf else b"\n\n"
    compare(dialect, [b + end for b in body.split(end) if b], limits)
    compare(dialect, cut(body, points), limits)
