"""The harness loop end to end: real SDKs -> simulator -> ToolRegistry, all four dialects.

The simulator answers 400 unless every call id of a turn gets exactly one result, so
every conversation that reaches its final answer proves the results went home.
"""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest
from google.genai import errors as gerrors

import tooltap
from tests.runner.loops import LOOPS, Loop
from tooltap.harness import RetryPolicy, SQLiteLedger, ToolError, ToolRegistry, fallback_message
from tooltap.simulator import Fault, Simulator

DIALECTS = list(LOOPS)
VALUES = {"height": "170 cm", "weight": "70 kg"}
KEY_SCHEMA = {
    "type": "object",
    "properties": {"key": {"type": "string", "enum": ["height", "weight"]}},
    "required": ["key"],
    "additionalProperties": False,
}
SAVE = ("save_measurement", {"key": "weight", "value": 70})
FAST = RetryPolicy(attempts=3, initial_delay=0.001, max_delay=0.005)


def lookup_registry(log: list[str], *, fail_first: int = 0) -> ToolRegistry:
    reg = ToolRegistry(retry=FAST)

    @reg.tool(schema=KEY_SCHEMA)
    def lookup_demo_value(key: str) -> str:
        """Look up one stored value of the user: height or weight."""
        log.append(key)
        if log.count(key) <= fail_first:
            raise ConnectionError("profile store busy")
        return VALUES[key]

    return reg


def save_registry(saved: list[dict[str, Any]], *, fail: bool = False, **kw: Any) -> ToolRegistry:
    reg = ToolRegistry(retry=FAST, **kw)

    @reg.tool(side_effects=True)
    def save_measurement(key: str, value: float) -> dict[str, Any]:
        """Store a measurement of the user."""
        saved.append({"key": key, "value": value})
        if fail:
            raise TimeoutError("confirmation lost")
        return {"saved": key, "count": len(saved)}

    return reg


@pytest.mark.parametrize("dialect", DIALECTS)
def test_seed_conversation(sim: Simulator, dialect: str) -> None:
    log: list[str] = []
    conversation = LOOPS[dialect](sim, lookup_registry(log)).converse()
    assert conversation.final_text == "You are 170 cm tall and weigh 70 kg."
    (turn,) = conversation.results
    assert sorted(log) == ["height", "weight"]
    calls = conversation.steps[0].parsed.calls
    assert len(calls) == 2 and calls[0].call_id != calls[1].call_id
    assert {o.call_id: o.output for o in turn.outcomes} == {
        calls[0].call_id: VALUES[calls[0].args["key"]],
        calls[1].call_id: VALUES[calls[1].args["key"]],
    }
    expected_messages = 1 if dialect in ("anthropic.messages", "google.genai") else 2
    assert len(turn.messages) == expected_messages


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_seed_conversation_async_registry(sim: Simulator, dialect: str) -> None:
    """The same turn through ``await registry.run`` (the SDK call itself stays sync)."""
    log: list[str] = []
    loop = LOOPS[dialect](sim, lookup_registry(log))
    response = loop.request()
    parsed = tooltap.core.parse_response(response, dialect)
    loop.keep(response)
    loop.history += (await loop.registry.run(parsed)).messages
    assert loop.text(loop.request()) == "You are 170 cm tall and weigh 70 kg."


@pytest.mark.parametrize("dialect", DIALECTS)
def test_invalid_arguments_error_result_then_corrected_call(dialect: str) -> None:
    """The model first sends ``{"kee": ...}``; told why, it asks again correctly.

    Two simulators play the model before and after the correction (the switch happens
    at a user turn, which needs no state from the earlier turns).
    """
    log: list[str] = []
    registry = lookup_registry(log)
    with Simulator(calls=[("lookup_demo_value", {"kee": "height"})]) as wrong:
        loop: Loop = LOOPS[dialect](wrong, registry)
        first = loop.converse()
    (turn,) = first.results
    (outcome,) = turn.outcomes
    assert log == []  # never executed
    assert outcome.status == "invalid" and outcome.error_type == "schema_violation"
    assert outcome.call_id == first.steps[0].parsed.calls[0].call_id
    assert outcome.output in first.final_text  # the model read why
    with Simulator(calls=[("lookup_demo_value", {"key": "height"})]) as right:
        loop.sim = right
        loop.say("Use the argument name 'key', please.")
        second = loop.converse()
    assert log == ["height"]
    assert second.results[0].outcomes[0].status == "ok"
    assert second.final_text == "Tool results: 170 cm."


