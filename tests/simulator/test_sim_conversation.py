"""The lookup conversation, end to end, with the real SDKs over real loopback sockets."""

from __future__ import annotations

import re

import pytest

from tests.simulator.drivers import DRIVERS, GoogleDriver, lookup_results
from tooltap.simulator import Simulator

ID_FORMS = {
    "openai.chat": r"call_[A-Za-z0-9]{24}",
    "openai.responses": r"call_[A-Za-z0-9]{24}",
    "anthropic.messages": r"toolu_01[A-Za-z0-9]{22}",
    "google.genai": r"[a-z0-9]{8}",
}

SYNC = pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
STREAM = pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
DIALECT = pytest.mark.parametrize("dialect", list(DRIVERS))


@DIALECT
@STREAM
@SYNC
async def test_lookup_conversation_completes(
    sim: Simulator, dialect: str, stream: bool, sync: bool
) -> None:
    driver = DRIVERS[dialect](sim, stream=stream)
    first = await driver.run_turn(sync)
    assert [(c.name, c.args) for c in first.calls] == [
        ("lookup_demo_value", {"key": "height"}),
        ("lookup_demo_value", {"key": "weight"}),
    ]
    ids = [c.call_id for c in first.calls]
    assert all(re.fullmatch(ID_FORMS[dialect], i or "") for i in ids), ids
    assert len(set(ids)) == 2
    driver.answer(
        first,
        [
            (c.call_id, c.name, r)
            for c, r in zip(first.calls, lookup_results(first.calls), strict=True)
        ],
    )
    second = await driver.run_turn(sync)
    assert second.calls == []
    assert second.text == "You are 170 cm tall and weigh 70 kg."
    assert [r.dialect for r in sim.requests] == [dialect, dialect]


@STREAM
async def test_google_async_over_httpx2(sim: Simulator, stream: bool) -> None:
    driver = GoogleDriver(sim, stream=stream)
    first = await driver.aturn(httpx_async=True)
    assert [c.args for c in first.calls] == [{"key": "height"}, {"key": "weight"}]
    driver.answer(
        first,
        [
            (c.call_id, c.name, r)
            for c, r in zip(first.calls, lookup_results(first.calls), strict=True)
        ],
    )
    second = await driver.aturn(httpx_async=True)
    assert "170 cm" in second.text and "70 kg" in second.text
