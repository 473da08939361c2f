"""Retries of side effects: a lost response never makes a tool with side effects
run twice through ``tooltap.harness.ToolRegistry``, and the repeat shows in telemetry.

The agent loop is the runner suite's (``tests/runner/loops.py``: a real SDK client, the
simulator, ``ToolRegistry`` with a SQLite ledger), one per dialect. The tool records a
measurement (side effects, idempotency key on its arguments).

* The response to the request carrying the tool's result is lost (the simulator resets
  the connection before answering). A naive harness retries the whole step: it runs the
  same calls again and appends their results a second time. The ledger answers from the
  first run (``replayed``, nothing executed); the re-sent request carries each result
  twice, which tooltap counts as ``tooltap.tool_results{tooltap.result="duplicate"}`` with
  a ``tooltap.tool_result.duplicate`` event on that request's span.
* The harness re-sends the same turn instead: the model asks again, under a new call id
  with the same arguments. The idempotency key finds the first run; the new call's
  ``execute_tool`` span gets the ``tooltap.tool.replayed`` event, and the conversation
  ends normally on the stored result.
* Google calls without ids (and a tool without an idempotency key): the request is sent
  again after its answer was lost; the calls' place in the conversation (turn index and
  position in the turn) finds the first run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from google.genai import errors as genai_errors

import tooltap
from tests.reliability.support import Recorder, attrs
from tests.runner.loops import LOOPS
from tooltap.harness import SQLiteLedger, ToolRegistry
from tooltap.simulator import Fault, Simulator

SAVE = ("save_measurement", {"key": "weight", "value": 70})
#: What each SDK raises when the connection is reset before the response.
LOST = (openai.APIConnectionError, anthropic.APIConnectionError, httpx2.TransportError)
#: What each SDK raises for a 400 (the simulator refuses duplicate results, like providers).
REFUSED = (openai.BadRequestError, anthropic.BadRequestError, genai_errors.ClientError)


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[SQLiteLedger]:
    with SQLiteLedger(tmp_path / "ledger.db") as db:
        yield db


def _registry(saved: list[dict[str, Any]], ledger: SQLiteLedger) -> ToolRegistry:
    registry = ToolRegistry(ledger=ledger)

    @registry.tool(side_effects=True, idempotency_key=lambda a: f"{a['key']}={a['value']}")
    def save_measurement(key: str, value: float) -> dict[str, Any]:
        """Store one measurement of the user."""
        saved.append({"key": key, "value": value})
        return {"saved": key, "count": len(saved)}

    return registry


@pytest.mark.parametrize("dialect", list(LOOPS))
def test_step_retried_after_a_lost_response(
    dialect: str, rec: Recorder, ledger: SQLiteLedger
) -> None:
    saved: list[dict[str, Any]] = []
    with Simulator(calls=[SAVE]) as sim:
        loop = LOOPS[dialect](sim, _registry(saved, ledger))
        first = loop.step()  # the call runs; its result goes into the history
        assert first.result is not None and first.result.outcomes[0].status == "ok"
        sim.inject(Fault("reset"), dialect=dialect)  # the next response is lost
        with pytest.raises(LOST):
            loop.request()
        again = loop.registry.run_sync(first.parsed)  # the naive harness redoes the step
        loop.history += again.messages
        with pytest.raises(REFUSED):  # a provider refuses duplicate results
            loop.request()
    tooltap.flush()
    assert saved == [{"key": "weight", "value": 70}]
    assert [o.status for o in again.outcomes] == ["replayed"]
    assert rec.total("tooltap.tool_results", tooltap__result="duplicate") == 1
    assert rec.total("tooltap.tool_results", tooltap__result="ok") == 1
    duplicates = [
        e for s in rec.inference() for e in s.events if e.name == "tooltap.tool_result.duplicate"
    ]
    assert len(duplicates) == 1
    (tool,) = rec.tools()
    assert attrs(tool)["tooltap.tool.side_effects"] is True
    assert attrs(tool)["tooltap.result"] == "ok"


@pytest.mark.parametrize("dialect", list(LOOPS))
def test_turn_resent_after_a_lost_response(
    dialect: str, rec: Recorder, ledger: SQLiteLedger
) -> None:
    saved: list[dict[str, Any]] = []
    with Simulator(calls=[SAVE]) as sim:
        loop = LOOPS[dialect](sim, _registry(saved, ledger))
        start = list(loop.history)
        first = loop.step()
        loop.history = start  # the answer was lost: the harness asks the same turn again
        conversation = loop.converse()
    tooltap.flush()
    assert saved == [{"key": "weight", "value": 70}]
    (retried,) = conversation.results
    (outcome,) = retried.outcomes
    assert outcome.status == "replayed"
    assert first.parsed.calls[0].call_id != outcome.call_id  # a new call id, same effect
    assert conversation.final_text == 'Tool results: {"saved": "weight", "count": 1}.'
    spans = {attrs(s).get("gen_ai.tool.call.id"): s for s in rec.tools()}
    replayed = spans[outcome.call_id]
    assert [e.name for e in replayed.events].count("tooltap.tool.replayed") == 1
    assert attrs(replayed)["tooltap.tool.replayed"] is True
    assert "tooltap.tool.replayed" not in [
        e.name for e in spans[first.parsed.calls[0].call_id].events
    ]


def test_google_calls_without_ids_survive_a_retried_request(ledger: SQLiteLedger) -> None:
    saved: list[dict[str, Any]] = []
    registry = ToolRegistry(ledger=ledger)

    @registry.tool(side_effects=True)  # no idempotency key: only the call's place names it
    def save_measurement(key: str, value: float) -> dict[str, Any]:
        """Store one measurement of the user."""
        saved.append({"key": key, "value": value})
        return {"saved": key, "count": len(saved)}

    with Simulator(calls=[SAVE]) as sim:
        loop = LOOPS["google.genai"](sim, registry)
        start = list(loop.history)
        sim.inject(Fault("no_ids"), dialect="google.genai")
        first = loop.step()
        assert first.parsed.calls[0].call_id is None
        assert first.result is not None and first.result.outcomes[0].status == "ok"
        loop.history = start  # the answer was lost: the harness sends the request again
        sim.inject(Fault("no_ids"), dialect="google.genai")
        retried = loop.step()
        conversation = loop.converse()
    assert retried.parsed.calls[0].call_id is None
    assert retried.result is not None
    (outcome,) = retried.result.outcomes
    assert (outcome.status, outcome.output) == ("replayed", {"saved": "weight", "count": 1})
    assert saved == [{"key": "weight", "value": 70}]
    assert conversation.final_text == 'Tool results: {"saved": "weight", "count": 1}.'
