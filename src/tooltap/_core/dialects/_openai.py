"""Pieces shared by the two OpenAI dialects: a call being received, and what is collected.

``PendingCall`` buffers one call's argument fragments (joined once, when the call is
settled) under ``Limits.max_argument_bytes``. ``Collector`` turns settled calls into
``ToolCall`` values or ``Problem`` values and keeps the response-level facts.
"""

from __future__ import annotations

import re
from typing import Any, Final

from .._json import loads
from ..args import coerce_args, decode_arguments
from ..model import Limits, Parsed, Problem, ToolCall, Usage
from ..sse import SSEEvent
from ._fragments import Fragments

__all__ = [
    "NOT_JSON",
    "PROVIDER",
    "Collector",
    "PendingCall",
    "error_detail",
    "load_event",
    "plain_int",
    "text_or_none",
    "usage_of",
]

#: Provider family of both OpenAI dialects (``ToolCall.provider``).
PROVIDER: Final = "openai"
#: Returned by ``load_event`` for data that is not JSON.
NOT_JSON: Final = object()
_PREVIEW: Final = 256
_DETAIL: Final = 300
#: Key-like tokens that must never reach telemetry, even masked by the provider.
_SECRET: Final = re.compile(r"\b(?:sk|rk|pk|key)-[\w*.-]{6,}|\bBearer\s+\S+", re.IGNORECASE)


def load_event(ev: SSEEvent) -> Any:
    """The event's JSON payload, or ``NOT_JSON``."""
    try:
        return loads(ev.data)
    except (ValueError, RecursionError):
        return NOT_JSON


def plain_int(value: Any) -> int | None:
    """``value`` if it is an int (bools excluded), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def text_or_none(value: Any) -> str | None:
    """``value`` if it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def error_detail(err: Any) -> str:
    """``"code: message"`` for a provider error object (secrets masked, length capped)."""
    if isinstance(err, dict):
        code = err.get("code")
        if code in (None, ""):
            code = err.get("type")
        message = err.get("message")
        parts = [str(code)] if code not in (None, "") else []
        if isinstance(message, str) and message:
            parts.append(message)
        text = ": ".join(parts) or "error"
    elif isinstance(err, str) and err:
        text = err
    else:
        text = "error"
    return _SECRET.sub("[redacted]", text[:_DETAIL])


def usage_of(raw: Any, input_key: str, output_key: str, details_key: str) -> Usage | None:
    """Token counts from an OpenAI usage object (Chat and Responses name them differently)."""
    if not isinstance(raw, dict):
        return None
    details = raw.get(details_key)
    cached = plain_int(details.get("cached_tokens")) if isinstance(details, dict) else None
    return Usage(
        input_tokens=plain_int(raw.get(input_key)),
        output_tokens=plain_int(raw.get(output_key)),
        cache_read_input_tokens=cached,
    )


