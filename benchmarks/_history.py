"""Long conversations: what tooltap adds per request as the re-sent history grows.

Each request re-sends the whole history (``long_history_request``: 10, 50, 100, 200
answered turns, ~500 KB at 200) and carries one new result. What tooltap adds per request there is
its request-side step: read the request (declared tools, tool_choice, the new results
after the last model turn and the calls they answer) and account the new results. The
rest of what it does per request does not depend on the history. Medians, in ms:

* ``added``: the step as an SDK app runs it: the request read from the body object the
  SDK is about to serialize (no decoding);
* ``from bytes``: the step of an httpx-only app, which must decode the serialized body.

The SDK's own serialization of such a history is tens of milliseconds on a loaded
machine, so an end-to-end difference would be noise at this scale. ``history_growth``
says how flat the step is: what it adds at 200 turns beyond what it adds at 10 (the
conversation's fingerprint, the read back from the end and the accounting included).

``measure_shared_ids`` is the other cost that could grow with traffic: servers that number
calls ``call_0`` in every response leave many open calls under one id, one per
conversation. It opens N such calls (distinct arguments, no conversation stated) and
answers them, the newest first, through the lifecycle: the median time to match and end
one, in µs, at each N.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider

import tooltap
from tooltap._core.model import ToolCall, ToolResultRef
from tooltap._core.request import parse_request
from tooltap._telemetry.operation import Operation
from tooltap._telemetry.telemetry import get_telemetry

from ._cases import long_history_request
from ._report import _table

__all__ = [
    "LENGTHS",
    "history_growth",
    "history_table",
    "measure_history",
    "measure_shared_ids",
    "shared_ids_table",
]

LENGTHS = (10, 50, 100, 200)
#: Open calls sharing one id, and how many of them each measure answers.
SHARED = (10, 1_000, 10_000)
_ANSWERED = 200


def _median_ms(fn: Callable[..., Any], rounds: int, *args: Any) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def _step(body: dict[str, Any], raw: bytes | None) -> None:
    tel = get_telemetry()
    assert tel is not None
    op = Operation(tel, dialect="openai.chat", request_model="gpt-4o-mini", server_address="h",
                   server_port=443, stream=False, owner="sdk", request_body=body)  # fmt: skip
    info = parse_request(raw, "openai.chat") if raw is not None else op.request("openai.chat")
    assert info is not None and len(info.tool_results) == 1
    op.begin_attempt(info, {})
    op.end()


def measure_history(rounds: int = 200) -> list[dict[str, Any]]:
    """Per history length: tooltap's request-side step from the body object and from bytes."""
    rows = []
    tooltap.instrument(tracer_provider=TracerProvider(), meter_provider=MeterProvider())
    try:
        for turns in LENGTHS:
            body = long_history_request(turns)
            raw = json.dumps(body).encode()
            rows.append({
                "turns": turns, "history_kb": len(raw) / 1024,
                "added_ms": _median_ms(_step, rounds, body, None),
                "from_bytes_ms": _median_ms(_step, max(10, rounds // 10), body, raw),
            })  # fmt: skip
    finally:
        tooltap.uninstrument()
    return rows


def history_growth(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The SDK step at the fewest and the most turns measured, and the difference (ms)."""
    first, last = rows[0], rows[-1]
    return {"turns_from": first["turns"], "turns_to": last["turns"],
            "from_ms": first["added_ms"], "to_ms": last["added_ms"],
            "growth_ms": last["added_ms"] - first["added_ms"]}  # fmt: skip


def history_table(rows: list[dict[str, Any]]) -> str:
    """The long-conversation table (Markdown), and how much the SDK step grows."""
    header = ["turns", "history KB", "added ms per request (SDK)", "from bytes ms (httpx only)"]
    body = [[str(r["turns"]), f"{r['history_kb']:.0f}", f"{r['added_ms']:.3f}",
             f"{r['from_bytes_ms']:.2f}"] for r in rows]  # fmt: skip
    growth = history_growth(rows)
    note = (f"\n\nFrom {growth['turns_from']:.0f} to {growth['turns_to']:.0f} turns the SDK "
            f"step goes from {growth['from_ms']:.3f} to {growth['to_ms']:.3f} ms "
            f"({growth['growth_ms']:+.3f} ms).")  # fmt: skip
    return "### Long conversations (one new result per request)\n\n" + _table(header, body) + note


def measure_shared_ids(answered: int = _ANSWERED) -> list[dict[str, Any]]:
    """Per count of open calls sharing one id: the median µs to match and end one."""
    rows = []
    for count in SHARED:
        tooltap.instrument(tracer_provider=TracerProvider(), meter_provider=MeterProvider())
        try:
            tel = get_telemetry()
            assert tel is not None
            lifecycle = tel.lifecycle
            calls = [ToolCall("get_weather", {"city": f"city {n}"}, "openai", "call_0", 0,
                              dialect="openai.chat") for n in range(count)]  # fmt: skip
            for call in calls:
                lifecycle.received(call, parent=None, provider="openai", label="get_weather")
            times = []
            for call in calls[::-1][:answered]:
                ref = ToolResultRef("call_0", call.name, False, 0, dict(call.args), 0, 1)
                start = time.perf_counter()
                linked = lifecycle.results_sent(
                    (ref,), provider="openai", declared=None, inference_span=None
                )
                times.append(time.perf_counter() - start)
                assert len(linked) == 1
            rows.append({"open_calls": count, "us_per_result": statistics.median(times) * 1e6})
        finally:
            tooltap.uninstrument()
    return rows


def shared_ids_table(rows: list[dict[str, Any]]) -> str:
    """The shared-id table (Markdown)."""
    header = ["open calls under one id", "µs to match and end one (median)"]
    body = [[f"{r['open_calls']:,}", f"{r['us_per_result']:.1f}"] for r in rows]
    return "### Open calls sharing one id (`call_0` in every conversation)\n\n" + _table(
        header, body
    )
