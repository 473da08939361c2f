"""Google GenAI (Gemini API and Vertex): ``functionCall`` parts of ``GenerateContentResponse``s.

Each SSE event is a whole response; a call normally arrives whole in one chunk and is
emitted with it. Only the first candidate (``index`` 0 or absent) is read. Keys are accepted
in wire camelCase and in the SDK's snake_case. ``ToolCall.index`` counts returned calls
across the stream; ``Problem.call_index`` counts every call attempt (returned or not).

Decisions:
- ``finishReason: MALFORMED_FUNCTION_CALL`` means the model wrote a call Google could not
  parse and did not return: an ``invalid_json`` Problem for the call that would have come
  next, ``received`` = ``finishMessage`` (it quotes the broken call). ``MAX_TOKENS`` adds
  ``incomplete_response``.
- ``args`` given as a string is decoded as JSON text (``invalid_json``/``truncated_json``
  when it is not, ``unexpected_shape`` when it is not an object).
- Vertex ``streamFunctionCallArguments``: a call whose ``functionCall`` carries
  ``partialArgs``/``willContinue: true`` is assembled (see ``_partial``) and emitted when a
  piece without ``willContinue`` (or the finishReason chunk) arrives.
"""

from __future__ import annotations

from typing import Any, Final

from .._json import loads
from ..args import coerce_args, decode_arguments, may_exceed, oversized_value
from ..model import Limits, Parsed, Problem, ToolCall, Usage
from ..sse import SSEEvent
from ._partial_args import PartialCall

__all__ = ["Reducer", "parse_body"]

DIALECT: Final = "google.genai"
PROVIDER: Final = "google"

#: Vertex's integer encoding of ``Candidate.FinishReason`` (``$alt=json;enum-encoding=int``),
#: from google.cloud.aiplatform.v1 ``content.proto``. Unknown numbers stay as digits.
FINISH_REASONS: Final[dict[int, str]] = {
    0: "FINISH_REASON_UNSPECIFIED",
    1: "STOP",
    2: "MAX_TOKENS",
    3: "SAFETY",
    4: "RECITATION",
    5: "OTHER",
    6: "BLOCKLIST",
    7: "PROHIBITED_CONTENT",
    8: "SPII",
    9: "MALFORMED_FUNCTION_CALL",
    10: "MODEL_ARMOR",
    11: "IMAGE_SAFETY",
    12: "IMAGE_PROHIBITED_CONTENT",
    13: "IMAGE_RECITATION",
    14: "IMAGE_OTHER",
    15: "UNEXPECTED_TOOL_CALL",
    16: "NO_IMAGE",
}

#: Wire (camelCase) key -> the SDK's field name, for bodies dumped without aliases.
_SNAKE: Final = {
    "responseId": "response_id",
    "modelVersion": "model_version",
    "usageMetadata": "usage_metadata",
    "promptTokenCount": "prompt_token_count",
    "candidatesTokenCount": "candidates_token_count",
    "cachedContentTokenCount": "cached_content_token_count",
    "functionCall": "function_call",
    "finishReason": "finish_reason",
    "finishMessage": "finish_message",
    "promptFeedback": "prompt_feedback",
    "blockReason": "block_reason",
    "partialArgs": "partial_args",
    "willContinue": "will_continue",
}
_USAGE: Final = (
    ("promptTokenCount", "input_tokens"),
    ("candidatesTokenCount", "output_tokens"),
    ("cachedContentTokenCount", "cache_read_input_tokens"),
)


def _get(obj: dict[str, Any], key: str) -> Any:
    value = obj.get(key)
    return obj.get(_SNAKE[key]) if value is None else value


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _reason(value: Any) -> str | None:
    """A finish or block reason as a name; None when it is neither a string nor a number."""
    if isinstance(value, int) and not isinstance(value, bool):
        return FINISH_REASONS.get(value, str(value))
    return _str(value)


