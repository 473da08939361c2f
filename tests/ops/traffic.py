"""Real traffic for the ops tests: the example agents, instrumented, against the simulator.

    python tests/ops/traffic.py --mix faults|healthy [--prometheus-port N] [--hold] [--pace S]

Instruments with ``tooltap.instrument(export=True)`` (exporters from env, plus the Prometheus
endpoint when a port is given), starts the simulator on 127.0.0.1, runs the mix through
the agents in ``examples/agents`` (each SDK, streamed and not), then ``tooltap.flush()``
(open calls end as orphaned). Prints one JSON line ``{"done": ...}``; with ``--hold`` it
then keeps serving ``/metrics`` until stdin closes.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anthropic
import openai
from google import genai
from google.genai import types as gtypes

import tooltap
from tooltap._telemetry import export
from tooltap.simulator import Fault, Simulator

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "agents"))  # scripts, not a package
anthropic_agent = importlib.import_module("anthropic_agent")
google_agent = importlib.import_module("google_agent")
openai_agent = importlib.import_module("openai_agent")

QUESTION = "How tall am I and how much do I weigh?"
PACE = 0.25  # seconds between conversations: the run spans several 1 s scrapes
BUFFERED_WAIT = 0.3


class Clients:
    """One client per SDK, retrying like production code does (fast backoff here)."""

    def __init__(self, sim: Simulator) -> None:
        self.openai = openai.OpenAI(
            base_url=sim.openai_base_url, api_key="sk-test", max_retries=2, timeout=10
        )
        self.openai_patient = self.openai.with_options(max_retries=4)
        self.anthropic = anthropic.Anthropic(
            base_url=sim.anthropic_base_url, api_key="sk-ant-test", max_retries=2, timeout=10
        )
        retry = gtypes.HttpRetryOptions(attempts=3, initial_delay=0.05, max_delay=0.1)
        self.google = genai.Client(
            api_key="test-key",
            http_options=gtypes.HttpOptions(
                base_url=sim.google_base_url, timeout=10_000, retry_options=retry
            ),
        )


Step = Callable[[Clients], object]
T = TypeVar("T")


def chat(stream: bool | int, **request: Any) -> Step:
    return lambda c: openai_agent.run(c.openai, QUESTION, stream=bool(stream), **request)


def storm(stream: int) -> Step:
    return lambda c: openai_agent.run(c.openai_patient, QUESTION, stream=bool(stream))


def claude(stream: bool, **request: Any) -> Step:
    return lambda c: anthropic_agent.run(c.anthropic, QUESTION, stream=stream, **request)


def gemini(stream: bool, **request: Any) -> Step:
    return lambda c: google_agent.run(c.google, QUESTION, stream=stream, **request)


def duplicate_result(c: Clients) -> None:
    """Answer one call twice in the same request: a duplicate (repeated side effect)."""
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    tools = openai_agent.TOOLS
    first = c.openai.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools)
    message = first.choices[0].message
    messages.append(message.model_dump(exclude_none=True))
    for call in message.tool_calls or []:
        result = openai_agent.call_tool(call.function.name, call.function.arguments)
        messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    messages.append(dict(messages[-1]))
    c.openai.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools)


def text_results(c: Clients) -> None:
    """Send the calls' results back as text (smolagents' ``Observation: ...``): unanswered."""
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    tools = openai_agent.TOOLS
    first = c.openai.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools)
    calls = first.choices[0].message.tool_calls or []
    named = [(call.id, call.function.name, call.function.arguments) for call in calls]
    messages.append({"role": "assistant", "content": f"Calling tools: {named}"})
    observed = [openai_agent.call_tool(name, arguments) for _, name, arguments in named]
    messages.append({"role": "user", "content": f"Observation: {observed}"})
    c.openai.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools,
                                     tool_choice="none")  # fmt: skip


HEALTHY: list[tuple[str | None, Fault | None, int, Step]] = [
    (None, None, 1, chat(False)),
    (None, None, 1, chat(True)),
    (None, None, 1, claude(False)),
    (None, None, 1, claude(True)),
    (None, None, 1, gemini(False)),
    (None, None, 1, gemini(True)),
    (None, None, 1, chat(False, tool_choice="required")),
    (None, None, 1, claude(True, tool_choice={"type": "any"})),
]

STORM = [  # four rate-limited attempts per conversation, then served: a retry storm
    ("openai.chat", Fault("rate_limit", retry_after=0.05), 4, storm(s)) for s in (0, 1) * 6
]
BUFFERED = [  # a proxy that buffers streams: each arrives in one burst after a wait
    ("openai.chat", Fault("buffered", seconds=0.5), 1, chat(True)) for _ in range(3)
]
BAD_CALLS = [  # unusable tool calls, spread over the run so their rate is seen
    *[("openai.chat", Fault("invalid_json_args"), 1, chat(s)) for s in (0, 1) * 2],
    *[("openai.chat", Fault("truncate_args"), 1, chat(True)) for _ in range(2)],
    *[("anthropic", Fault("truncate_args"), 1, claude(True)) for _ in range(3)],
    *[("google", Fault("invalid_json_args"), 1, gemini(s)) for s in (0, 1)],
    ("openai.chat", Fault("ignore_tool_choice"), 1, chat(True, tool_choice="required")),
]
OTHER = [
    ("anthropic", Fault("rate_limit", retry_after=0.05), 2, claude(True)),
    ("anthropic", Fault("overloaded"), 1, claude(False)),
    ("google", Fault("server_error", status=503), 1, gemini(False)),
    # broken streams
    ("openai.chat", Fault("truncate_bytes", at=400), 1, chat(True)),
    ("anthropic", Fault("truncate_bytes", at=500), 1, claude(True)),
    ("anthropic", Fault("error_event"), 1, claude(True)),
    # no money left: not retryable
    ("openai.chat", Fault("insufficient_balance"), 1, chat(False)),
    ("anthropic", Fault("insufficient_balance"), 1, claude(False)),
    # a forced tool_choice the "model" ignores
    ("openai.chat", Fault("ignore_tool_choice"), 1, chat(False, tool_choice="required")),
    ("anthropic", Fault("ignore_tool_choice"), 1, claude(False, tool_choice={"type": "any"})),
    # calls never answered (orphaned at flush) and a result sent twice
    (None, None, 1, chat(False, max_turns=1)),
    (None, None, 1, claude(True, max_turns=1)),
    (None, None, 1, duplicate_result),
    # results sent back as text: the calls end unanswered
    (None, None, 1, text_results),
]


def interleave(*groups: list[T]) -> list[T]:
    """Round-robin over ``groups``, so every kind of fault recurs through the run."""
    out: list[T] = []
    for i in range(max(len(g) for g in groups)):
        out += [g[i] for g in groups if i < len(g)]
    return out


FAULTS = interleave(STORM, BAD_CALLS, OTHER, HEALTHY, BUFFERED)


def run(mix: str, sim: Simulator, pace: float) -> dict[str, int]:
    clients = Clients(sim)
    failed = 0
    steps = FAULTS if mix == "faults" else HEALTHY * 2
    for dialect, fault, times, step in steps:
        sim.reset()
        if fault is not None:
            sim.inject(fault, dialect=dialect, times=times)
        time.sleep(pace)
        try:
            step(clients)
        except Exception as exc:  # noqa: BLE001 - the agent sees the fault, as expected
            failed += 1
            print(f"step failed: {type(exc).__name__}: {exc}", file=sys.stderr)
    return {"steps": len(steps), "failed": failed}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mix", choices=("faults", "healthy"), required=True)
    parser.add_argument("--prometheus-port", type=int)
    parser.add_argument("--hold", action="store_true")
    parser.add_argument("--pace", type=float, default=PACE)
    options = parser.parse_args()
    tooltap.instrument(
        export=True,
        prometheus_port=options.prometheus_port,
        stream_buffered_wait=BUFFERED_WAIT,  # the buffered fault waits 0.5 s, not minutes
    )
    with Simulator() as sim:
        summary = run(options.mix, sim, options.pace)
    tooltap.flush()
    print(json.dumps({"done": summary, "prometheus": export.prometheus_address()}), flush=True)
    if options.hold:
        sys.stdin.read()


if __name__ == "__main__":
    main()
