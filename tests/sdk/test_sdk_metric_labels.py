"""Every attribute of every metric tooltap records is the one docs/REFERENCE.md lists."""

from __future__ import annotations

import re
from pathlib import Path

from tests.recorder import Recorder
from tests.sdk.drivers import DRIVERS
from tooltap import ToolCall
from tooltap._telemetry import semconv as sc
from tooltap._telemetry.execution import tool_execution
from tooltap.simulator import Fault, Simulator

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "REFERENCE.md"
GROUPS = {
    "op": {
        "gen_ai.operation.name",
        "gen_ai.provider.name",
        "gen_ai.request.model",
        "server.address",
        "server.port",
    },
    "tool": {"gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.tool.name"},
}


def documented() -> dict[str, set[str]]:
    """Metric name -> the attributes its row of the Labels table lists."""
    text = REFERENCE.read_text()
    table = text[text.index("| OpenTelemetry | Prometheus | attributes |") :]
    rows: dict[str, set[str]] = {}
    for line in table.splitlines()[2:]:
        if not line.startswith("| `"):
            break
        name, _, cell = (c.strip() for c in line.strip("|").split("|"))
        metric = re.match(r"`([^`]+)`", name)
        assert metric is not None, line
        found = set(re.findall(r"`([a-z_]+(?:\.[a-z_]+)+)`", cell))
        for group, members in GROUPS.items():
            if re.match(rf"{group}\b", cell):
                found |= members
        rows[metric.group(1)] = found
    return rows


async def test_recorded_attributes_are_documented(rec: Recorder, sim: Simulator) -> None:
    driver = DRIVERS["openai.chat"]
    client = driver.client(sim, sync=True, max_retries=2)
    sim.inject(Fault("rate_limit", retry_after=0.01), dialect="openai.chat")
    first = await driver.turn1(client, True)
    for call_id, name, args in rec.calls():  # the harness runs each handler
        with tool_execution(
            ToolCall(name, args, "openai", call_id, 0, dialect="openai.chat")
        ) as execution:
            execution.record_result("170 cm", is_error=False)
    await driver.turn2(client, True, first)
    sim.inject(Fault("invalid_json_args"), dialect="openai.chat")
    await driver.raw(client, False)
    rows = documented()
    assert set(rows) == set(sc.METRICS)
    seen = set()
    for metric in sc.METRICS:
        for attributes, _ in rec.points(metric):
            seen.add(metric)
            assert set(attributes) <= rows[metric], (metric, set(attributes) - rows[metric])
    assert seen >= {
        sc.OPERATION_DURATION, sc.TOKEN_USAGE, sc.TOOL_CALLS, sc.TOOL_RESULTS, sc.RETRIES,
        sc.PROVIDER_ERRORS, sc.TIME_TO_FIRST_CHUNK, sc.TOOL_CALL_DURATION, sc.EXECUTE_TOOL_DURATION,
    }  # fmt: skip
