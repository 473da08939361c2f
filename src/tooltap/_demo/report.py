"""Collect what the demo's telemetry recorded and print it per call id."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor

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
                "never a call",
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


def print_table(out: TextIO, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """A plain aligned text table."""
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    print(line, file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)), file=out)


def inference_summary(spans: Sequence[ReadableSpan]) -> tuple[int, int, int]:
    """(inference spans, spans with an error, retries) over the run."""
    inference = [
        s
        for s in spans
        if (s.attributes or {}).get(sc.GEN_AI_OPERATION_NAME) != sc.OPERATION_EXECUTE_TOOL
        and (s.attributes or {}).get(sc.GEN_AI_PROVIDER_NAME)
    ]
    failed = sum(1 for s in inference if (s.attributes or {}).get(sc.ERROR_TYPE))
    retries = 0
    for span in inference:
        resends = (span.attributes or {}).get(sc.HTTP_REQUEST_RESEND_COUNT, 0)
        retries += resends if isinstance(resends, int) else 0
    return len(inference), failed, retries