@pytest.mark.parametrize("dialect", ["openai.chat", "openai.responses"])
def test_unparsable_arguments_error_result_then_next_call_succeeds(
    sim: Simulator, dialect: str
) -> None:
    """Broken JSON arguments (only where the SDK hands them over as text)."""
    sim.inject(Fault("invalid_json_args", index=0), dialect=dialect)
    log: list[str] = []
    loop = LOOPS[dialect](sim, lookup_registry(log))
    first = loop.converse()
    outcomes = first.results[0].outcomes
    assert sorted(o.status for o in outcomes) == ["invalid", "ok"]
    bad = next(o for o in outcomes if o.status == "invalid")
    assert bad.error_type == "invalid_json" and bad.call_id
    assert log == [next(o for o in outcomes if o.status == "ok").call.args["key"]]
    loop.say("Please try again.")
    assert loop.converse().final_text == "You are 170 cm tall and weigh 70 kg."


@pytest.mark.parametrize("dialect", DIALECTS)
def test_failing_read_only_handler_is_retried(sim: Simulator, dialect: str) -> None:
    log: list[str] = []
    conversation = LOOPS[dialect](sim, lookup_registry(log, fail_first=2)).converse()
    assert sorted(log) == ["height"] * 3 + ["weight"] * 3
    assert [o.attempts for o in conversation.results[0].outcomes] == [3, 3]
    assert conversation.final_text == "You are 170 cm tall and weigh 70 kg."


@pytest.mark.parametrize("dialect", DIALECTS)
def test_failing_side_effecting_handler_is_not_retried(dialect: str) -> None:
    saved: list[dict[str, Any]] = []
    with Simulator(calls=[SAVE]) as sim:
        conversation = LOOPS[dialect](sim, save_registry(saved, fail=True)).converse()
    assert len(saved) == 1
    (outcome,) = conversation.results[0].outcomes
    assert (outcome.status, outcome.attempts, outcome.error_type) == ("error", 1, "TimeoutError")
    assert "confirmation lost" in conversation.final_text  # the model was told


@pytest.mark.parametrize("dialect", DIALECTS)
def test_resent_response_does_not_repeat_the_side_effect(dialect: str, tmp_path: Any) -> None:
    """The same response delivered twice (a retried request): one effect, one answer per id."""
    saved: list[dict[str, Any]] = []
    with Simulator(calls=[SAVE]) as sim, SQLiteLedger(tmp_path / "ledger.db") as ledger:
        loop = LOOPS[dialect](sim, save_registry(saved, ledger=ledger))
        response = loop.request()
        first = loop.registry.run_sync(tooltap.core.parse_response(response, dialect))
        again = loop.registry.run_sync(tooltap.core.parse_response(response, dialect))
        loop.keep(response)
        loop.history += again.messages
        final = loop.text(loop.request())
    assert saved == [{"key": "weight", "value": 70}]
    assert first.outcomes[0].status == "ok" and again.outcomes[0].status == "replayed"
    assert again.messages == first.messages
    assert final == "Tool results: " + '{"saved": "weight", "count": 1}' + "."


def _outage(exc: BaseException) -> bool:
    return isinstance(exc, (openai.APIStatusError, anthropic.APIStatusError, gerrors.APIError))


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("fault", ["server_error", "insufficient_balance"])
def test_provider_outage_gives_the_local_fallback_message(
    sim: Simulator, dialect: str, fault: str
) -> None:
    sim.inject(Fault(fault), dialect=dialect)
    loop = LOOPS[dialect](sim, lookup_registry([]))
    with pytest.raises(Exception) as caught:
        loop.request()
    exc = caught.value
    assert _outage(exc)
    failure = tooltap.harness.provider_failure(exc, lang="es")
    assert failure.error_type == fault
    assert failure.user_message == fallback_message(fault, "es")
    assert failure.user_message not in str(exc)
    assert failure.diagnostics["status"] == getattr(exc, "status_code", getattr(exc, "code", None))
    assert failure.diagnostics["exception"].endswith(type(exc).__qualname__)
    assert failure.diagnostics["message"] == str(exc)[:2000]


def test_tool_error_reaches_the_model_verbatim(sim: Simulator) -> None:
    reg = ToolRegistry()

    @reg.tool(schema=KEY_SCHEMA)
    def lookup_demo_value(key: str) -> str:
        if key == "weight":
            raise ToolError("No weight stored yet. Ask the user for it.")
        return VALUES[key]

    final = LOOPS["anthropic.messages"](sim, reg).converse().final_text
    assert final == "You are 170 cm tall and weigh No weight stored yet. Ask the user for it.."
