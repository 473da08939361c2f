"""Teardown: ``uninstrument()`` while a stream is being read settles everything in flight.

The body's first chunk completes one call (its tool span opens); the server holds the
rest until tooltap is uninstrumented, then sends the second call. After re-instrumenting
and ``flush()``, every span ever started has ended once, and nothing was recorded for
the part of the body read after uninstrumenting.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx2

import tooltap
from tests.reliability.support import Canned, Recorder, ReplayServer
from tests.reliability.wire import STREAMED


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return b"data: " + json.dumps({"id": "c1", "choices": [choice]}).encode() + b"\n\n"


def _call(index: int, args: str) -> dict[str, Any]:
    function = {"name": "lookup", "arguments": args}
    return {"index": index, "id": f"call_{index}", "type": "function", "function": function}


FIRST = _chunk({"tool_calls": [_call(0, '{"key":"a"}')]}) + _chunk({"tool_calls": [_call(1, "")]})
REST = (
    _chunk({"tool_calls": [{"index": 1, "function": {"arguments": '{"key":"b"}'}}]})
    + _chunk({}, "tool_calls")
    + b"data: [DONE]\n\n"
)


def test_uninstrument_mid_stream_ends_every_span(replay: ReplayServer, recorder: Recorder) -> None:
    resume = threading.Event()
    replay.canned = Canned(200, [("content-type", "text/event-stream")], [FIRST, REST], resume)
    recorder.instrument()
    got = []
    try:
        with httpx2.Client(timeout=10) as client:
            request = client.build_request(
                "POST", replay.url + "/v1/chat/completions", json=STREAMED
            )
            response = client.send(request, stream=True)
            try:
                chunks = response.iter_raw()
                got.append(next(chunks))
                assert [c.call_id for c in recorder.received()] == ["call_0"]
                tooltap.uninstrument()
                resume.set()
                got.extend(chunks)
            finally:
                response.close()
    finally:
        resume.set()
    assert b"".join(got) == FIRST + REST  # the app got its whole body
    recorder.instrument()
    tooltap.flush()
    assert recorder.ledger.anomalies() == {
        "started_twice": [],
        "ended_twice": [],
        "ended_unstarted": [],
    }
    assert recorder.ledger.open_spans() == []
    assert len(recorder.tools()) == 1 and len(recorder.inference()) == 1
    assert [c.call_id for c in recorder.received()] == ["call_0"]