def _pair_surrogates(text: str) -> str:
    """Rejoin a UTF-16 surrogate pair split across two fragments (``\\ud83d`` + ``\\ude00``)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


class PendingCall:
    """One tool call being received: identity, argument fragments, and its fate.

    Fragments arrive decoded (``add``) or, from a reducer's fast path, still escaped
    (``fragments.add_raw``, which declines near the limit: the fast path then unescapes
    the fragment and calls ``add``), so a call is ``oversized`` exactly when its decoded
    fragments pass ``Limits.max_argument_bytes``.
    """

    __slots__ = (
        "bad",
        "call_id",
        "final_text",
        "finished",
        "fragments",
        "kind",
        "late",
        "name",
        "oversized",
        "pos",
        "truncated",
        "value",
    )

    def __init__(self, call_id: str | None = None, name: str | None = None, kind: str = "function"):
        self.call_id = call_id
        self.name = name
        self.kind = kind  # "function", or the type of a non-function (free-form) tool call
        self.fragments = Fragments()
        self.oversized = False  # fragments stopped being kept at the limit
        self.bad: str | None = None  # why the arguments have the wrong shape
        self.value: Any = NOT_JSON  # an already-decoded arguments value (whole bodies)
        self.final_text: str | None = None  # authoritative text (``.done`` payload, a body)
        self.finished = False
        self.truncated = False  # the response ended before the call did
        self.pos = 0  # ordering key within its response
        self.late = False  # fragments arrived after the call finished (reported once)

    def fork(self, twins: dict[int, PendingCall]) -> PendingCall:
        """An independent copy, once per call: ``twins`` maps the ``id`` of each call
        forked already to its copy (a call several tables hold stays one call)."""
        twin = twins.get(id(self))
        if twin is None:
            twin = twins[id(self)] = PendingCall.__new__(PendingCall)
            twin.call_id, twin.name, twin.kind = self.call_id, self.name, self.kind
            twin.fragments = self.fragments.fork()
            twin.oversized, twin.bad, twin.value = self.oversized, self.bad, self.value
            twin.final_text, twin.finished = self.final_text, self.finished
            twin.truncated, twin.pos, twin.late = self.truncated, self.pos, self.late
        return twin

    @property
    def parts(self) -> list[str | bytearray]:
        """The fragments kept so far (decoded, or runs still escaped)."""
        return self.fragments.parts

    def add(self, fragment: Any, limit: int) -> None:
        """Append one argument fragment; None is nothing, a non-string is a shape error."""
        if isinstance(fragment, str):
            if self.oversized or not fragment:
                return
            fragments = self.fragments
            if fragments.size + len(fragment) > limit:
                fragments.exact()
                if fragments.size + len(fragment) > limit:
                    self.oversized = True
                    return
            fragments.add(fragment)
        elif fragment is not None and self.bad is None:
            self.bad = f"arguments fragment is {type(fragment).__name__}, not a string"

    def text(self) -> str:
        """The argument text: the authoritative one, else the fragments (joined once)."""
        if self.final_text is not None:
            return self.final_text
        return _pair_surrogates(self.fragments.text())

    def adopt(self, name: Any, call_id: Any, text: Any) -> bool:
        """Take a final payload (name, id, whole text); False when the text differs from deltas."""
        self.name = text_or_none(name) or self.name
        self.call_id = text_or_none(call_id) or self.call_id
        if isinstance(text, str):
            differs = bool(self.fragments) and not self.oversized and self.text() != text
            self.final_text = text
            return not differs
        if text is not None and self.bad is None:
            self.bad = f"arguments are {type(text).__name__}, not a string"
        return True


class Collector:
    """Settles calls in response order and builds the final ``Parsed``."""

    __slots__ = (
        "_errors",
        "calls",
        "dialect",
        "finish_reason",
        "limits",
        "model",
        "ordinal",
        "problems",
        "response_id",
        "usage",
    )

    def __init__(self, limits: Limits, dialect: str) -> None:
        self.limits = limits
        self.dialect = dialect
        self.calls: list[ToolCall] = []
        self.problems: list[Problem] = []
        self.ordinal = 0  # position among the response's tool calls, returned or not
        self.response_id: str | None = None
        self.model: str | None = None
        self.usage: Usage | None = None
        self.finish_reason: str | None = None
        self._errors: set[str] = set()

    def fork(self) -> Collector:
        """An independent copy (the calls and problems settled so far are shared values)."""
        twin = Collector.__new__(Collector)
        twin.limits, twin.dialect = self.limits, self.dialect
        twin.calls, twin.problems = self.calls[:], self.problems[:]
        twin.ordinal, twin.response_id, twin.model = self.ordinal, self.response_id, self.model
        twin.usage, twin.finish_reason = self.usage, self.finish_reason
        twin._errors = set(self._errors)
        return twin

    def settle(self, call: PendingCall) -> ToolCall | None:
        """Turn a finished call into a ``ToolCall`` (returned) or a ``Problem`` (recorded)."""
        ordinal = self.ordinal
        self.ordinal += 1
        result = self._judge(call, ordinal)
        if isinstance(result, Problem):
            self.problems.append(result)
            return None
        raw = None if call.value is not NOT_JSON else call.text()
        tc = ToolCall(
            call.name or "",
            result,
            PROVIDER,
            call.call_id,
            len(self.calls),
            raw,
            self.dialect,
        )
        self.calls.append(tc)
        return tc

    def _judge(self, call: PendingCall, ordinal: int) -> dict[str, Any] | Problem:
        name, call_id = call.name, call.call_id
        if call.kind != "function":
            detail = f"{call.kind} tool call: free-form input, not JSON arguments"
            return Problem("unexpected_shape", ordinal, call_id, detail, name, call.text())
        if call.truncated:
            detail = "the response ended before the call's arguments did"
            return Problem("truncated_json", ordinal, call_id, detail, name, call.text())
        if call.bad is not None:
            return Problem("unexpected_shape", ordinal, call_id, call.bad, name, call.text())
        if not name:
            detail = "tool call without a name"
            return Problem("unexpected_shape", ordinal, call_id, detail, name, call.text())
        if call.oversized:
            limit = self.limits.max_argument_bytes
            detail = f"over {limit} characters"
            return Problem(
                "oversized_arguments", ordinal, call_id, detail, name, call.text()[:_PREVIEW]
            )
        if call.value is not NOT_JSON:
            return coerce_args(call.value, index=ordinal, call_id=call_id, name=name)
        return decode_arguments(
            call.text(), limits=self.limits, index=ordinal, call_id=call_id, name=name
        )

    def shape(self, detail: str) -> None:
        """Record an ``unexpected_shape`` problem about the response, not a call."""
        self.problems.append(Problem("unexpected_shape", detail=detail))

    def error(self, err: Any) -> None:
        """Record an ``error_event`` (once per distinct detail)."""
        detail = error_detail(err)
        if detail not in self._errors:
            self._errors.add(detail)
            self.problems.append(Problem("error_event", detail=detail))

    def incomplete(self, reason: str) -> None:
        """Record an ``incomplete_response`` problem (once per response)."""
        if not any(p.kind == "incomplete_response" for p in self.problems):
            self.problems.append(Problem("incomplete_response", detail=reason))

    def meta(self, source: dict[str, Any]) -> None:
        """Take ``id`` and ``model`` from a chunk or response object (first seen wins)."""
        self.response_id = self.response_id or text_or_none(source.get("id"))
        self.model = self.model or text_or_none(source.get("model"))

    def parsed(self, complete: bool) -> Parsed:
        """Everything collected, frozen."""
        return Parsed(
            self.dialect,
            calls=tuple(self.calls),
            problems=tuple(self.problems),
            finish_reason=self.finish_reason,
            response_id=self.response_id,
            model=self.model,
            usage=self.usage,
            complete=complete,
        )
