"""The harness toolkit: run the tool calls a model asked for, once each, with retries and ledgers.

``ToolRegistry`` runs a ``Parsed`` turn's calls (validated against the tools' schemas,
retried per ``RetryPolicy``, recorded in a ``Ledger`` so a replayed call id does not
run twice) and returns a ``TurnResult``; ``provider_failure`` / ``fallback_message``
turn a failed provider call into words for the user.
"""

from __future__ import annotations

from ._runner.fallback import ProviderFailure, fallback_message, provider_failure
from ._runner.ledger import Claim, Ledger, LedgerEntry, MemoryLedger, SQLiteLedger
from ._runner.outcome import Outcome, TurnResult
from ._runner.policy import RetryPolicy, ToolError
from ._runner.registry import ToolRegistry
from ._runner.tool import Tool

__all__ = [
    "Claim",
    "Ledger",
    "LedgerEntry",
    "MemoryLedger",
    "Outcome",
    "ProviderFailure",
    "RetryPolicy",
    "SQLiteLedger",
    "Tool",
    "ToolError",
    "ToolRegistry",
    "TurnResult",
    "fallback_message",
    "provider_failure",
]
