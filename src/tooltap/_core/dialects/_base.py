"""The shape of a dialect: a ``Dialect`` entry of the table, and its stream reducer."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from ..model import Limits, Parsed, Problem, RequestInfo, ToolCall, Usage
from ..sse import SSEEvent
from ._content import Message, Part
from ._request import DeclaredTool, Reader

__all__ = [
    "STAINLESS_RETRY_COUNT",
    "BodyParser",
    "DeclaredTool",
    "Dialect",
    "Reducer",
    "always",
    "any_body",
    "cut_call",
    "no_retrieve",
    "parsed",
    "unchanged",
]

#: The attempt number the Stainless-generated SDKs (openai, anthropic) send on each try.
STAINLESS_RETRY_COUNT: Final = "x-stainless-retry-count"
#: How much of an oversized argument text a problem keeps.
PREVIEW: Final = 256


class Reducer(Protocol):
    """Folds one response's SSE events into tool calls (one instance per response).

    A reducer may also have ``fast(chunk) -> bool``: apply a chunk that is exactly one whole
    event (LF line ends, one blank line at its end, no CR) whose effect is certain from its
    bytes (see ``StreamParser``), or return False, unchanged, for any other chunk.

    And ``fork() -> Reducer``: an independent copy of what it learnt so far, which a
    parser of the rest of the stream's bytes may take on (``StreamParser(reducer=...)``).
    """

    def __init__(self, limits: Limits) -> None: ...

    def event(self, ev: SSEEvent) -> list[ToolCall]:
        """Take one event; return the calls it completes, in order."""
        ...

    def finish(self) -> Parsed:
        """End of stream: everything learnt, with problems for what stayed incomplete."""
        ...


def cut_call(
    ordinal: int, call_id: str | None, name: Any, text: str, *, big: bool, inside: str
) -> Problem:
    """A call the stream ended inside (``inside``: "block", "call"): ``truncated_json``
    with the text that came, or ``oversized_arguments`` with a preview of it."""
    return Problem(
        "oversized_arguments" if big else "truncated_json",
        ordinal,
        call_id,
        f"stream ended inside the {inside}",
        name if isinstance(name, str) else None,
        text[:PREVIEW] if big else text,
    )


def parsed(
    dialect: str,
    calls: Sequence[ToolCall],
    problems: list[Problem],
    *,
    finish: str | None,
    incomplete: frozenset[str],
    usage: Mapping[str, int],
    complete: bool,
    **facts: Any,
) -> Parsed:
    """A reducer's ``Parsed``: a finish reason in ``incomplete`` adds
    ``incomplete_response``; ``facts``: the dialect's other fields (``response_id``...)."""
    if finish in incomplete:
        problems.append(Problem("incomplete_response", detail=finish or ""))
    return Parsed(
        dialect,
        calls=tuple(calls),
        problems=tuple(problems),
        finish_reason=finish,
        usage=Usage(**usage) if usage else None,
        complete=complete,
        **facts,
    )


class BodyParser(Protocol):
    """Parse one whole, decoded JSON body (a Mapping, or a list for Google arrays).

    ``size``: the body's encoded length, when it was decoded from bytes.
    """

    def __call__(self, body: Any, limits: Limits, *, size: int | None = None) -> Parsed: ...


def any_body(path: str, body: bytes) -> bool:
    """``claims_body`` of a dialect whose ``body_keys`` are enough on every path."""
    return True


def no_retrieve(path: str) -> str | None:
    """``retrieves`` of a dialect that has no stored responses to read back."""
    return None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Dialect:
    """Everything tooltap knows of one wire dialect; every field is required and pure.

    Each dialect's request module declares its entry (``ENTRY``); the package's ``TABLE``
    lists them.
    """

    #: ``Parsed.dialect`` / ``ToolCall.dialect`` (``openai.chat``...).
    name: str
    #: Provider family: ``ToolCall.provider``.
    provider: str
    #: Request paths (query and trailing ``/`` removed) of this dialect end with one of these.
    path_suffixes: tuple[str, ...]
    #: Whether a path ending in one of ``path_suffixes`` is this dialect's after all.
    claims_path: Callable[[str], bool]
    #: Keys every request body holds (any one of each group), for ``plausible_request``.
    body_keys: tuple[tuple[bytes, ...], ...]
    #: Whether ``"stream": true`` in the body asks for a stream (else the path tells).
    body_streams: bool
    #: Reads declared tools, ``tool_choice`` and new tool results into a ``Reader``.
    read_request: Callable[[Reader, Mapping[str, Any]], None]
    #: What the request path adds to a ``RequestInfo`` (Google: the model, streaming).
    from_path: Callable[[RequestInfo, str], RequestInfo]
    #: Folds a streamed response into calls.
    reducer: type[Reducer]
    #: Parses a whole response body.
    parse_body: BodyParser
    #: The item answering ``(call, output, is_error)``.
    result_message: Callable[[ToolCall, Any, bool], dict[str, Any]]
    #: Result items of one turn as the messages to append.
    result_messages: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
    #: The request's ``tools`` value declaring these tools.
    declarations: Callable[[Sequence[DeclaredTool]], list[dict[str, Any]]]
    #: A request body's messages as semconv ``[{role, parts}]``.
    input_messages: Callable[[Mapping[str, Any]], list[Message]]
    #: The text and reasoning parts of a whole response body.
    output_text: Callable[[Mapping[str, Any]], list[Part]]
    #: A stream's event payloads as the whole body that would carry its text (or None).
    streamed_body: Callable[[Sequence[Mapping[str, Any]]], dict[str, Any] | None]
    #: The request's declared function tools as ``gen_ai.tool.definitions`` items.
    tool_definitions: Callable[[Mapping[str, Any]], list[dict[str, Any] | None]]
    #: ``gen_ai.request.<suffix>`` -> where the body keeps it (key paths, first found).
    request_params: Mapping[str, tuple[tuple[str, ...], ...]]
    #: ``gen_ai.provider.name`` given the request's host and path (either may be None).
    provider_name: Callable[[str | None, str | None], str]
    #: ``gen_ai.operation.name``.
    operation_name: str
    #: ``gen_ai.provider.name`` when neither host nor path tells the backend (a later
    #: attempt's URL may), or None when ``provider_name`` always knows.
    provider_untold: str | None
    #: The tool-name rule the provider documents (a full match is valid).
    tool_name_rule: re.Pattern[str]
    #: Lower-cased finish reasons -> the semconv vocabulary (``tool_call``, ``stop``,
    #: ``length``, ``content_filter``, ``error``); a reason not listed passes through.
    finish_reasons: Mapping[str, str]
    #: Lower-cased error ``type`` / ``code`` / ``status`` tokens of its error bodies ->
    #: ``error_type`` (``_core.errors.ERROR_TYPES``).
    error_tokens: Mapping[str, str]
    #: The request header giving the SDK's attempt number (resends), or None.
    retry_count_header: str | None
    #: Whether a body sent to ``path`` is this dialect's, beyond ``body_keys`` (a path
    #: several model families share: Bedrock's ``/invoke``), for ``plausible_request``.
    claims_body: Callable[[str, bytes], bool]
    #: The id of the stored response a ``GET`` of this path reads back (OpenAI Responses'
    #: ``/responses/{id}``: polls of a background response, resumed streams), or None.
    retrieves: Callable[[str], str | None]


def always(path: str) -> bool:
    """``claims_path`` of a dialect whose path suffixes are enough."""
    return True


def unchanged(info: RequestInfo, path: str) -> RequestInfo:
    """``from_path`` of a dialect whose path adds nothing."""
    return info
