"""Normalized values shared by every dialect: what a tool call is, what went wrong.

The dialects themselves are in ``dialects.TABLE``."""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any, TypeVar

from .problems import PROBLEM_KINDS, ProblemKind

__all__ = [
    "PROBLEM_KINDS",
    "ErrorClass",
    "Limits",
    "ModelTurn",
    "Parsed",
    "Problem",
    "RequestInfo",
    "ServerCall",
    "ToolCall",
    "ToolResultRef",
    "Usage",
]

_T = TypeVar("_T")


def _fast_init(cls: type[_T]) -> type[_T]:
    """Give a frozen slots dataclass an ``__init__`` that stores each field through its slot
    descriptor: the generated one calls ``object.__setattr__`` per field, several times
    slower, and these values are built for every call and response. Same signature,
    defaults and default factories; instances stay frozen."""
    params, lines = [], []
    scope: dict[str, Any] = {"_MISSING": MISSING}
    for f in fields(cls):  # type: ignore[arg-type]
        scope[f"_set_{f.name}"] = vars(cls)[f.name].__set__
        if f.default is not MISSING:
            scope[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        elif f.default_factory is not MISSING:
            scope[f"_factory_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_MISSING")
            lines.append(f" if {f.name} is _MISSING: {f.name} = _factory_{f.name}()")
        else:
            params.append(f.name)
        lines.append(f" _set_{f.name}(self, {f.name})")
    source = f"def __init__(self, {', '.join(params)}) -> None:\n" + "\n".join(lines)
    exec(source, scope)  # noqa: S102 - built from the class's own field names
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init  # type: ignore[method-assign]
    return cls


@_fast_init
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
    #: The toolset whose member the call names (Anthropic's ``toolset_name``), if any.
    toolset: str | None = None


@_fast_init
@dataclass(frozen=True, slots=True)
class ServerCall:
    """A tool call the provider executed itself (Anthropic ``server_tool_use``...)."""

    name: str
    args: dict[str, Any] = field(hash=False)
    call_id: str | None
    block_type: str
    index: int


@_fast_init
@dataclass(frozen=True, slots=True)
class Problem:
    """Something that kept a call (or a response) from being complete and valid.

    ``received`` carries what did arrive (for example the partial argument text),
    so nothing is lost, and nothing half-received becomes a call.
    """

    kind: ProblemKind
    call_index: int | None = None
    call_id: str | None = None
    detail: str = ""
    name: str | None = None
    received: str | None = None


@_fast_init
@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts as the provider reported them."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None


@_fast_init
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


@_fast_init
@dataclass(frozen=True, slots=True)
class ToolResultRef:
    """A tool result carried by a request (in the tail it reads): which call it answers.

    ``name``, ``call_args``, ``position`` and ``turn`` describe the answered call as the
    request's own history shows it (None when the part read does not carry the call).
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
    #: History index of the model turn holding the answered call.
    turn: int | None = None
    #: The result stands before the request's last model turn (an earlier request may have
    #: carried it already).
    history: bool = False


@_fast_init
@dataclass(frozen=True, slots=True)
class ModelTurn:
    """A model turn in the part of a request's history read: its index and its calls as
    ``(call id, name, arguments)`` (arguments only for a call without an id); a turn
    without calls keeps the start of its text (calls named as text), never recorded."""

    index: int
    calls: tuple[tuple[str | None, str | None, dict[str, Any] | None], ...] = ()
    text: str = ""


@_fast_init
@dataclass(frozen=True, slots=True)
class RequestInfo:
    """What a request declares and carries, as far as tool calls are concerned.

    ``tool_results`` are the results in the tail of the history read: after the last
    model turn, and back to the oldest turn still holding an open call of the conversation.
    ``conversation_id`` and ``previous_response_id``: what the API body says (OpenAI
    Responses ``conversation``, ``previous_response_id``). ``fingerprint``: a hash of what
    every request of the conversation repeats (its first user turn), None without a
    history; ``system_fingerprint``: one of the system prompt (and the items before that
    turn), which tells apart conversations opening alike; ``history_length``: the items
    of that history (a call the response delivers stands at that index or later);
    ``model_turns``: the model turns read. ``retrieved``: the id of the stored response a
    ``GET`` reads back (a poll of a background response, a resumed stream), else None.
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
    fingerprint: int | None = None
    system_fingerprint: int | None = None
    #: Toolset name -> the members it declares (Anthropic toolsets: called by member name).
    toolsets: dict[str, frozenset[str]] = field(default_factory=dict, hash=False)
    history_length: int | None = None
    model_turns: tuple[ModelTurn, ...] = ()
    retrieved: str | None = None


@_fast_init
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
