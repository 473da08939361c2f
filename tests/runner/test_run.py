"""ToolRegistry.run: validation before execution, failure policy, ledger, result shapes."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import tooltap
from tooltap import Parsed, ToolCall
from tooltap.harness import (
    Claim,
    LedgerEntry,
    MemoryLedger,
    RetryPolicy,
    ToolError,
    ToolRegistry,
)

FAST = RetryPolicy(attempts=3, initial_delay=0.001, multiplier=2.0, max_delay=0.01)
KEY_SCHEMA = {
    "type": "object",
    "properties": {"key": {"type": "string", "enum": ["height", "weight"]}},
    "required": ["key"],
    "additionalProperties": False,
}
VALUES = {"height": "170 cm", "weight": "70 kg"}


def call(
    name: str,
    args: dict[str, Any],
    call_id: str | None,
    index: int = 0,
    dialect: str = "openai.chat",
) -> ToolCall:
    return ToolCall(
        name, args, tooltap._core.dialects.provider_of(dialect), call_id, index, None, dialect
    )


def seed_calls(dialect: str = "openai.chat") -> list[ToolCall]:
    return [
        call("lookup_demo_value", {"key": "height"}, "call_height", 0, dialect),
        call("lookup_demo_value", {"key": "weight"}, "call_weight", 1, dialect),
    ]


def lookup_registry(log: list[str] | None = None) -> ToolRegistry:
    reg = ToolRegistry(retry=FAST)

    @reg.tool(schema=KEY_SCHEMA)
    def lookup_demo_value(key: str) -> str:
        if log is not None:
            log.append(key)
        return VALUES[key]

    return reg


async def test_seed_turn_both_results_under_their_own_ids() -> None:
    log: list[str] = []
    result = await lookup_registry(log).run(seed_calls())
    assert sorted(log) == ["height", "weight"]
    assert result.messages == [
        {"role": "tool", "tool_call_id": "call_height", "content": "170 cm"},
        {"role": "tool", "tool_call_id": "call_weight", "content": "70 kg"},
    ]
    assert [o.status for o in result.outcomes] == ["ok", "ok"]
    assert result.ok
    assert result.outcome("call_weight").output == "70 kg"
    assert set(result.by_id) == {"call_height", "call_weight"}


@pytest.mark.parametrize(
    ("dialect", "expected"),
    [
        (
            "openai.responses",
            [
                {"type": "function_call_output", "call_id": "call_height", "output": "170 cm"},
                {"type": "function_call_output", "call_id": "call_weight", "output": "70 kg"},
            ],
        ),
        (
            "anthropic.messages",
            [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "call_height",
                            "content": "170 cm",
                            "is_error": False,
                        },
                        {
                            "type": "tool_result",
                            "tool_use_id": "call_weight",
                            "content": "70 kg",
                            "is_error": False,
                        },
                    ],
                }
            ],
        ),
        (
            "google.genai",
            [
                {
                    "role": "user",
                    "parts": [
                        {
                            "functionResponse": {
                                "name": "lookup_demo_value",
                                "response": {"output": "170 cm"},
                                "id": "call_height",
                            }
                        },
                        {
                            "functionResponse": {
                                "name": "lookup_demo_value",
                                "response": {"output": "70 kg"},
                                "id": "call_weight",
                            }
                        },
                    ],
                }
            ],
        ),
    ],
)
async def test_results_come_back_in_each_provider_shape(
    dialect: str, expected: list[dict[str, Any]]
) -> None:
    result = await lookup_registry().run(seed_calls(dialect))
    assert result.dialect == dialect
    assert result.messages == expected


async def test_invalid_and_undeclared_calls_are_never_executed() -> None:
    log: list[str] = []
    calls = [
        call("lookup_demo_value", {"kee": "height"}, "c_bad", 0),
        call("lookup_demo_value", {"key": "age"}, "c_enum", 1),
        call("delete_everything", {}, "c_undeclared", 2),
        call("lookup_demo_value", {"key": "weight"}, "c_ok", 3),
    ]
    result = await lookup_registry(log).run(calls)
    assert log == ["weight"]
    bad, enum, undeclared, ok = result.outcomes
    assert (bad.status, bad.is_error, bad.attempts, bad.executed) == ("invalid", True, 0, False)
    assert bad.error_type == "schema_violation"
    assert "required" in bad.output and bad.problems[0].detail in bad.output
    assert "kee" in bad.output and "again" in bad.output
    assert enum.status == "invalid" and enum.problems[0].kind == "schema_violation"
    assert "$.key" in enum.output and enum.problems[0].detail in enum.output
    assert undeclared.status == "undeclared" and "lookup_demo_value" in undeclared.output
    assert ok.status == "ok"
    ids = [m["tool_call_id"] for m in result.messages]
    assert ids == ["c_bad", "c_enum", "c_undeclared", "c_ok"]
    assert result.messages[0]["content"].startswith('{"error": "Invalid arguments')
    assert not result.ok


async def test_unparsable_arguments_in_a_parsed_response_get_an_error_result() -> None:
    body = (
        b'{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{'
        b'"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,'
        b'"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup_demo_value",'
        b'"arguments":"{\\"key\\": height}"}},{"id":"call_2","type":"function","function":{'
        b'"name":"lookup_demo_value","arguments":"{\\"key\\":\\"weight\\"}"}}]}}]}'
    )
    parsed = tooltap.core.parse_response(body, "openai.chat")
    assert [c.call_id for c in parsed.calls] == ["call_2"]
    log: list[str] = []
    result = await lookup_registry(log).run(parsed)
    assert log == ["weight"]
    assert [m["tool_call_id"] for m in result.messages] == ["call_2", "call_1"]
    first = result.outcome("call_1")
    assert first.status == "invalid" and first.error_type == "invalid_json"
    assert first.call.raw_arguments == '{"key": height}'


async def test_google_call_without_id_is_answered_by_name() -> None:
    calls = [call("lookup_demo_value", {"key": "height"}, None, 0, "google.genai")]
    result = await lookup_registry().run(calls)
    assert result.messages == [
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "lookup_demo_value",
                        "response": {"output": "170 cm"},
                    }
                }
            ],
        }
    ]
    assert result.by_id == {}


async def test_failing_read_only_handler_is_retried_until_it_succeeds() -> None:
    attempts: list[float] = []
    reg = ToolRegistry(retry=RetryPolicy(attempts=4, initial_delay=0.02, multiplier=2.0))

    @reg.tool
    def flaky(key: str) -> str:
        attempts.append(time.monotonic())
        if len(attempts) < 3:
            raise ConnectionError("backend hiccup")
        return "fine"

    result = await reg.run([call("flaky", {"key": "x"}, "c1")])
    outcome = result.outcome("c1")
    assert (outcome.status, outcome.output, outcome.attempts) == ("ok", "fine", 3)
    waits = [b - a for a, b in itertools.pairwise(attempts)]
    assert waits[0] >= 0.02 and waits[1] >= 0.04  # growing waits


async def test_read_only_handler_failing_every_time_gives_an_error_result() -> None:
    reg = ToolRegistry(retry=FAST)
    count = 0

    @reg.tool
    def broken() -> str:
        nonlocal count
        count += 1
        raise ValueError("database password=hunter2 rejected")

    result = await reg.run([call("broken", {}, "c1")])
    outcome = result.outcome("c1")
    assert count == 3 and outcome.attempts == 3
    assert outcome.status == "error" and outcome.error_type == "ValueError"
    assert isinstance(outcome.exception, ValueError)
    assert outcome.output.startswith("The tool 'broken' failed: ValueError")
    assert "Traceback" not in result.messages[0]["content"]


async def test_failing_side_effecting_handler_is_not_retried() -> None:
    reg = ToolRegistry(retry=FAST)
    count = 0

    @reg.tool(side_effects=True)
    def save(value: int) -> str:
        nonlocal count
        count += 1
        raise TimeoutError("lost the confirmation")

    result = await reg.run([call("save", {"value": 1}, "c1")])
    assert count == 1
    assert result.outcome("c1").status == "error"
    again = await reg.run([call("save", {"value": 1}, "c1")])  # provider re-sent it
    assert count == 1
    assert again.outcome("c1").status == "replayed" and again.outcome("c1").is_error


async def test_tool_error_is_sent_as_is_and_not_retried() -> None:
    reg = ToolRegistry(retry=FAST)
    count = 0

    @reg.tool
    def find(name: str) -> str:
        nonlocal count
        count += 1
        raise ToolError(f"No user called {name}. Ask for the full name.", error_type="not_found")

    result = await reg.run([call("find", {"name": "Ana"}, "c1")])
    outcome = result.outcome("c1")
    assert count == 1
    assert outcome.output == "No user called Ana. Ask for the full name."
    assert outcome.error_type == "not_found"


async def test_resent_response_does_not_run_a_side_effecting_tool_twice() -> None:
    saved: list[int] = []
    reg = ToolRegistry()

    @reg.tool(side_effects=True)
    async def save(value: int) -> dict[str, Any]:
        saved.append(value)
        return {"saved": value, "n": len(saved)}

    first = await reg.run([call("save", {"value": 7}, "c1")])
    second = await reg.run([call("save", {"value": 7}, "c1")])
    assert saved == [7]
    assert first.outcome("c1").status == "ok" and first.outcome("c1").executed
    assert second.outcome("c1").status == "replayed" and not second.outcome("c1").executed
    assert second.messages == first.messages


async def test_idempotency_key_dedupes_a_new_call_id_for_the_same_effect() -> None:
    saved: list[str] = []
    reg = ToolRegistry()

    @reg.tool(side_effects=True, idempotency_key=lambda a: f"{a['day']}:{a['kg']}")
    def log_weight(day: str, kg: float) -> str:
        saved.append(day)
        return f"logged {kg} kg on {day}"

    first = await reg.run([call("log_weight", {"day": "mon", "kg": 70}, "c1")])
    second = await reg.run(
        [
            call("log_weight", {"day": "mon", "kg": 70}, "c2", 0),
            call("log_weight", {"day": "tue", "kg": 70}, "c3", 1),
        ]
    )
    assert saved == ["mon", "tue"]
    assert first.outcome("c1").status == "ok"
    assert second.outcome("c2").status == "replayed"
    assert second.outcome("c2").output == "logged 70 kg on mon"
    assert second.outcome("c3").status == "ok"
    assert [m["tool_call_id"] for m in second.messages] == ["c2", "c3"]


async def test_same_effect_twice_in_one_concurrent_turn_runs_once() -> None:
    saved: list[str] = []
    reg = ToolRegistry()

    @reg.tool(side_effects=True, idempotency_key=lambda a: a["day"])
    async def log_day(day: str) -> str:
        await asyncio.sleep(0.01)
        saved.append(day)
        return "ok " + day

    result = await reg.run(
        [call("log_day", {"day": "mon"}, "c1", 0), call("log_day", {"day": "mon"}, "c2", 1)]
    )
    assert saved == ["mon"]
    assert [o.status for o in result.outcomes] == ["ok", "replayed"]
    assert [m["content"] for m in result.messages] == ["ok mon", "ok mon"]


async def test_repeated_call_id_in_one_response_is_answered_once() -> None:
    log: list[str] = []
    dup = seed_calls()[0]
    result = await lookup_registry(log).run([dup, dataclasses.replace(dup, index=1)])
    assert log == ["height"]
    assert len(result.messages) == 1
    assert [(o.status, o.sent) for o in result.outcomes] == [("ok", True), ("replayed", False)]


async def test_run_cut_short_mid_effect_is_in_doubt_and_not_repeated(tmp_path: Path) -> None:
    started = asyncio.Event()
    ran: list[int] = []

    async def pay(amount: int) -> str:
        ran.append(amount)
        started.set()
        await asyncio.Event().wait()  # the process dies here, confirmation never comes
        return "paid"

    with tooltap.harness.SQLiteLedger(tmp_path / "ledger.db") as ledger:
        reg = ToolRegistry(ledger=ledger)
        reg.add(pay, side_effects=True)
        task = asyncio.create_task(reg.run([call("pay", {"amount": 5}, "c1")]))
        await asyncio.wait_for(started.wait(), 1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    with tooltap.harness.SQLiteLedger(tmp_path / "ledger.db") as ledger:  # a new process
        reg = ToolRegistry(ledger=ledger, peer_wait=0.1)  # the claim is fresh: waits that long
        reg.add(pay, side_effects=True)
        result = await reg.run([call("pay", {"amount": 5}, "c1")])
    assert ran == [5]
    outcome = result.outcome("c1")
    assert outcome.status == "in_doubt" and outcome.is_error
    assert "not repeated" in outcome.output


async def test_read_only_calls_are_not_stored_and_run_again() -> None:
    log: list[str] = []
    reg = lookup_registry(log)
    await reg.run(seed_calls())
    again = await reg.run(seed_calls())
    assert sorted(log) == ["height", "height", "weight", "weight"]
    assert [o.status for o in again.outcomes] == ["ok", "ok"]
    assert len(reg.ledger) == 0  # type: ignore[arg-type]


async def test_a_reused_call_id_with_other_arguments_is_a_new_call() -> None:
    saved: list[int] = []
    reg = ToolRegistry()
    reg.add(lambda value: saved.append(value) or value, name="save", side_effects=True)
    first = await reg.run([call("save", {"value": 1}, "call_0")])
    second = await reg.run([call("save", {"value": 2}, "call_0")])  # ids restart per response
    assert saved == [1, 2]
    assert [first.outcomes[0].output, second.outcomes[0].output] == [1, 2]


async def test_arguments_the_handler_cannot_take_are_refused_before_running() -> None:
    ran: list[str] = []
    reg = ToolRegistry()
    loose = {"type": "object", "properties": {"key": {"type": "string"}}}
    reg.add(lambda key: ran.append(key), name="lookup", schema=loose)
    result = await reg.run(
        [call("lookup", {"key": "a", "unit": "cm"}, "c1", 0), call("lookup", {}, "c2", 1)]
    )
    assert ran == []
    extra, missing = result.outcomes
    assert extra.status == "invalid" and "unexpected keyword argument 'unit'" in extra.output
    assert missing.status == "invalid" and "missing a required argument: 'key'" in missing.output


async def test_persistent_ledger_survives_a_restart(tmp_path: Path) -> None:
    ran: list[int] = []

    def pay(amount: int) -> dict[str, int]:
        ran.append(amount)
        return {"paid": amount}

    for _ in range(2):  # two "processes" over the same file
        with tooltap.harness.SQLiteLedger(tmp_path / "l.db") as ledger:
            reg = ToolRegistry(ledger=ledger)
            reg.add(pay, side_effects=True)
            result = await reg.run([call("pay", {"amount": 5}, "c1")])
    assert ran == [5]
    assert result.outcome("c1").status == "replayed"
    assert result.messages == [{"role": "tool", "tool_call_id": "c1", "content": '{"paid": 5}'}]


class BrokenLedger:
    def get(self, key: str) -> LedgerEntry | None:
        raise OSError("disk gone")

    def put(self, key: str, entry: LedgerEntry) -> None:
        raise OSError("disk gone")

    def claim(self, key: str, tool: str = "") -> Claim:
        raise OSError("disk gone")

    def forget(self, key: str) -> None:
        raise OSError("disk gone")


async def test_broken_ledger_blocks_side_effects_but_not_reads() -> None:
    reg = ToolRegistry(ledger=BrokenLedger())
    ran: list[str] = []
    reg.add(lambda: ran.append("write"), name="write", side_effects=True)
    reg.add(lambda: ran.append("read") or "r", name="read")
    result = await reg.run([call("write", {}, "w", 0), call("read", {}, "r", 1)])
    assert ran == ["read"]
    assert result.outcome("w").error_type == "ledger_error"
    assert result.outcome("r").status == "ok"


async def test_concurrent_calls_overlap_and_sequential_ones_do_not() -> None:
    for concurrent in (True, False):
        reg = ToolRegistry()
        both = threading.Barrier(2, timeout=0.5)

        @reg.tool
        def wait_for_peer(n: int, both: threading.Barrier = both) -> str:
            try:
                both.wait()
            except threading.BrokenBarrierError:
                return "alone"
            return "together"

        result = await reg.run(
            [call("wait_for_peer", {"n": i}, f"c{i}", i) for i in range(2)], concurrent=concurrent
        )
        expected = "together" if concurrent else "alone"
        assert [o.output for o in result.outcomes] == [expected, expected]


async def test_async_handlers_run_concurrently() -> None:
    reg = ToolRegistry()
    started = asyncio.Event()

    @reg.tool
    async def first() -> str:
        started.set()
        return "first"

    @reg.tool
    async def second() -> str:
        await asyncio.wait_for(started.wait(), 1)
        return "second"

    result = await reg.run([call("second", {}, "b", 0), call("first", {}, "a", 1)])
    assert [o.output for o in result.outcomes] == ["second", "first"]


def test_run_sync() -> None:
    log: list[str] = []
    result = lookup_registry(log).run_sync(seed_calls("anthropic.messages"))
    assert sorted(log) == ["height", "weight"]
    assert len(result.messages) == 1 and len(result.messages[0]["content"]) == 2


async def test_run_sync_inside_a_loop_says_to_await() -> None:
    with pytest.raises(RuntimeError, match="await run"):
        lookup_registry().run_sync(seed_calls())


async def test_dialect_comes_from_the_argument_when_calls_lack_one() -> None:
    bare = ToolCall("lookup_demo_value", {"key": "height"}, "anthropic", "toolu_1", 0)
    with pytest.raises(ValueError, match="dialect"):
        await lookup_registry().run([bare])
    result = await lookup_registry().run([bare], dialect="anthropic.messages")
    assert result.messages[0]["content"][0]["tool_use_id"] == "toolu_1"


async def test_empty_turn() -> None:
    result = await lookup_registry().run(Parsed("openai.chat"))
    assert result.messages == [] and result.outcomes == () and result.ok


async def test_request_info_from_the_real_request_is_honoured() -> None:
    info = tooltap.core.RequestInfo(
        "openai.chat",
        tools={"lookup_demo_value": {"type": "object", "properties": {"key": {"const": "height"}}}},
    )
    result = await lookup_registry().run(seed_calls(), request_info=info)
    assert [o.status for o in result.outcomes] == ["ok", "invalid"]


async def test_repeated_invalid_call_id_is_answered_once_and_stays_invalid() -> None:
    bad = call("lookup_demo_value", {"kee": "height"}, "c1")
    result = await lookup_registry().run([bad, dataclasses.replace(bad, index=1)])
    assert len(result.messages) == 1
    assert [(o.status, o.sent) for o in result.outcomes] == [("invalid", True), ("invalid", False)]


async def test_read_only_tool_timing_out_is_retried_per_policy() -> None:
    reg = ToolRegistry(retry=FAST)
    runs: list[float] = []
    release = threading.Event()

    @reg.tool(timeout=0.05)
    def slow_lookup(key: str) -> str:
        runs.append(time.monotonic())
        if len(runs) == 1:
            release.wait(5)  # the first attempt hangs; nobody can kill its thread
        return f"value of {key}"

    started = time.monotonic()
    outcome = (await reg.run([call("slow_lookup", {"key": "k"}, "c1")])).outcome("c1")
    release.set()
    assert (outcome.status, outcome.output, outcome.attempts) == ("ok", "value of k", 2)
    assert time.monotonic() - started < 2


async def test_read_only_async_tool_timing_out_every_time_is_an_error() -> None:
    reg = ToolRegistry(retry=FAST)
    cancelled: list[int] = []

    @reg.tool(timeout=0.02)
    async def stuck() -> str:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(1)
            raise
        return "never"

    outcome = (await reg.run([call("stuck", {}, "c1")])).outcome("c1")
    await asyncio.sleep(0)
    assert (outcome.status, outcome.error_type, outcome.attempts) == ("error", "timeout", 3)
    assert "did not finish within 0.02 s" in outcome.output
    assert cancelled == [1, 1, 1]


def test_side_effecting_sync_tool_timing_out_is_in_doubt_then_records_its_late_result() -> None:
    ledger = MemoryLedger()
    reg = ToolRegistry(ledger=ledger, peer_wait=0.1)
    release = threading.Event()
    finished = threading.Event()
    sent: list[str] = []

    @reg.tool(side_effects=True, timeout=0.05)
    def send_email(to: str) -> str:
        sent.append(to)
        release.wait(5)
        finished.set()
        return f"sent to {to}"

    started = time.monotonic()
    first = reg.run_sync([call("send_email", {"to": "ana"}, "c1")])  # returns: thread not joined
    assert time.monotonic() - started < 2
    outcome = first.outcome("c1")
    assert (outcome.status, outcome.is_error, outcome.attempts) == ("in_doubt", True, 1)
    assert "did not finish within 0.05 s" in outcome.output and "not repeated" in outcome.output
    assert reg.run_sync([call("send_email", {"to": "ana"}, "c1")]).outcome("c1").status == (
        "in_doubt"
    )
    release.set()
    assert finished.wait(5)
    deadline = time.monotonic() + 5
    while ledger.in_doubt():  # the thread records its outcome as it finishes
        assert time.monotonic() < deadline
        time.sleep(0.01)
    late = reg.run_sync([call("send_email", {"to": "ana"}, "c1")]).outcome("c1")
    assert (late.status, late.output) == ("replayed", "sent to ana")
    assert sent == ["ana"]


async def test_side_effecting_async_tool_timing_out_is_cancelled_and_in_doubt() -> None:
    reg = ToolRegistry(peer_wait=0.05)
    charged: list[int] = []

    @reg.tool(side_effects=True, timeout=0.03)
    async def charge(amount: int) -> str:
        charged.append(amount)
        await asyncio.sleep(5)
        return "charged"

    first = (await reg.run([call("charge", {"amount": 5}, "c1")])).outcome("c1")
    again = (await reg.run([call("charge", {"amount": 5}, "c1")])).outcome("c1")
    assert (first.status, first.attempts) == ("in_doubt", 1)
    assert (again.status, again.attempts) == ("in_doubt", 0)
    assert charged == [5]


def test_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="timeout"):
        ToolRegistry().add(lambda: None, name="t", timeout=0)


def google_save(value: int, index: int = 0) -> ToolCall:
    return call("save", {"value": value}, None, index, "google.genai")


async def test_google_calls_without_ids_are_keyed_by_their_place_in_the_conversation() -> None:
    saved: list[int] = []
    reg = ToolRegistry()
    reg.add(lambda value: saved.append(value) or len(saved), name="save", side_effects=True)
    history: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": "save 1 and 1"}]}]
    turn = [google_save(1, 0), google_save(1, 1)]  # the same args twice: two effects
    first = await reg.run(turn, history=history)
    retried = await reg.run(turn, history=list(history))  # the same request sent again
    assert saved == [1, 1]
    assert [o.status for o in first.outcomes] == ["ok", "ok"]
    assert [(o.status, o.output) for o in retried.outcomes] == [("replayed", 1), ("replayed", 2)]
    later = [*history, {"role": "model", "parts": []}, {"role": "user", "parts": []}]
    again = await reg.run([google_save(1)], history=later)  # a later turn asks again
    assert again.outcomes[0].status == "ok" and saved == [1, 1, 1]
    other = [{"role": "user", "parts": [{"text": "another conversation"}]}]
    assert (await reg.run([google_save(1)], history=other)).outcomes[0].status == "ok"
    assert len(saved) == 4


async def test_a_conversation_id_names_the_conversation_of_id_less_calls() -> None:
    saved: list[int] = []
    reg = ToolRegistry()
    reg.add(lambda value: saved.append(value) or len(saved), name="save", side_effects=True)
    history: list[Any] = [{"role": "user", "parts": [{"text": "save 1"}]}]
    await reg.run([google_save(1)], conversation_id="conv-a", history=history)
    edited: list[Any] = [{"role": "user", "parts": [{"text": "save 1, please"}]}]
    same = await reg.run([google_save(1)], conversation_id="conv-a", history=edited)
    other = await reg.run([google_save(1)], conversation_id="conv-b", history=history)
    assert [same.outcomes[0].status, other.outcomes[0].status] == ["replayed", "ok"]
    assert saved == [1, 1]


async def test_id_less_calls_without_a_history_are_not_tracked() -> None:
    saved: list[int] = []
    reg = ToolRegistry()
    reg.add(lambda value: saved.append(value), name="save", side_effects=True)
    for _ in range(2):
        await reg.run([google_save(1)])
    assert saved == [1, 1] and reg.ledger.in_doubt() == {}  # type: ignore[attr-defined]
