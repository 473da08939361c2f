"""tooltap: make the tool calls of LLM agents observable."""

from __future__ import annotations

from ._core.detect import detect_dialect
from ._core.errors import classify_error, classify_problem
from ._core.model import (
    DIALECTS,
    ErrorClass,
    Limits,
    Parsed,
    Problem,
    RequestInfo,
    ServerCall,
    ToolCall,
    ToolResultRef,
    Usage,
)
from ._core.request import parse_request
from ._core.results import result_message, result_messages
from ._core.stream import StreamParser, parse_response
from ._core.validate import validate

__all__ = [
    "DIALECTS",
    "ErrorClass",
    "Limits",
    "Parsed",
    "Problem",
    "RequestInfo",
    "ServerCall",
    "StreamParser",
    "ToolCall",
    "ToolResultRef",
    "Usage",
    "classify_error",
    "classify_problem",
    "detect_dialect",
    "parse_request",
    "parse_response",
    "result_message",
    "result_messages",
    "validate",
]
