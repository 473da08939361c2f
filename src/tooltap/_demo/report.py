"""Collect what the demo's telemetry recorded and print it per call id."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TextIO

from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.trace import SpanKind

import tooltap

from .._forks import new_lock
from .._telemetry import semconv as sc


class SpanCollector(SpanProcessor):
    """Keeps every ended span in memory (the demo is short-lived)."""

    def __init__(self) -> None:
        self._lock = new_lock()
        self.spans: list[ReadableSpan] = []

    def on_end(self, span: ReadableSpan) -> None:
        with self._lock:
            self.spans.append(span)

    def ended(self) -> list[ReadableSpan]:
        with self._lock:
            return list(self.spans)


class ProblemCollector:
    """A tooltap listener keeping broken calls and results that answered no open call."""

    def __init__(self) -> None:
        self.problems: list[tooltap.ToolCallProblem] = []
        self.stray_results: list[tooltap.ToolResultSent] = []

    def __call__(self, event: Any) -> None:
        if isinstance(event, tooltap.ToolCallProblem):
            self.problems.append(event)
        elif isinstance(event, tooltap.ToolResultSent) and event.outcome != "ok":
            self.stray_results.append(event)


@dataclass(frozen=True)
class Row:
    scenario: str
    provider: str
    tool: str
    call_id: str
    outcome: str
    turnaround: str


def call_rows(
    spans: Sequence[ReadableSpan],
    problems: Sequence[tooltap.ToolCallProblem],
    scenario_of: Mapping[int, str] | None = None,
) -> list[Row]:
    """One row per tool call id: each ``execute_tool`` span (its result, and the call's
    defect if it had one), then each broken call that got no span (never fully received).

    ``scenario_of``: trace id -> the conversation (root span) it belongs to. A call never
    answered has no turnaround: its span ran until ``flush``, labelled so.
    """
    scenes = scenario_of or {}
    rows = []
    with_span: set[str] = set()
    for span in sorted(spans, key=lambda s: s.start_time or 0):
        attrs = span.attributes or {}
        if attrs.get(sc.GEN_AI_OPERATION_NAME) != sc.OPERATION_EXECUTE_TOOL:
            continue
        seconds = ((span.end_time or 0) - (span.start_time or 0)) / 1e9
        call_id = attrs.get(sc.GEN_AI_TOOL_CALL_ID)
        with_span.add(str(call_id))
        outcome = str(attrs.get(sc.TOOLTAP_RESULT, "?"))
        defect = attrs.get(sc.TOOLTAP_OUTCOME, sc.RESULT_OK)
        elapsed = f"{seconds * 1000:.1f} ms"
        rows.append(
            Row(
                scenes.get(span.context.trace_id, "?"),
                str(attrs.get(sc.GEN_AI_PROVIDER_NAME, "?")),
                str(attrs.get(sc.GEN_AI_TOOL_NAME, "?")),
                str(call_id or "(no id)"),
                outcome if defect == sc.RESULT_OK else f"{outcome} ({defect})",
                f"{elapsed} until flush" if outcome == sc.RESULT_ORPHANED else elapsed,
            )
        )
    # A broken call's provider: its inference span's, else what its dialect tells.
    provider_of_span = {
        s.context.span_id: str(name)
        for s in spans
        if s.context is not None
        and (name := (s.attributes or {}).get(sc.GEN_AI_PROVIDER_NAME)) is not None
    }
    for event in problems:
        p = event.problem
        if p.call_index is None or (p.call_id is not None and p.call_id in with_span):
            continue
        context = event.span_context
        provider = provider_of_span.get(context.span_id) if context is not None else None
        rows.append(
            Row(
                scenes.get(context.trace_id, "?") if context is not None else "?",
                provider or sc.provider_name(event.dialect),
                p.name or "?",
                p.call_id or "(no id)",
                p.kind,
                "not a call",
            )
        )
    return rows


def stream_problems(problems: Sequence[tooltap.ToolCallProblem]) -> list[str]:
    """Response-level problems (truncated stream, error event...), one line each."""
    return [
        f"{e.dialect}: {e.problem.kind} {e.problem.detail[:60]}".rstrip()
        for e in problems
        if e.problem.call_index is None
    ]


#: The demo's output fits this many columns.
WIDTH: Final = 100


def print_table(
    out: TextIO,
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    wrap: Sequence[tuple[int, int]] = (),
    width: int = WIDTH,
) -> None:
    """An aligned text table of at most ``width`` columns: each ``(column, narrowest)`` of
    ``wrap``, in turn, is narrowed (down to ``narrowest``) and its cells wrapped."""
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    excess = sum(widths) + 2 * (len(widths) - 1) - width
    for i, narrowest in wrap:
        cut = min(excess, widths[i] - max(narrowest, len(headers[i])))
        if cut > 0:
            widths[i] -= cut
            excess -= cut

    def lines(cells: Sequence[str]) -> None:
        wrapped = [
            textwrap.wrap(c, w, break_on_hyphens=False) or [""]
            for c, w in zip(cells, widths, strict=True)
        ]
        for n in range(max(len(c) for c in wrapped)):
            parts = [
                (c[n] if n < len(c) else "").ljust(w) for c, w in zip(wrapped, widths, strict=True)
            ]
            print("  ".join(parts).rstrip(), file=out)

    lines(headers)
    print("  ".join("-" * w for w in widths), file=out)
    for row in rows:
        lines(row)


def legend(out: TextIO, entries: Sequence[tuple[str, str]], width: int = WIDTH) -> None:
    """One wrapped line per ``(name, meaning)``, indented under the table."""
    for name, meaning in entries:
        print(
            textwrap.fill(
                f"{name}: {meaning}", width, initial_indent="  ", subsequent_indent="    "
            ),
            file=out,
        )


@dataclass(frozen=True)
class Summary:
    """The run as its exported metrics count it, and its inference spans."""

    operations: int
    failed: int
    retries: int
    inference_spans: int


def summary(reader: InMemoryMetricReader, spans: Sequence[ReadableSpan]) -> Summary:
    """Model calls, failed ones and retries from the metrics the demo exports
    (``gen_ai.client.operation.duration``, ``tooltap.retries``); inference spans from its traces."""
    operations = failed = retries = 0
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            if scope.scope.name != sc.INSTRUMENTATION_NAME:
                continue
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    attrs = point.attributes or {}
                    if metric.name == sc.OPERATION_DURATION:
                        count = int(getattr(point, "count", 0))
                        operations += count
                        failed += count if sc.ERROR_TYPE in attrs else 0
                    elif metric.name == sc.RETRIES:
                        retries += int(getattr(point, "value", 0))
    inference = [
        s
        for s in spans
        if s.kind is SpanKind.CLIENT
        and (s.attributes or {}).get(sc.GEN_AI_OPERATION_NAME) != sc.OPERATION_EXECUTE_TOOL
        and (s.attributes or {}).get(sc.GEN_AI_PROVIDER_NAME)
    ]
    return Summary(operations, failed, retries, len(inference))
