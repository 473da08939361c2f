"""tooltap: make the tool calls of LLM agents observable.

``instrument()`` records every tool call of httpx/httpx2, aiohttp and the openai,
anthropic and google-genai SDKs as OpenTelemetry spans and metrics, per call id.
The parsers are in ``tooltap.core``, the harness toolkit in ``tooltap.harness``, the
provider simulator in ``tooltap.simulator``.
"""

from __future__ import annotations

from importlib import metadata as _metadata

from . import core as core
from . import harness as harness
from ._telemetry.config import Config, ConfigError
from ._telemetry.conversation import conversation
from ._telemetry.listeners import ToolCallProblem, ToolCallReceived, ToolResultSent
from .core import Parsed, Problem, ToolCall, ToolResultRef
from .instrumentor import TooltapInstrumentor, flush, instrument, uninstrument

try:
    __version__ = _metadata.version("tooltap")
except _metadata.PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0.0.0"

__all__ = [
    "Config",
    "ConfigError",
    "Parsed",
    "Problem",
    "ToolCall",
    "ToolCallProblem",
    "ToolCallReceived",
    "ToolResultRef",
    "ToolResultSent",
    "TooltapInstrumentor",
    "conversation",
    "flush",
    "instrument",
    "uninstrument",
]
