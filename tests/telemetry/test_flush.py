"""``tooltap.flush()`` and ``uninstrument()`` end every open tool span exactly once.

Each open span (a wire call, a broken call, a call only the harness saw) ends as
``orphaned`` once: one export, one ``tooltap.tool_results{result=orphaned}`` point, no
"ended span" warning from the SDK, whatever the order of flush, uninstrument and
results racing from other threads.
"""

from __future__ import annotations

import logging
import threading

import pytest

import tooltap
from tests.telemetry.support import Recorder, attrs, turn
from tooltap import Problem, ToolCall
from tooltap._telemetry.execution import tool_execution


def call(call_id: str, index: int = 0) -> ToolCall:
    return ToolCall("lookup", {"key": call_id}, "openai", call_id, index, dialect="openai.chat")


def ended_span_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "ended span" in r.getMessage()]


@pytest.mark.parametrize("order", [("flush", "flush", "uninstrument"), ("uninstrument", "flush"),
                                   ("flush", "uninstrument", "uninstrument")])  # fmt: skip
def test_every_open_span_ends_once(
    rec: Recorder, caplog: pytest.LogCaptureFixture, order: tuple[str, ...]
) -> None:
    bad = Problem("invalid_json", 1, "bad", "Expecting value", "lookup", "{x")
    turn((call("a"),), problems=(bad,))
    with tool_execution(call("harness-only")):
        pass
    with caplog.at_level(logging.WARNING):
        for how in order:
            getattr(tooltap, how)()
    assert ended_span_warnings(caplog) == []
    spans = rec.tools()
    assert sorted(attrs(s)["gen_ai.tool.call.id"] for s in spans) == ["a", "bad", "harness-only"]
    assert len({s.context.span_id for s in spans}) == 3
    assert {attrs(s)["tooltap.result"] for s in spans} == {"orphaned"}
    assert rec.total("tooltap.tool_results", tooltap__result="orphaned") == 3
    assert rec.total("tooltap.tool_results") == 3


def test_results_racing_flush_end_each_span_once(
    rec: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    ids = [f"c{i}" for i in range(300)]
    turn(tuple(call(cid, i) for i, cid in enumerate(ids)))
    start = threading.Barrier(3)

    def answer(part: list[str]) -> None:
        start.wait()
        for cid in part:
            turn(results=(cid,))

    def flush() -> None:
        start.wait()
        tooltap.flush()

    threads = [threading.Thread(target=answer, args=(ids[::2],)),
               threading.Thread(target=answer, args=(ids[1::2],)),
               threading.Thread(target=flush)]  # fmt: skip
    with caplog.at_level(logging.WARNING):
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        tooltap.uninstrument()
    assert ended_span_warnings(caplog) == []
    spans = rec.tools()
    assert sorted(attrs(s)["gen_ai.tool.call.id"] for s in spans) == sorted(ids)
    ok = rec.total("tooltap.tool_results", tooltap__result="ok")
    orphaned = rec.total("tooltap.tool_results", tooltap__result="orphaned")
    assert ok + orphaned == len(ids)  # each id ended once: answered or orphaned, never both
    assert sum(1 for s in spans if attrs(s)["tooltap.result"] == "ok") == ok


def test_flush_leaves_nothing_open_for_the_next_instrumentation(recorder: Recorder) -> None:
    recorder.instrument()
    turn((call("a"),))
    tooltap.uninstrument()
    recorder.instrument()
    tooltap.flush()
    assert [attrs(s)["tooltap.result"] for s in recorder.tools()] == ["orphaned"]
