"""tooltap: make the tool calls of LLM agents observable."""

from __future__ import annotations

from ._core.detect import detect_dialect
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
from ._core.stream import StreamParser, parse_response

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
    "detect_dialect",
    "parse_response",
]
