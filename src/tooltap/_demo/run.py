"""Run the scripted mix, auto-instrumented, and print what tooltap saw per call id."""

from __future__ import annotations

import contextvars
import os
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TextIO

import tooltap
from tooltap.simulator import Fault, Simulator

from .._telemetry import export
from . import agents, agents_more
from .agents import IncompleteResponse, TextResultsChatAgent, make_registry
from .report import (
    WIDTH,
    ProblemCollector,
    SpanCollector,
    call_rows,
    legend,
    print_table,
    stream_problems,
    summary,
)
from .scenarios import SCENARIOS, Scenario

DEFAULT_PROMETHEUS_PORT = 9464
SERVICE_NAME = "tooltap-demo"
#: What each progress line says, printed before the first.
PROGRESS_LEGEND = (
    "Each line: the scenario, how its conversation ended (answer: the model's final text;"
    " failure: the provider failed and the user saw a local message), its time, and ok"
    " when that is how the scenario should end (UNEXPECTED otherwise)."
)


AGENTS = {**agents.AGENTS, **agents_more.AGENTS}


def _base_url(sim: Simulator, dialect: str) -> str:
    if dialect.startswith("openai"):
        return sim.openai_base_url
    return sim.anthropic_base_url if dialect.startswith("anthropic") else sim.url


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
    sdk = scenario.sdk or scenario.dialect
    kind = TextResultsChatAgent if scenario.text_results else AGENTS[sdk]
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


def _use_otlp(url: str) -> None:
    """``--otlp URL``: the demo's traces and metrics go there, as ``OTEL_*`` would say
    (protocol: grpc on 4317, else http/protobuf, unless ``OTEL_EXPORTER_OTLP_PROTOCOL``).

    The URL is the receiver's base: a signal's path given with it (``/v1/traces``, which
    the exporters append themselves) is dropped."""
    url = url.rstrip("/")
    for path in ("/v1/traces", "/v1/metrics"):
        url = url.removesuffix(path)
    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = url
    grpc = url.endswith(":4317")
    os.environ.setdefault("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc" if grpc else "http/protobuf")


def _name_the_service() -> None:
    """The demo's resource is ``service.name=tooltap-demo`` unless the environment names one."""
    if os.environ.get("OTEL_SERVICE_NAME"):
        return
    if "service.name=" not in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", ""):
        os.environ["OTEL_SERVICE_NAME"] = SERVICE_NAME


def _providers(port: int | None, otlp: str | None) -> tuple[Any, Any, SpanCollector, Any]:
    """tooltap's private export providers (as ``instrument(export=True)`` builds them),
    plus in-memory readers of what they export: spans and metrics."""
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    if otlp:
        _use_otlp(otlp)
    _name_the_service()
    export.check_endpoints()
    reader = InMemoryMetricReader()
    tracer_provider, meter_provider = export.private_providers(
        prometheus_port=port, readers=[reader]
    )
    if not isinstance(tracer_provider, TracerProvider):
        tracer_provider = TracerProvider(resource=Resource.create())
    collector = SpanCollector()
    tracer_provider.add_span_processor(collector)
    return tracer_provider, meter_provider, collector, reader


def run_demo(
    *,
    serve: bool = False,
    port: int | None = None,
    otlp: str | None = None,
    out: TextIO = sys.stdout,
    progress: TextIO = sys.stderr,
) -> int:
    """Run the demo; 0 when every conversation ended as a correct harness should.

    ``otlp``: an OTLP endpoint (``http://127.0.0.1:6006`` for Phoenix) the traces and
    metrics go to, as ``OTEL_EXPORTER_OTLP_ENDPOINT`` would send them.
    """
    if serve and port is None and not os.environ.get(export.PROMETHEUS_PORT_ENV):
        port = DEFAULT_PROMETHEUS_PORT
    tracer_provider, meter_provider, collector, reader = _providers(port, otlp)
    listener = ProblemCollector()
    tooltap.instrument(
        tracer_provider=tracer_provider, meter_provider=meter_provider, listeners=[listener]
    )
    outcomes: list[tuple[str, str, str, str]] = []
    scenario_of: dict[int, str] = {}  # trace id -> scenario: one root span per conversation
    tracer = tracer_provider.get_tracer("tooltap.demo")
    started = time.monotonic()
    print(textwrap.fill(PROGRESS_LEGEND, WIDTH), file=progress)
    try:
        with Simulator() as sim, Simulator(ids="numbered") as numbered:
            sims = {"unique": sim, "numbered": numbered}
            for n, scenario in enumerate(SCENARIOS, 1):
                t0 = time.monotonic()
                print(
                    f"[{n:2d}/{len(SCENARIOS)}] {_short(scenario.label)} ...",
                    end="",
                    flush=True,
                    file=progress,
                )
                with tracer.start_as_current_span(f"conversation {scenario.label}") as root:
                    scenario_of[root.get_span_context().trace_id] = str(n)
                    ended, text = _play(sims[scenario.ids], scenario)
                mark = "ok" if ended == scenario.expect else "UNEXPECTED"
                print(f" {ended} ({time.monotonic() - t0:.1f} s) {mark}", file=progress)
                outcomes.append((scenario.label, scenario.expect, ended, text))
        tooltap.flush()  # calls never answered end now, as orphaned
        elapsed = time.monotonic() - started
        _report(out, outcomes, collector, reader, listener, scenario_of, elapsed)
        _where_next(out, serve)
        if serve:
            _serve_forever(out, port)
    finally:
        tooltap.uninstrument()
        export.shutdown()
    return 0 if all(expect == ended for _, expect, ended, _ in outcomes) else 1


