"""The sans-I/O core: parse LLM requests and responses (whole or streamed) into tool calls.

Nothing here does I/O or records telemetry: bytes or decoded JSON in, ``Parsed`` /
``RequestInfo`` / ``Problem`` out, for the four dialects in ``DIALECTS``.
"""

from __future__ import annotations

from ._core.detect import detect_dialect
from ._core.dialects import DIALECTS
from ._core.errors import classify_error, classify_problem
from ._core.model import (
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
