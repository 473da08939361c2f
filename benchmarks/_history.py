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

``count_history`` counts the same with valgrind, end to end through the openai SDK (not
streamed, the ``openai.chat history N turns`` cases of ``benchmarks._instructions``, 10 and
200 turns): instructions per request bare and instrumented, with the garbage collector off
(after a warm-up and ``gc.freeze()``), and on unless ``collector_on`` is False. The target
(``TARGET_HISTORY_GROWTH``) is checked on the count with the collector off: it is exact to
a fraction of a percent, while where the collector's passes land moves a count with it on
by millions of instructions between runs of the same code (``benchmarks._instructions``),
more than the 0.5 M to resolve; the figures with it on are printed beside it. Each count
is the mean of ``LAYOUTS`` processes a mode (``benchmarks._counted``: a hash seed and an
environment size each), and the verdict is ``inconclusive`` when the target lies within
the growth's noise: the added counts' spread between layouts, at 10 and at 200 turns.

``measure_shared_ids`` is the other cost that could grow with traffic: servers that number
calls ``call_0`` in every response leave many open calls under one id, one per
conversation. It opens N such calls (distinct arguments, no conversation stated) and
answers them, the newest first, through the lifecycle: the median time to match and end
one, in µs, at each N.
"""

from __future__ import annotations

import json
import shutil
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider

import tooltap
from tooltap._core.model import ToolCall, ToolResultRef
from tooltap._core.request import parse_request
from tooltap._telemetry.operation import Operation
from tooltap._telemetry.telemetry import get_telemetry

from ._cases import long_history_request
from ._counted import LAYOUTS, layout_means, layouts_note
from ._report import TARGET_HISTORY_GROWTH, _table

__all__ = [
    "COUNTED",
    "LENGTHS",
    "count_check",
    "count_history",
    "count_table",
    "history_growth",
    "history_table",
    "measure_history",
    "measure_shared_ids",
    "shared_ids_table",
]

LENGTHS = (10, 50, 100, 200)
#: History lengths counted with valgrind (the ``openai.chat history N turns`` cases).
COUNTED = (10, 200)
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


def count_history(
    workload: dict[str, int],
    requests: int = 2,
    *,
    collector_on: bool = True,
    layouts: int = LAYOUTS,
) -> dict[str, Any]:
    """Instructions per request (valgrind, the requests alone: ``_instructions``'s
    ``--loop``) at each of ``COUNTED`` turns, bare and instrumented, each the mean of
    ``layouts`` processes a mode, collector off (and on); the growth of what tooltap adds.
    ``workload``: the simulator's (its ids numbered: each result answers the turn before)."""
    if shutil.which("valgrind") is None:
        return {"skipped": "valgrind not installed"}
    from ._instructions import _per_request

    def count(gc_on: bool, turns: int) -> dict[str, Any]:
        per, _ = _per_request(f"openai.chat history {turns} turns", requests,
                              {**workload, "numbered": 1}, ("bare", "tooltap"), False,
                              layouts, gc_on, loop=True)  # fmt: skip
        return {"gc": gc_on, "turns": turns, **layout_means(per["bare"], per["tooltap"])}

    runs = [(gc_on, turns) for gc_on in (False, True)[: 1 + collector_on] for turns in COUNTED]
    with ThreadPoolExecutor(max_workers=2) as pool:  # two processes under valgrind at once
        rows = list(pool.map(lambda run: count(*run), runs))
    return {"requests": requests, "layouts": layouts, "rows": rows,
            "growth_gc_off": _growth(rows, False), "growth_gc_on": _growth(rows, True)}  # fmt: skip


def _growth(rows: list[dict[str, Any]], gc_on: bool) -> float | None:
    mine = [r for r in rows if r["gc"] is gc_on]
    return float(mine[-1]["added"] - mine[0]["added"]) if mine else None


def count_check(counted: dict[str, Any]) -> dict[str, str]:
    """The target row of the counted history growth."""
    target = (f"added instructions grow < {TARGET_HISTORY_GROWTH / 1e6:g} M from 10 to 200 "
              "turns")  # fmt: skip
    case = "openai.chat history (SDK, not streamed; valgrind)"
    if "skipped" in counted:
        return {"target": target, "case": case, "value": counted["skipped"],
                "verdict": "inconclusive"}  # fmt: skip
    on, growth = counted["growth_gc_on"], counted["growth_gc_off"]
    off = [r for r in counted["rows"] if not r["gc"]]
    noise = max((r.get("spread", 0.0) for r in off), default=0.0)  # one layout's reach
    value = (f"{growth / 1e6:+.2f} M" + (f" ± {noise / 1e6:.2f} M" if noise else "")
             + ", collector off" + ("" if on is None else f" (on: {on / 1e6:+.2f} M)"))  # fmt: skip
    if any(r["added"] < 0 for r in off) or abs(growth - TARGET_HISTORY_GROWTH) <= noise:
        verdict = "inconclusive"  # the noise over the effect
    else:
        verdict = "met" if growth < TARGET_HISTORY_GROWTH else "MISSED"
    return {"target": target, "case": case, "value": value, "verdict": verdict}


def count_table(counted: dict[str, Any]) -> str:
    """The counted long-conversation table (Markdown), with its verdict."""
    title = "### Long conversations, counted (valgrind, openai SDK, not streamed)\n\n"
    check = count_check(counted)
    if "skipped" in counted:
        return title + f"Not counted: {counted['skipped']}.\n"
    header = ["collector", "turns", "bare M/request", "tooltap M/request", "added M/request",
              "added spread M"]  # fmt: skip
    body = [["on" if r["gc"] else "off", str(r["turns"]), f"{r['bare'] / 1e6:.1f}",
             f"{r['tooltap'] / 1e6:.1f}", f"{r['added'] / 1e6:+.2f}",
             f"{r['spread'] / 1e6:.2f}" if "spread" in r else "-"]
            for r in counted["rows"]]  # fmt: skip
    processes = layouts_note(counted, "the spread: how far apart the layouts' added counts "
                             "came, the noise the verdict allows for")  # fmt: skip
    return (title + _table(header, body) + f"\n\nWhat tooltap adds grows by {check['value']} "
            f"from 10 to 200 turns (the requests alone, {counted['requests']} per process, "
            f"{processes}): {check['verdict']} (target: {check['target']}).\n")  # fmt: skip
