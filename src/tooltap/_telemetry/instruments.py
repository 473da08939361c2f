"""The metric instruments (one set, whatever the exporters) and the tool-name cardinality guard.

Counters are tallied by tooltap and reported through observable counters: a synchronous
``Counter.add`` costs the OpenTelemetry SDK ~10 µs (a measurement object, attribute
cleaning and hashing, a locked aggregation), a tally ~1 µs, and the exported series are
the same cumulative monotonic sums. Histograms stay synchronous (they carry exemplars).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from opentelemetry.context import Context
from opentelemetry.metrics import CallbackOptions, Histogram, Meter, Observation

from .._forks import OwnedLock
from . import semconv as sc
from .sanitize import NAME_CHARS, text

__all__ = ["Instruments", "Tally", "ToolNames"]

_Key = frozenset[tuple[str, Any]]
Attributes = Mapping[str, Any]


class Tally:
    """A monotonic counter kept here and observed at each collection.

    One tally per meter and name, for the life of the process: re-instrumenting over
    the same meter continues its totals, as the SDK's own counter would.
    """

    def __init__(self) -> None:
        self._lock = OwnedLock()
        self._totals: dict[_Key, int] = {}

    def add(self, amount: int, attributes: Mapping[str, Any]) -> None:
        """Count ``amount`` (>= 0) for this attribute set."""
        key = frozenset(attributes.items())
        with self._lock:
            self._totals[key] = self._totals.get(key, 0) + amount

    def observe(self, _options: CallbackOptions) -> Iterable[Observation]:
        """The totals so far, one observation per attribute set."""
        with self._lock:
            totals = list(self._totals.items())
        return [Observation(total, dict(key)) for key, total in totals]


_TALLIES: weakref.WeakKeyDictionary[Meter, dict[str, Tally]] = weakref.WeakKeyDictionary()
_TALLIES_LOCK = OwnedLock()


def _tally(meter: Meter, name: str) -> Tally:
    """The meter's tally for ``name``, registering its observable counter the first time."""
    with _TALLIES_LOCK:
        tallies = _TALLIES.setdefault(meter, {})
        tally = tallies.get(name)
        if tally is None:
            tally = tallies[name] = Tally()
            _, unit, description = sc.METRICS[name]
            meter.create_observable_counter(
                name, callbacks=[tally.observe], unit=unit, description=description
            )
    return tally