def _short(label: str, width: int = WIDTH - 30) -> str:
    return textwrap.shorten(label, width, placeholder="...")


def _report(
    out: TextIO,
    outcomes: list[tuple[str, str, str, str]],
    collector: SpanCollector,
    reader: Any,
    listener: ProblemCollector,
    scenario_of: dict[int, str],
    elapsed: float,
) -> None:
    spans = collector.ended()
    print("\nConversations", file=out)
    print_table(
        out,
        ("#", "scenario", "expected", "ended", "what the user saw"),
        [(str(n), *o) for n, o in enumerate(outcomes, 1)],
        wrap=((1, 28), (4, 20)),
    )
    legend(out, CONVERSATION_LEGEND)
    print("\nTool calls, per call id", file=out)
    rows = call_rows(spans, listener.problems, scenario_of)
    print_table(
        out,
        ("#", "provider", "tool", "call id", "outcome", "turnaround"),
        [(r.scenario, r.provider, r.tool, r.call_id, r.outcome, r.turnaround) for r in rows],
        wrap=((5, 11), (4, 14), (3, 20)),
    )
    legend(out, CALL_LEGEND)
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
    run = summary(reader, spans)
    line = (
        f"{run.operations} model calls in the exported metrics ({run.failed} failed, "
        f"{run.retries} retries), {run.inference_spans} inference spans in the traces, "
        f"{len(rows)} tool calls, in {elapsed:.1f} s."
    )
    print("\n" + textwrap.fill(line, WIDTH), file=out)


CONVERSATION_LEGEND = (
    ("#", "the scenario's number, as in the progress lines and the tool-call table"),
    ("scenario", "the agent's SDK dialect, and what its conversation meets"),
    ("expected / ended", "answer (the model's final text) or failure (the provider failed)"),
    ("what the user saw", "the final text, or the local message the agent showed [error class]"),
)
CALL_LEGEND = (
    ("#", "the conversation (scenario) the call belongs to: its trace"),
    ("provider, tool", "gen_ai.provider.name, and the tool the model called"),
    ("call id", "the id the model gave the call ((no id): a Google or Ollama call without one)"),
    (
        "outcome",
        "ok (its result went back), error (an error result went back: the call's defect in "
        "brackets), unanswered (the conversation went on without its result), orphaned "
        "(never answered: its span ended at flush), truncated_json "
        "(never fully received, so never a call)",
    ),
    (
        "turnaround",
        "from the call received to its result sent (the tool's run included); until flush: "
        "never answered, so measured to the flush that ended it; not a call: nothing to time",
    ),
)


def _where_next(out: TextIO, serve: bool) -> None:
    print("\nWhere to look next:", file=out)
    address = export.prometheus_address()
    if address:
        print(f"  Prometheus metrics: http://{address[0]}:{address[1]}/metrics", file=out)
    elif not serve:  # with --serve, the endpoint's failure is said next
        print("  Prometheus metrics: run `tooltap demo --serve` and scrape :9464/metrics", file=out)
    endpoint = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    if endpoint:
        print(f"  Traces and metrics exported over OTLP to {endpoint}", file=out)
    else:
        print(
            "  Traces: `tooltap demo --otlp http://127.0.0.1:6006` with Phoenix running\n"
            "    (README, See your first trace), or any OTLP endpoint (Jaeger, Tempo, a collector)",
            file=out,
        )
    print("  Dashboards and alert rules: dashboards/ (see dashboards/README.md)", file=out)


def _serve_forever(out: TextIO, port: int | None) -> None:
    address = export.prometheus_address()
    if address is None:
        wanted = port if port is not None else os.environ.get(export.PROMETHEUS_PORT_ENV)
        print(
            f"\nNo Prometheus endpoint could be started on port {wanted} (in use?): "
            "choose another with `tooltap demo --serve --port N` (0: any free port).",
            file=out,
        )
        return
    print(
        f"\nServing http://{address[0]}:{address[1]}/metrics; Ctrl-C to stop.", file=out, flush=True
    )
    try:
        while True:  # short sleeps: a SIGINT that another thread received is handled soon
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
