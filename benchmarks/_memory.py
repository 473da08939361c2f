"""Memory: flat across many sequential turns; bounded by open state across concurrent streams.

``sequential_turns`` plays the tool-call conversation (calls, then their results) through
the real openai client, streamed, instrumented, and samples the process RSS and the
objects gc tracks; ``tracemalloc`` watches the last tenth of the run (after three
tenths that fill the bounded memories with traced entries) for memory that tooltap's own
code allocated and still holds. ``concurrent_streams`` opens many async
streams over raw httpx2, holds them all in the middle of a call's arguments, and
measures what tooltap's code holds per open stream (and the whole process, bare vs
instrumented).
"""

from __future__ import annotations

import asyncio
import gc
import resource
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._otel import Toggle

__all__ = ["concurrent_streams", "sequential_turns"]

_TOOLTAP = str(Path(__file__).resolve().parent.parent / "src" / "tooltap")
_TOOLS = [
    {"type": "function", "function": {"name": f"write_note_{i}", "parameters": {}}}
    for i in range(3)
]


def _rss_kib() -> int:
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * resource.getpagesize() // 1024


def _tooltap_bytes(snapshot: tracemalloc.Snapshot) -> int:
    """Bytes still allocated by tooltap's own source files."""
    only = snapshot.filter_traces([tracemalloc.Filter(True, _TOOLTAP + "/*")])
    return sum(stat.size for stat in only.statistics("filename"))


