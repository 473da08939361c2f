"""Run the scripted mix, auto-instrumented, and print what tooltap saw per call id."""

from __future__ import annotations

import contextvars
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TextIO

import tooltap
from tooltap.simulator import Fault, Simulator

from .._telemetry import export
from .agents import AGENTS, IncompleteResponse, TextResultsChatAgent, make_registry
from .report import (
    ProblemCollector,
    SpanCollector,
    call_rows,
    inference_summary,
    print_table,
    stream_problems,
)
from .scenarios import SCENARIOS, Scenario

DEFAULT_PROMETHEUS_PORT = 9464


def _base_url(sim: Simulator, dialect: str) -> str:
    if dialect.startswith("openai"):
        return sim.openai_base_url
    return sim.anthropic_base_url if dialect.startswith("anthropic") else sim.google_base_url


def _play(sim: Simulator, scenario: Scenario) -> tuple[str, str]:
    """Run the scenario's conversations; returns (how the first ended: answer | failure,
    what its user saw), or a failure if any other one ended otherwise."""
    if scenario.fault:
        fault = Fault(scenario.fault, **scenario.params)
        sim.inject(fault, dialect=scenario.dialect, times=scenario.times)
    if scenario.conversations == 1:
        return _converse(sim, scenario)
    contexts = [contextvars.copy_context() for _ in range(scenario.conversations)]
    with ThreadPoolExecutor(scenario.conversations) as pool:  # each in the scenario's trace
        ended: list[tuple[str, str]] = list(
            pool.map(lambda ctx: ctx.run(_converse, sim, scenario), contexts)
        )
    return next((e for e in ended if e[0] != ended[0][0]), ended[0])


def _converse(sim: Simulator, scenario: Scenario) -> tuple[str, str]:
    kind = TextResultsChatAgent if scenario.text_results else AGENTS[scenario.dialect]
    agent = kind(_base_url(sim, scenario.dialect), make_registry(), stream=scenario.stream)
    try:
        text = agent.run(
            abandon=scenario.abandon, duplicate=scenario.duplicate, force_tool=scenario.force_tool
        )
    except IncompleteResponse as exc:
        failure = tooltap.harness.provider_failure("truncated_stream")
        return "failure", f"{failure.user_message} [{exc}]"
    except Exception as exc:  # noqa: BLE001 - an agent shows the user a local message
        failure = tooltap.harness.provider_failure(exc)
        return "failure", f"{failure.user_message} [{failure.error_type}]"
    return "answer", text


def _providers(serve: bool, port: int | None) -> tuple[Any, object, SpanCollector]:
    """tooltap's private export providers (as ``instrument(export=True)`` builds them)."""
    from opentelemetry.sdk.trace import TracerProvider

    if serve and port is None and not os.environ.get(export.PROMETHEUS_PORT_ENV):
        port = DEFAULT_PROMETHEUS_PORT
    export.check_endpoints()
    tracer_provider, meter_provider = export.private_providers(prometheus_port=port)
    if not isinstance(tracer_provider, TracerProvider):
        tracer_provider = TracerProvider()
    collector = SpanCollector()
    tracer_provider.add_span_processor(collector)
    return tracer_provider, meter_provider, collector


def run_demo(
    *,
    serve: bool = False,
    port: int | None = None,
    out: TextIO = sys.stdout,
    progress: TextIO = sys.stderr,
) -> int:
    """Run the demo; 0 when every conversation ended as a correct harness should."""
    tracer_provider, meter_provider, collector = _providers(serve, port)
    listener = ProblemCollector()
    tooltap.instrument(
        tracer_provider=tracer_provider, meter_provider=meter_provider, listeners=[listener]
    )
    outcomes: list[tuple[str, str, str, str]] = []
    scenario_of: dict[int, str] = {}  # trace id -> scenario: one root span per conversation
    tracer = tracer_provider.get_tracer("tooltap.demo")
    started = time.monotonic()
    try:
        with Simulator() as sim, Simulator(ids="numbered") as numbered:
            sims = {"unique": sim, "numbered": numbered}
            for n, scenario in enumerate(SCENARIOS, 1):
                t0 = time.monotonic()
                print(
                    f"[{n:2d}/{len(SCENARIOS)}] {scenario.label} ...",
                    end="",
                    flush=True,
                    file=progress,
                )
                with tracer.start_as_current_span(f"conversation {scenario.label}") as root:
                    scenario_of[root.get_span_context().trace_id] = scenario.label
                    ended, text = _play(sims[scenario.ids], scenario)
                mark = "ok" if ended == scenario.expect else "UNEXPECTED"
                print(f" {ended} ({time.monotonic() - t0:.1f} s) {mark}", file=progress)
                outcomes.append((scenario.label, scenario.expect, ended, text))
        tooltap.flush()  # calls never answered end now, as orphaned
        _report(out, outcomes, collector, listener, scenario_of, time.monotonic() - started)
        if serve:
            _serve_forever(out)
    finally:
        tooltap.uninstrument()
        export.shutdown()
    return 0 if all(expect == ended for _, expect, ended, _ in outcomes) else 1


def _report(
    out: TextIO,
    outcomes: list[tuple[str, str, str, str]],
    collector: SpanCollector,
    listener: ProblemCollector,
    scenario_of: dict[int, str],
    elapsed: float,
) -> None:
    spans = collector.ended()
    print("\nConversations", file=out)
    print_table(
        out,
        ("scenario", "expected", "ended", "what the user saw"),
        [(label, expect, ended, text[:70]) for label, expect, ended, text in outcomes],
    )
    print("\nTool calls, per call id", file=out)
    rows = call_rows(spans, listener.problems, scenario_of)
    print_table(
        out,
        ("scenario", "provider", "tool", "call id", "outcome", "turnaround"),
        [(r.scenario, r.provider, r.tool, r.call_id, r.outcome, r.turnaround) for r in rows],
    )
    problems = stream_problems(listener.problems)
    if problems:
        print("\nResponse problems", file=out)
        for line in problems:
            print(f"  {line}", file=out)
    strays = [r for r in listener.stray_results if r.outcome != "error"]
    if strays:
        print("\nResults that answered no open call", file=out)
        for r in strays:
            print(f"  {r.outcome}: {r.name or '?'} {r.call_id or '(no id)'}", file=out)
    inference, failed, retries = inference_summary(spans)
    print(
        f"\n{inference} inference spans ({failed} failed, {retries} retries), "
        f"{len(rows)} tool calls, in {elapsed:.1f} s.",
        file=out,
    )
    _where_next(out)


def _where_next(out: TextIO) -> None:
    print("\nWhere to look next:", file=out)
    address = export.prometheus_address()
    if address:
        print(f"  Prometheus metrics: http://{address[0]}:{address[1]}/metrics", file=out)
    else:
        print("  Prometheus metrics: run `tooltap demo --serve` and scrape :9464/metrics", file=out)
    endpoint = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    if endpoint:
        print(f"  Traces and metrics exported over OTLP to {endpoint}", file=out)
    else:
        print("  Traces: set OTEL_EXPORTER_OTLP_ENDPOINT (Jaeger, Tempo, a collector)", file=out)
    print("  Dashboards and alert rules: dashboards/ (see dashboards/README.md)", file=out)


def _serve_forever(out: TextIO) -> None:
    address = export.prometheus_address()
    if address is None:
        print("\nNo Prometheus endpoint could be started.", file=out)
        return
    print(
        f"\nServing http://{address[0]}:{address[1]}/metrics; Ctrl-C to stop.", file=out, flush=True
    )
    try:
        while True:  # short sleeps: a SIGINT that another thread received is handled soon
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
