"""The metric instruments (one set, whatever the exporters) and the tool-name cardinality guard."""

from __future__ import annotations

import threading
from collections.abc import Mapping

from opentelemetry.metrics import Counter, Histogram, Meter

from . import semconv as sc

__all__ = ["Instruments", "ToolNames"]


class Instruments:
    """Every tooltap instrument, created once per ``instrument()`` from one meter."""

    __slots__ = (
        "forced_tool_choice",
        "internal_errors",
        "operation_duration",
        "provider_errors",
        "retries",
        "stream_problems",
        "time_to_first_chunk",
        "token_usage",
        "tool_call_duration",
        "tool_calls",
        "tool_results",
    )

    def __init__(self, meter: Meter) -> None:
        def histogram(name: str, buckets: tuple[float, ...]) -> Histogram:
            _, unit, description = sc.METRICS[name]
            return meter.create_histogram(
                name,
                unit=unit,
                description=description,
                explicit_bucket_boundaries_advisory=list(buckets),
            )

        def counter(name: str) -> Counter:
            _, unit, description = sc.METRICS[name]
            return meter.create_counter(name, unit=unit, description=description)

        durations = tuple(float(b) for b in sc.DURATION_BUCKETS)
        self.operation_duration = histogram(sc.OPERATION_DURATION, durations)
        self.token_usage = histogram(sc.TOKEN_USAGE, tuple(float(b) for b in sc.TOKEN_BUCKETS))
        self.time_to_first_chunk = histogram(sc.TIME_TO_FIRST_CHUNK, durations)
        self.tool_call_duration = histogram(sc.TOOL_CALL_DURATION, durations)
        self.tool_calls = counter(sc.TOOL_CALLS)
        self.stream_problems = counter(sc.STREAM_PROBLEMS)
        self.tool_results = counter(sc.TOOL_RESULTS)
        self.retries = counter(sc.RETRIES)
        self.provider_errors = counter(sc.PROVIDER_ERRORS)
        self.forced_tool_choice = counter(sc.FORCED_TOOL_CHOICE)
        self.internal_errors = counter(sc.INTERNAL_ERRORS)


class ToolNames:
    """Tool names as metric attribute values: declared names only, at most ``cap`` of them.

    A name the request did not declare becomes ``_undeclared``; once ``cap`` distinct
    names have been seen, any new one becomes ``_other``. Spans keep the real name.
    """

    __slots__ = ("_cap", "_lock", "_seen")

    def __init__(self, cap: int) -> None:
        self._cap = cap
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def label(self, name: str | None, declared: Mapping[str, object] | None) -> str:
        """The metric value for ``name`` given the request's declared tools (None: unknown)."""
        if not name or declared is None or name not in declared:
            return sc.UNDECLARED_TOOL
        if name in self._seen:
            return name
        with self._lock:
            if len(self._seen) >= self._cap:
                return sc.OTHER_TOOL
            self._seen.add(name)
        return name
