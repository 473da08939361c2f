"""Every kind of ``Problem``, with what follows from it, in one typed table.

``ProblemKind`` names them; ``PROBLEMS`` says of each what it means and how tooltap treats
it: whether it fails the response (its ``error.type``), where it is counted, what becomes
of a call it hits, and the alert that watches it. The sets the layers use are read off
the table (``BROKEN_CALL_KINDS``, ``UNPARSED_KINDS``, ``CALL_OUTCOME_KINDS``), never
written out again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal, get_args

__all__ = [
    "BROKEN_CALL_KINDS",
    "CALL_OUTCOME_KINDS",
    "ERROR_KINDS",
    "PROBLEMS",
    "PROBLEM_KINDS",
    "UNPARSED_KINDS",
    "KindFacts",
    "ProblemKind",
]

ProblemKind = Literal[
    "truncated_stream",
    "truncated_json",
    "invalid_json",
    "error_event",
    "unexpected_shape",
    "undeclared_tool",
    "schema_violation",
    "schema_too_large",
    "invalid_tool_name",
    "oversized_event",
    "oversized_arguments",
    "incomplete_response",
    "stream_buffered",
]


@dataclass(frozen=True, slots=True)
class KindFacts:
    """What one problem kind means, and how it is treated."""

    #: What happened, in a line.
    meaning: str
    #: The response failed with it: it is the operation's ``error.type`` (``classify_problem``).
    error: bool = False
    #: Where it is counted: ``tool_calls`` (``tooltap.outcome`` of the call it concerns),
    #: ``stream_problems`` (``tooltap.problem.kind`` of the response), or ``event`` only (a
    #: ``tooltap.problem`` event on the inference span). A kind about one call that says
    #: which (an index or id) is counted on that call.
    counted: Literal["tool_calls", "stream_problems", "event"] = "stream_problems"
    #: What becomes of a call it hits: ``outcome`` (a delivered call, with this outcome),
    #: ``spanned`` (arrived whole but unusable: no call, but a span with this error),
    #: ``spanless`` (never fully arrived: no span, but its id is owed a result), or None.
    call: Literal["outcome", "spanned", "spanless"] | None = None
    #: The alert of ``dashboards/alerts.yml`` that watches it, if one does.
    alert: str | None = None


_FAILURES: Final = "TooltapToolCallFailureRatioHigh"
_TRUNCATED: Final = "TooltapTruncatedStreams"

PROBLEMS: Final[Mapping[ProblemKind, KindFacts]] = {
    "truncated_stream": KindFacts(
        "the stream ended before its terminal event", error=True, alert=_TRUNCATED
    ),
    "truncated_json": KindFacts(
        "a call's arguments stopped mid-JSON", counted="tool_calls", call="spanless",
        alert=_TRUNCATED,
    ),
    "invalid_json": KindFacts(
        "a call's arguments are complete but not valid JSON", counted="tool_calls",
        call="spanned", alert=_FAILURES,
    ),
    "error_event": KindFacts("the provider sent an error inside the stream or body", error=True),
    "unexpected_shape": KindFacts(
        "an event or body did not have the shape the dialect documents", call="spanned"
    ),
    "undeclared_tool": KindFacts(
        "the model called a tool the request did not declare", counted="tool_calls",
        call="outcome", alert=_FAILURES,
    ),
    "schema_violation": KindFacts(
        "the arguments do not satisfy the declared JSON schema", counted="tool_calls",
        call="outcome", alert=_FAILURES,
    ),
    "schema_too_large": KindFacts(
        "the declared schema is too large to validate (not the call's fault)", counted="event"
    ),
    "invalid_tool_name": KindFacts(
        "the name breaks the providers' rules", counted="tool_calls", call="outcome",
        alert=_FAILURES,
    ),
    "oversized_event": KindFacts("one SSE event exceeded ``Limits.max_event_bytes``"),
    "oversized_arguments": KindFacts(
        "one call's arguments exceeded ``Limits.max_argument_bytes``", counted="tool_calls",
        call="spanned", alert=_FAILURES,
    ),
    "incomplete_response": KindFacts(
        "the provider ended the response early (length, incomplete)"
    ),
    "stream_buffered": KindFacts(
        "a stream arrived in one burst after a long wait (a buffering proxy)",
        alert="TooltapBufferedStreams",
    ),
}  # fmt: skip

#: Every kind, in the table's order.
PROBLEM_KINDS: Final[tuple[ProblemKind, ...]] = get_args(ProblemKind)
#: Kinds that fail the response.
ERROR_KINDS: Final = frozenset(k for k, f in PROBLEMS.items() if f.error)
#: Kinds of a call that arrived whole but unusable: the call gets its span.
BROKEN_CALL_KINDS: Final = frozenset(k for k, f in PROBLEMS.items() if f.call == "spanned")
#: Kinds that leave a call id owed an (error) result: the call was not parsed.
UNPARSED_KINDS: Final = frozenset(
    k for k, f in PROBLEMS.items() if f.call in ("spanned", "spanless")
)
#: Kinds that are a delivered call's outcome, in the table's order (the first found wins).
CALL_OUTCOME_KINDS: Final = tuple(k for k, f in PROBLEMS.items() if f.call == "outcome")
