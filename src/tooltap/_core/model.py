"""Normalized values shared by every dialect: what a tool call is, what went wrong.

The dialects themselves are in ``dialects.TABLE``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "PROBLEM_KINDS",
    "ErrorClass",
    "Limits",
    "Parsed",
    "Problem",
    "RequestInfo",
    "ServerCall",
    "ToolCall",
    "ToolResultRef",
    "Usage",
]

#: Every ``Problem.kind`` the core can report.
PROBLEM_KINDS: Final = (
    "truncated_stream",  # the stream ended before its terminal event
    "truncated_json",  # a call's arguments stopped mid-JSON
    "invalid_json",  # a call's arguments are complete but not valid JSON
    "error_event",  # the provider sent an error inside the stream or body
    "unexpected_shape",  # an event or body did not have the shape the dialect documents
    "undeclared_tool",  # the model called a tool the request did not declare
    "schema_violation",  # the arguments do not satisfy the declared JSON schema
    "invalid_tool_name",  # the name breaks the providers' rules
    "oversized_event",  # one SSE event exceeded ``Limits.max_event_bytes``
    "oversized_arguments",  # one call's arguments exceeded ``Limits.max_argument_bytes``
    "incomplete_response",  # the provider ended the response early (length, incomplete)
    "stream_buffered",  # a stream arrived in one burst after a long wait (a buffering proxy)
)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One complete, client-side tool call, the same for every provider."""

    name: str
    args: dict[str, Any] = field(hash=False)
    provider: str
    call_id: str | None
    index: int
    raw_arguments: str | None = None
    dialect: str = ""


@dataclass(frozen=True, slots=True)
class ServerCall:
    """A tool call the provider executed itself (Anthropic ``server_tool_use``...)."""

    name: str
    args: dict[str, Any] = field(hash=False)
    call_id: str | None
    block_type: str
    index: int


@dataclass(frozen=True, slots=True)
class Problem:
    """Something that kept a call (or a response) from being complete and valid.

    ``received`` carries what did arrive (for example the partial argument text),
    so nothing is lost, and nothing half-received becomes a call.
    """

    kind: str
    call_index: int | None = None
    call_id: str | None = None
    detail: str = ""
    name: str | None = None
    received: str | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts as the provider reported them."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Parsed:
    """Everything the core learnt from one response."""

    dialect: str
    calls: tuple[ToolCall, ...] = ()
    server_calls: tuple[ServerCall, ...] = ()
    problems: tuple[Problem, ...] = ()
    finish_reason: str | None = None
    response_id: str | None = None
    model: str | None = None
    usage: Usage | None = None
    complete: bool = True


@dataclass(frozen=True, slots=True)
class ToolResultRef:
    """A new tool result carried by a request (after its last model turn): which call it answers.

    ``name``, ``call_args`` and ``position`` describe the answered call as the request's
    own history shows it (None when the request does not carry the call).
    """

    call_id: str | None
    name: str | None
    is_error: bool
    index: int
    #: The arguments of the answered call, as the request's history carries them.
    call_args: dict[str, Any] | None = field(default=None, hash=False)
    #: Where the answered call sits in the request's last model turn.
    position: int | None = None
    #: A hash of the result's content: the same result re-sent has the same digest.
    digest: int = 0


@dataclass(frozen=True, slots=True)
class RequestInfo:
    """What a request declares and carries, as far as tool calls are concerned.

    ``tool_results`` are the results after the last model turn (new); results before it
    are history and are not read. ``conversation_id`` and ``previous_response_id``: what
    the API body says (OpenAI Responses ``conversation``, ``previous_response_id``).
    """

    dialect: str
    model: str | None = None
    stream: bool = False
    tools: dict[str, dict[str, Any]] = field(default_factory=dict, hash=False)
    invalid_tool_names: tuple[str, ...] = ()
    tool_choice: str | None = None
    tool_results: tuple[ToolResultRef, ...] = ()
    problems: tuple[Problem, ...] = ()
    conversation_id: str | None = None
    previous_response_id: str | None = None


@dataclass(frozen=True, slots=True)
class ErrorClass:
    """A provider or stream failure, classed for retry decisions and low-cardinality metrics."""

    error_type: str
    retryable: bool
    retry_after: float | None = None
    status: int | None = None
    hint: str | None = None


@dataclass(frozen=True, slots=True)
class Limits:
    """Memory caps applied to hostile or runaway input."""

    max_event_bytes: int = 8 * 1024 * 1024
    max_argument_bytes: int = 4 * 1024 * 1024
