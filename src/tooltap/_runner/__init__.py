"""The harness half of the loop: run normalized tool calls safely and send each result home."""

from .ledger import Claim, Ledger, LedgerEntry, MemoryLedger, SQLiteLedger
from .registry import Tool, ToolRegistry

__all__ = ["Claim", "Ledger", "LedgerEntry", "MemoryLedger", "SQLiteLedger", "Tool", "ToolRegistry"]