def _conversation(client: Any) -> None:
    """Two turns: the model calls tools (streamed), then answers their results."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Write the notes."}]
    calls: dict[int, dict[str, Any]] = {}
    stream = client.chat.completions.create(
        model="gpt-4o-mini", messages=messages, tools=_TOOLS, stream=True
    )
    for chunk in stream:
        for delta in chunk.choices[0].delta.tool_calls or () if chunk.choices else ():
            call = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
            call["id"] += delta.id or ""
            if delta.function is not None:
                call["name"] += delta.function.name or ""
                call["arguments"] += delta.function.arguments or ""
    messages.append(
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for c in calls.values()
            ],
        }
    )
    messages += [
        {"role": "tool", "tool_call_id": c["id"], "content": "done"} for c in calls.values()
    ]
    final = client.chat.completions.create(
        model="gpt-4o-mini", messages=messages, tools=_TOOLS, stream=True
    )
    for _ in final:
        pass


def sequential_turns(url: str, toggle: Toggle, turns: int) -> dict[str, Any]:
    """RSS and gc objects every tenth of ``turns`` (two per conversation), instrumented.

    ``tracemalloc`` runs over the last four tenths: what tooltap's code holds is compared
    between the end of the third of them and the end of the run. By then the bounded
    memories (1,024 call ids each, one to three ids per conversation) hold only traced
    entries, so their turnover counts as what it is, flat. RSS growth is read from samples
    taken before tracemalloc starts (its own tables are RSS).
    """
    import openai

    from tooltap._telemetry.telemetry import get_telemetry

    client = openai.OpenAI(base_url=url + "/v1", api_key="sk-bench", max_retries=0)
    toggle.instrumented()
    conversations = max(turns // 2, 10)
    step = max(conversations // 10, 1)
    for _ in range(step):  # warm up: imports, pools, caches
        _conversation(client)
    samples: list[dict[str, int]] = []
    traced_from = conversations - 4 * step
    middle: tracemalloc.Snapshot | None = None
    for done in range(1, conversations + 1):
        if done == traced_from + 1:
            gc.collect()
            tracemalloc.start()
        _conversation(client)
        if done % step == 0:
            toggle.tracer_provider.force_flush()  # spans queued for export are not held
            gc.collect()
            if done == traced_from + 3 * step:
                middle = tracemalloc.take_snapshot()
            tel = get_telemetry()
            samples.append(
                {
                    "turns": 2 * done,
                    "rss_kib": _rss_kib(),
                    "gc_objects": len(gc.get_objects()),
                    "open_tool_spans": len(tel.lifecycle) if tel is not None else -1,
                    "traced": done > traced_from,
                }
            )
    toggle.tracer_provider.force_flush()
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    tooltap_held = _tooltap_bytes(after) - (_tooltap_bytes(middle) if middle else 0)
    mine = [tracemalloc.Filter(True, _TOOLTAP + "/*")]
    lines = (
        after.filter_traces(mine).compare_to(middle.filter_traces(mine), "lineno")[:5]
        if middle is not None
        else []
    )
    client.close()
    toggle.bare()
    untraced = [s for s in samples if not s["traced"]]
    half = untraced[len(untraced) // 2 :]
    per_k = 1000 / (half[-1]["turns"] - half[0]["turns"]) if len(half) > 1 else 0.0
    gc_half = samples[len(samples) // 2 :]
    gc_per_k = 1000 / (gc_half[-1]["turns"] - gc_half[0]["turns"]) if len(gc_half) > 1 else 0.0
    return {
        "turns": 2 * conversations,
        "samples": samples,
        "rss_growth_kib_per_1000_turns_second_half": (half[-1]["rss_kib"] - half[0]["rss_kib"])
        * per_k,
        "rss_window_turns": [half[0]["turns"], half[-1]["turns"]],
        "gc_objects_growth_per_1000_turns_second_half": (
            gc_half[-1]["gc_objects"] - gc_half[0]["gc_objects"]
        )
        * gc_per_k,
        "tooltap_bytes_held_after_last_tenth": tooltap_held,
        "tooltap_lines_held_after_last_tenth": [
            f"{stat.traceback[0].filename.rsplit('/src/', 1)[-1]}:{stat.traceback[0].lineno} "
            f"{stat.size_diff:+d} B ({stat.count_diff:+d} blocks)"
            for stat in lines
        ],
    }


async def _hold_streams(url: str, count: int, hold_after: int) -> dict[str, int]:
    """Open ``count`` streams, stop each after ``hold_after`` chunks, measure, then finish."""
    import httpx2

    request = {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "Write the note."}],
        "tools": _TOOLS[:1],
        "stream": True,
    }
    limits = httpx2.Limits(max_connections=None, max_keepalive_connections=0)
    release = asyncio.Event()
    held = 0
    all_held = asyncio.Event()

    def arrived() -> None:
        nonlocal held
        held += 1
        if held == count:
            all_held.set()

    async def one(client: Any) -> int:
        seen = 0
        async with client.stream("POST", "/v1/chat/completions", json=request) as response:
            async for _ in response.aiter_raw():
                seen += 1
                if seen == hold_after:
                    arrived()
                    await release.wait()
        if seen < hold_after:  # a stream shorter than the hold point
            arrived()
        return seen

    async with httpx2.AsyncClient(base_url=url, limits=limits, timeout=120) as client:
        tasks = []
        for start in range(0, count, 100):  # waves under the server's listen backlog
            tasks += [asyncio.create_task(one(client)) for _ in range(min(100, count - start))]
            while held < len(tasks):
                await asyncio.sleep(0.01)
        await all_held.wait()
        gc.collect()
        snapshot = tracemalloc.take_snapshot()
        traced = tracemalloc.get_traced_memory()[0]
        release.set()
        seen = await asyncio.gather(*tasks)
    return {
        "traced_bytes": traced,
        "tooltap_bytes": _tooltap_bytes(snapshot),
        "chunks_per_stream": min(seen),
    }


def concurrent_streams(url: str, toggle: Toggle, count: int, hold_after: int) -> dict[str, Any]:
    """Per open stream: bytes tooltap's code holds, and process bytes tooltap adds."""
    out: dict[str, Any] = {"streams": count, "held_after_chunks": hold_after}
    modes: dict[str, Callable[[], None]] = {"bare": toggle.bare, "tooltap": toggle.instrumented}
    for mode, switch in modes.items():
        switch()
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        result = asyncio.run(_hold_streams(url, count, hold_after))
        tracemalloc.stop()
        out[f"{mode}_bytes_per_open_stream"] = (result["traced_bytes"] - base) / count
        if mode == "tooltap":
            out["tooltap_code_bytes_per_open_stream"] = result["tooltap_bytes"] / count
        out["chunks_per_stream"] = result["chunks_per_stream"]
    toggle.bare()
    out["added_bytes_per_open_stream"] = (
        out["tooltap_bytes_per_open_stream"] - out["bare_bytes_per_open_stream"]
    )
    return out
