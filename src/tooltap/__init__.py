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
from ._runner.fallback import ProviderFailure, fallback_message, provider_failure
from ._runner.ledger import Ledger, LedgerEntry, MemoryLedger, SQLiteLedger
from ._runner.outcome import Outcome, TurnResult
from ._runner.policy import RetryPolicy, ToolError
from ._runner.registry import Tool, ToolRegistry
from ._telemetry.conversation import conversation
from ._telemetry.listeners import ToolCallProblem, ToolCallReceived, ToolResultSent
from .instrumentor import TooltapInstrumentor, flush, instrument, uninstrument

__all__ = [
    "DIALECTS",
    "ErrorClass",
    "Ledger",
    "LedgerEntry",
    "Limits",
    "MemoryLedger",
    "Outcome",
    "Parsed",
    "Problem",
    "ProviderFailure",
    "RequestInfo",
    "RetryPolicy",
    "SQLiteLedger",
    "ServerCall",
    "StreamParser",
    "Tool",
    "ToolCall",
    "ToolCallProblem",
    "ToolCallReceived",
    "ToolError",
    "ToolRegistry",
    "ToolResultRef",
    "ToolResultSent",
    "TooltapInstrumentor",
    "TurnResult",
    "Usage",
    "classify_error",
    "classify_problem",
    "conversation",
    "detect_dialect",
    "fallback_message",
    "flush",
    "instrument",
    "parse_request",
    "parse_response",
    "provider_failure",
    "result_message",
    "result_messages",
    "uninstrument",
    "validate",
]
