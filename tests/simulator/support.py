"""Helpers of the simulator tests."""

from __future__ import annotations

import threading


def simulator_threads() -> list[threading.Thread]:
    """The simulator's live threads (accept loop and connections)."""
    return [t for t in threading.enumerate() if t.name.startswith("tooltap-simulator")]