class Reducer:
    """Folds one ``streamGenerateContent?alt=sse`` stream; each event is a whole response."""

    __slots__ = (
        "_attempts",
        "_blocked",
        "_calls",
        "_ended",
        "_finish",
        "_id",
        "_limits",
        "_model",
        "_pending",
        "_problems",
        "_stopped",
        "_usage",
    )

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._calls: list[ToolCall] = []
        self._problems: list[Problem] = []
        self._attempts = 0  # call attempts seen, returned or not
        self._pending: PartialCall | None = None  # a call whose args are still streaming
        self._usage: dict[str, int] = {}
        self._finish: str | None = None
        self._stopped = False  # a chunk carried a finishReason
        self._blocked: str | None = None  # promptFeedback.blockReason: the prompt was refused
        self._id: str | None = None
        self._model: str | None = None
        self._ended = False  # an error object ended the stream

    def event(self, ev: SSEEvent) -> list[ToolCall]:
        """Take one SSE event (one response chunk); return the calls it completes, in order."""
        try:
            data = loads(ev.data)
        except (ValueError, RecursionError) as exc:
            if ev.terminated:  # an unterminated tail is the cut itself: truncated_stream says it
                self._shape(f"event data is not JSON ({exc})")
            return []
        return self._fold(data, measure=may_exceed(len(ev.data), self._limits))

    def take(self, data: Any, *, measure: bool = True) -> list[ToolCall]:
        """One response chunk already decoded (an SDK's): what ``event`` does with it;
        ``measure``: check argument sizes (by default: the encoded length is not known)."""
        return self._fold(data, measure=measure)

    @property
    def ended(self) -> bool:
        """Whether the stream ended as it should (a finishReason or a blocked prompt)."""
        return (self._stopped or self._blocked is not None) and not self._ended

    def finish(self) -> Parsed:
        """Everything learnt; a stream with no finishReason (nor error, nor block) is cut."""
        complete = (self._stopped or self._blocked is not None) and not self._ended
        ended = complete or self._ended
        problems = list(self._problems)
        if self._pending is not None:
            problems.append(self._pending.cut())
        if not ended:
            problems.append(Problem("truncated_stream", detail="no chunk with a finishReason"))
        return self._parsed(problems, complete=complete)

    def whole(self, body: Any, *, measure: bool) -> Parsed:
        """What one whole body holds (a response or an array of them, not a stream: no
        finishReason is not a cut); ``measure``: check argument sizes."""
        self._fold(body, measure=measure)
        problems = list(self._problems)
        if self._pending is not None:
            problems.append(self._pending.cut())
        return self._parsed(problems, complete=not self._ended)

    def _fold(self, data: Any, *, measure: bool) -> list[ToolCall]:
        """One GenerateContentResponse (or a list of them); ``measure``: check args sizes."""
        if isinstance(data, list):
            calls: list[ToolCall] = []
            for item in data:
                calls += self._fold(item, measure=measure)
            return calls
        if not isinstance(data, dict):
            self._shape(f"response is {type(data).__name__}, not an object")
            return []
        if "error" in data:
            self._error(data["error"])
            return []
        response_id, model = _get(data, "responseId"), _get(data, "modelVersion")
        if isinstance(response_id, str):
            self._id = response_id
        if isinstance(model, str):
            self._model = model
        self._take_usage(_get(data, "usageMetadata"))
        feedback = _get(data, "promptFeedback")
        if isinstance(feedback, dict):
            self._blocked = _reason(_get(feedback, "blockReason")) or self._blocked
        candidate = self._candidate(data.get("candidates"))
        if candidate is None:
            return []
        calls = self._parts(candidate.get("content"), measure)
        reason = _get(candidate, "finishReason")
        if reason is not None:
            calls += self._finished(reason, _get(candidate, "finishMessage"))
        return calls

    def _finished(self, value: Any, message: Any) -> list[ToolCall]:
        self._stopped = True
        self._finish = _reason(value)
        if self._finish is None:
            self._shape(f"finishReason is {type(value).__name__}")
        calls = self._close_pending()  # the response is over: so is any streamed call
        if self._finish == "MALFORMED_FUNCTION_CALL":
            self._problems.append(
                Problem(
                    "invalid_json",
                    self._next(),
                    detail="MALFORMED_FUNCTION_CALL",
                    received=message if isinstance(message, str) else "",
                )
            )
        return calls

    def _candidate(self, candidates: Any) -> dict[str, Any] | None:
        if not isinstance(candidates, list):
            if candidates is not None:
                self._shape(f"candidates is {type(candidates).__name__}, not a list")
            return None
        for candidate in candidates:
            if isinstance(candidate, dict) and candidate.get("index") in (None, 0):
                return candidate
        return None

    def _parts(self, content: Any, measure: bool) -> list[ToolCall]:
        parts = content.get("parts") if isinstance(content, dict) else None
        if not isinstance(parts, list):
            if parts is not None or not isinstance(content, (dict, type(None))):
                self._shape("candidate content has no parts list")
            return []
        calls: list[ToolCall] = []
        for part in parts:
            if isinstance(part, dict):
                function_call = _get(part, "functionCall")
                if function_call is not None:
                    calls += self._call(function_call, measure)
        return calls

    def _call(self, function_call: Any, measure: bool) -> list[ToolCall]:
        if not isinstance(function_call, dict):
            detail = f"functionCall is {type(function_call).__name__}, not an object"
            self._problems.append(Problem("unexpected_shape", self._next(), detail=detail))
            return []
        name, call_id = function_call.get("name"), _str(function_call.get("id"))
        partial = _get(function_call, "partialArgs")
        more = _get(function_call, "willContinue") is True
        calls: list[ToolCall] = []
        if self._pending is not None and name:  # a named call starts: the open one is over
            calls += self._close_pending()
        if partial is not None or more or self._pending is not None:
            pending = self._pending
            if pending is None:
                pending = self._pending = PartialCall(self._next(), name, call_id)
            elif pending.call_id is None:
                pending.call_id = call_id
            if partial is not None:
                pending.apply(partial, self._limits.max_argument_bytes)
            return calls if more else calls + self._close_pending()
        if not name and not function_call.get("args"):
            return calls  # an empty functionCall: the end marker of streamed arguments
        index = self._next()
        if not isinstance(name, str) or not name:
            detail = "functionCall without a name"
            self._problems.append(Problem("unexpected_shape", index, call_id, detail))
            return calls
        value = function_call.get("args")
        raw = value if isinstance(value, str) else None
        args: dict[str, Any] | Problem
        limits = self._limits
        if raw is not None:
            args = decode_arguments(raw, limits=limits, index=index, call_id=call_id, name=name)
        else:
            args = coerce_args(value, index=index, call_id=call_id, name=name)
            if measure and not isinstance(args, Problem):
                too_big = oversized_value(
                    args, limits=limits, index=index, call_id=call_id, name=name
                )
                args = too_big or args
        return calls + self._add(name, call_id, args, raw)

    def _close_pending(self) -> list[ToolCall]:
        pending, self._pending = self._pending, None
        if pending is None:
            return []
        result = pending.result(self._limits.max_argument_bytes)
        if isinstance(result, Problem):
            self._problems.append(result)
            return []
        return self._add(result[0], pending.call_id, result[1], None)

    def _add(
        self, name: str, call_id: str | None, args: dict[str, Any] | Problem, raw: str | None
    ) -> list[ToolCall]:
        if isinstance(args, Problem):
            self._problems.append(args)
            return []
        call = ToolCall(name, args, PROVIDER, call_id, len(self._calls), raw, DIALECT)
        self._calls.append(call)
        return [call]

    def _next(self) -> int:
        index = self._attempts
        self._attempts += 1
        return index

    def _take_usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        for key, field in _USAGE:
            value = _get(usage, key)
            if isinstance(value, int) and not isinstance(value, bool):
                self._usage[field] = value

    def _error(self, error: Any) -> None:
        self._ended = True
        status = error.get("status") if isinstance(error, dict) else None
        code = error.get("code") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        if isinstance(status, str) and status:
            detail = status
        else:
            detail = str(code) if isinstance(code, (int, str)) else "error"
        self._problems.append(Problem("error_event", detail=detail, received=_str(message)))

    def _shape(self, detail: str) -> None:
        self._problems.append(Problem("unexpected_shape", detail=detail))

    def _parsed(self, problems: list[Problem], *, complete: bool) -> Parsed:
        if self._finish == "MAX_TOKENS":
            problems.append(Problem("incomplete_response", detail=self._finish))
        return Parsed(
            DIALECT,
            calls=tuple(self._calls),
            problems=tuple(problems),
            finish_reason=self._finish if self._finish is not None else self._blocked,
            response_id=self._id,
            model=self._model,
            usage=Usage(**self._usage) if self._usage else None,
            complete=complete,
        )


def parse_body(body: Any, limits: Limits, *, size: int | None = None) -> Parsed:
    """Parse one whole body: a GenerateContentResponse, or a JSON array of them.

    ``size``: the body's encoded length when known; arguments are then measured against
    ``max_argument_bytes`` only if the body is large enough to hold one that long.
    """
    return Reducer(limits).whole(body, measure=size is None or may_exceed(size, limits))
