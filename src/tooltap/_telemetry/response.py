"""What a settled response and its problems put on the inference span and the metrics.

Response attributes and token usage, problem events, replayed calls and whether a forced
``tool_choice`` was honored; the operation decides when each applies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .._core.model import Parsed, Problem, RequestInfo
from . import semconv as sc
from .correlate import OpenCall
from .inference_span import InferenceSpan
from .sanitize import ID_CHARS, NAME_CHARS, Sanitizer, text
from .telemetry import Telemetry

__all__ = ["forced_tool_choice", "problem_event", "replayed", "response_attributes"]


def response_attributes(
    tel: Telemetry, out: InferenceSpan, attributes: Mapping[str, Any], parsed: Parsed
) -> None:
    """Response id, model, finish reason and usage on the span; token usage as metrics."""
    found: dict[str, Any] = {}  # set in one call: one lock, one validation pass
    if parsed.response_id:
        found[sc.GEN_AI_RESPONSE_ID] = text(parsed.response_id, ID_CHARS)
    if parsed.model:
        found[sc.GEN_AI_RESPONSE_MODEL] = text(parsed.model, NAME_CHARS)
    failed = not parsed.complete and any(p.kind == "error_event" for p in parsed.problems)
    if parsed.finish_reason or failed:  # an error that ended the response outranks it
        raw = parsed.finish_reason or ""
        reason = "error" if failed else sc.finish_reason(raw, bool(parsed.calls))
        found[sc.GEN_AI_RESPONSE_FINISH_REASONS] = (text(reason, NAME_CHARS),)
    usage = parsed.usage
    if usage is not None:  # each count as reported; input and output also as metrics
        if (value := usage.input_tokens) is not None:
            found[sc.GEN_AI_USAGE_INPUT_TOKENS] = value
            _tokens(tel, out, attributes, value, "input")
        if (value := usage.output_tokens) is not None:
            found[sc.GEN_AI_USAGE_OUTPUT_TOKENS] = value
            _tokens(tel, out, attributes, value, "output")
        if (value := usage.cache_read_input_tokens) is not None:
            found[sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] = value
        if (value := usage.cache_creation_input_tokens) is not None:
            found[sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] = value
    out.set_own(found)


def _tokens(
    tel: Telemetry, out: InferenceSpan, attributes: Mapping[str, Any], value: int, kind: str
) -> None:
    tel.instruments.tokens(value, kind, attributes, out.context())


def problem_event(tel: Telemetry, out: InferenceSpan, problem: Problem) -> None:
    """The problem as a span event; its detail (it may quote arguments) only under capture."""
    clean = Sanitizer()
    event: dict[str, Any] = {sc.TOOLTAP_PROBLEM_KIND: problem.kind}
    if problem.call_index is not None:
        event[sc.TOOLTAP_TOOL_CALL_INDEX] = problem.call_index
    if problem.call_id is not None:
        event[sc.GEN_AI_TOOL_CALL_ID] = clean.id(problem.call_id)
    if problem.name is not None:
        event[sc.GEN_AI_TOOL_NAME] = clean.name(problem.name)
    if problem.detail and tel.config.capture_any and out.content:
        event[sc.TOOLTAP_PROBLEM_DETAIL] = clean.text(problem.detail)
    out.event(sc.EVENT_PROBLEM, clean.count(event))


def replayed(out: InferenceSpan, opened: Iterable[OpenCall]) -> None:
    """This response's id came before (a cache, a re-sent response): say so per call."""
    for entry in opened:
        clean = Sanitizer()
        attributes: dict[str, Any] = {sc.GEN_AI_TOOL_NAME: clean.name(entry.name)}
        if entry.call_id is not None:
            attributes[sc.GEN_AI_TOOL_CALL_ID] = clean.id(entry.call_id)
        if entry.index >= 0:
            attributes[sc.TOOLTAP_TOOL_CALL_INDEX] = entry.index
        out.event(sc.EVENT_CALL_REPLAYED, clean.count(attributes))


def forced_tool_choice(
    tel: Telemetry,
    attributes: Mapping[str, Any],
    request_info: RequestInfo | None,
    parsed: Parsed,
) -> None:
    """Count whether a response honored the request's forced ``tool_choice``, if it had one."""
    choice = request_info.tool_choice if request_info is not None else None
    if choice is None or not (choice == "any" or choice.startswith("tool:")):
        return
    wanted = choice[5:] if choice.startswith("tool:") else None
    honored = any(wanted is None or c.name == wanted for c in parsed.calls)
    tel.instruments.forced_choice(honored, attributes)
