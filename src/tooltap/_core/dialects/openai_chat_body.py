"""OpenAI Chat Completions: tool calls from a whole ``chat.completion`` body.

What a body holds is read as the streamed chunks are (``openai_chat``): the same legacy
``function_call`` rule, the same ``finish_reason`` problems; a choice without a
``finish_reason`` (an SDK snapshot of a stream that stopped early) is not complete.
"""

from __future__ import annotations

from typing import Any, Final

from ..model import Limits, Parsed, Problem, Usage
from ._openai import Collector, PendingCall, text_or_none, usage_of

__all__ = ["DIALECT", "INCOMPLETE_REASONS", "parse_body"]

DIALECT: Final = "openai.chat"
#: finish_reason values meaning the model was cut off, not done.
INCOMPLETE_REASONS: Final = frozenset({"length", "content_filter"})


def _zero(fc: Any) -> bool:
    """Whether a legacy ``function_call`` (or its delta) is absent: None, or an object whose
    values are all empty (``{"name": "", "arguments": ""}``)."""
    return fc is None or (isinstance(fc, dict) and all(v in (None, "") for v in fc.values()))


def _usage(raw: Any) -> Usage | None:
    return usage_of(raw, "prompt_tokens", "completion_tokens", "prompt_tokens_details")


def parse_body(body: Any, limits: Limits, *, size: int | None = None) -> Parsed:
    """Parse a whole ``chat.completion`` body (or an error body).

    ``size`` (the encoded length) is not needed: arguments arrive as JSON text, measured as such.
    """
    out = Collector(limits, DIALECT)
    if not isinstance(body, dict):
        out.shape(f"body is {type(body).__name__}, not an object")
        return out.parsed(True)
    complete = True
    if body.get("error") is not None:
        out.error(body["error"])
        complete = False
    out.meta(body)
    out.usage = _usage(body.get("usage"))
    choices = body.get("choices")
    if choices is not None and not isinstance(choices, list):
        out.shape(f"choices is {type(choices).__name__}, not a list")
        choices = None
    for pos, choice in enumerate(choices or ()):
        if not isinstance(choice, dict):
            out.shape(f"choice is {type(choice).__name__}, not an object")
            continue
        reason = choice.get("finish_reason")
        if reason is None and complete:
            # No API sends this: it is an SDK snapshot of a stream that stopped early.
            complete = False
            out.problems.append(Problem("truncated_stream", detail="choice without finish_reason"))
        if isinstance(reason, str) and reason:
            if pos == 0:
                out.finish_reason = reason
            if reason in INCOMPLETE_REASONS:
                out.incomplete(reason)
        _body_message(out, choice.get("message"))
    return out.parsed(complete)


def _body_message(out: Collector, message: Any) -> None:
    """Settle the tool calls (and legacy ``function_call``) of one choice's ``message``."""
    if message is None:
        return
    if not isinstance(message, dict):
        out.shape(f"message is {type(message).__name__}, not an object")
        return
    tool_calls = message.get("tool_calls")
    if isinstance(tool_calls, list):
        for tc in tool_calls:
            out.settle(_body_call(tc))
    elif tool_calls is not None:
        out.shape(f"tool_calls is {type(tool_calls).__name__}, not a list")
    legacy = message.get("function_call")
    if not _zero(legacy):
        out.settle(_body_function(PendingCall(), legacy, "function_call"))


def _body_call(tc: Any) -> PendingCall:
    """One ``message.tool_calls[]`` entry as a finished call."""
    if not isinstance(tc, dict):
        call = PendingCall()
        call.bad = f"tool call is {type(tc).__name__}, not an object"
        return call
    call = PendingCall(text_or_none(tc.get("id")))
    kind = tc.get("type")
    if isinstance(kind, str) and kind and kind != "function":
        call.kind = kind
        return _body_function(call, tc.get(kind), kind, "input")
    return _body_function(call, tc.get("function"), "function")


def _body_function(call: PendingCall, fn: Any, what: str, key: str = "arguments") -> PendingCall:
    """Fill ``call`` from a ``{"name", "arguments"}`` object (a string or an object)."""
    call.finished = True
    if not isinstance(fn, dict):
        call.bad = f"{what} is {type(fn).__name__}, not an object"
        return call
    call.name = text_or_none(fn.get("name"))
    args = fn.get(key)
    if isinstance(args, str):
        call.final_text = args
    elif args is not None:
        call.value = args
    return call