class Instruments:
    """Every tooltap instrument, created once per ``instrument()`` from one meter.

    Each metric's attribute set is built here, in its recording method, and nowhere else:
    ``operation`` is the operation's own attributes (``gen_ai.operation.name``,
    ``gen_ai.provider.name``, the model, the server), which every inference metric
    carries; every tool metric carries ``gen_ai.operation.name=execute_tool``,
    ``gen_ai.provider.name`` and ``gen_ai.tool.name`` (a declared name, or ``_undeclared``
    / ``_other``).
    """

    __slots__ = (
        "execute_tool_duration",
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

        def counter(name: str) -> Tally:
            return _tally(meter, name)

        durations = tuple(float(b) for b in sc.DURATION_BUCKETS)
        self.operation_duration = histogram(sc.OPERATION_DURATION, durations)
        self.token_usage = histogram(sc.TOKEN_USAGE, tuple(float(b) for b in sc.TOKEN_BUCKETS))
        self.time_to_first_chunk = histogram(sc.TIME_TO_FIRST_CHUNK, durations)
        self.tool_call_duration = histogram(sc.TOOL_CALL_DURATION, durations)
        self.execute_tool_duration = histogram(sc.EXECUTE_TOOL_DURATION, durations)
        self.tool_calls = counter(sc.TOOL_CALLS)
        self.stream_problems = counter(sc.STREAM_PROBLEMS)
        self.tool_results = counter(sc.TOOL_RESULTS)
        self.retries = counter(sc.RETRIES)
        self.provider_errors = counter(sc.PROVIDER_ERRORS)
        self.forced_tool_choice = counter(sc.FORCED_TOOL_CHOICE)
        self.internal_errors = counter(sc.INTERNAL_ERRORS)

    # --- inference metrics: the operation's attributes, plus the metric's own -------------

    def operation(self, duration: float, operation: Attributes, context: Context | None) -> None:
        """``gen_ai.client.operation.duration`` (``operation`` has ``error.type`` if it failed)."""
        self.operation_duration.record(duration, operation, context=context)

    def tokens(self, count: int, kind: str, operation: Attributes, context: Context | None) -> None:
        """``gen_ai.client.token.usage`` of one ``gen_ai.token.type``."""
        self.token_usage.record(count, {**operation, sc.GEN_AI_TOKEN_TYPE: kind}, context=context)

    def first_chunk(self, wait: float, operation: Attributes, context: Context | None) -> None:
        """``gen_ai.client.operation.time_to_first_chunk``."""
        self.time_to_first_chunk.record(wait, operation, context=context)

    def retry(self, error_type: str, operation: Attributes) -> None:
        """``tooltap.retries``, by the failed attempt's ``error.type``."""
        self.retries.add(1, {**operation, sc.ERROR_TYPE: error_type})

    def provider_error(self, error_type: str, retryable: bool, operation: Attributes) -> None:
        """``tooltap.provider.errors``, by ``error.type`` and ``tooltap.retryable``."""
        self.provider_errors.add(
            1, {**operation, sc.ERROR_TYPE: error_type, sc.TOOLTAP_RETRYABLE: retryable}
        )

    def stream_problem(self, kind: str, operation: Attributes) -> None:
        """``tooltap.stream.problems``, by ``tooltap.problem.kind``."""
        self.stream_problems.add(1, {**operation, sc.TOOLTAP_PROBLEM_KIND: kind})

    def forced_choice(self, honored: bool, operation: Attributes) -> None:
        """``tooltap.forced_tool_choice``, by ``tooltap.honored``."""
        self.forced_tool_choice.add(1, {**operation, sc.TOOLTAP_HONORED: honored})

    # --- tool metrics ----------------------------------------------------------------------

    def tool_call(self, count: int, provider: str, tool: str, outcome: str) -> None:
        """``tooltap.tool_calls``, by ``tooltap.outcome`` (delivered, broken or not delivered)."""
        self.tool_calls.add(count, {**_tool(provider, tool), sc.TOOLTAP_OUTCOME: outcome})

    def tool_result(
        self, provider: str, tool: str, result: str, duration: float | None = None
    ) -> None:
        """``tooltap.tool_results`` by ``tooltap.result``; with ``duration``, also
        ``tooltap.tool_call.duration`` (received to answered) with the same attributes."""
        attributes = {**_tool(provider, tool), sc.TOOLTAP_RESULT: result}
        self.tool_results.add(1, attributes)
        if duration is not None:
            self.tool_call_duration.record(duration, attributes)

    def execution(
        self,
        duration: float,
        provider: str,
        tool: str,
        error_type: str | None,
        context: Context | None,
    ) -> None:
        """``gen_ai.execute_tool.duration`` of a handler run (``error.type`` if it failed)."""
        attributes = {**_tool(provider, tool), sc.GEN_AI_TOOL_TYPE: sc.TOOL_TYPE_FUNCTION}
        if error_type is not None:
            attributes[sc.ERROR_TYPE] = error_type
        self.execute_tool_duration.record(duration, attributes, context=context)

    def internal_error(self, component: str) -> None:
        """``tooltap.internal_errors``, by ``tooltap.component``."""
        self.internal_errors.add(1, {sc.TOOLTAP_COMPONENT: component})


def _tool(provider: str, tool: str) -> dict[str, Any]:
    """What every tool metric carries."""
    return {
        sc.GEN_AI_OPERATION_NAME: sc.OPERATION_EXECUTE_TOOL,
        sc.GEN_AI_PROVIDER_NAME: provider,
        sc.GEN_AI_TOOL_NAME: tool,
    }


class ToolNames:
    """Tool names as metric attribute values: declared names only, at most ``cap`` of them.

    A name the request did not declare becomes ``_undeclared``; once ``cap`` distinct
    names have been seen, any new one becomes ``_other``. Spans keep the real name.
    """

    __slots__ = ("_cap", "_lock", "_seen")

    def __init__(self, cap: int) -> None:
        self._cap = cap
        self._seen: dict[str, str] = {}  # name -> its metric value (sanitized once)
        self._lock = OwnedLock()

    def label(self, name: str | None, declared: Mapping[str, object] | None) -> str:
        """The metric value for ``name`` given the request's declared tools (None: unknown)."""
        if not name or declared is None or name not in declared:
            return sc.UNDECLARED_TOOL
        label = self._seen.get(name)
        if label is not None:
            return label
        with self._lock:
            if len(self._seen) >= self._cap:
                return sc.OTHER_TOOL
            label = self._seen[name] = text(name, NAME_CHARS)
        return label
