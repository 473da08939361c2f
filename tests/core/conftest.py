"""The core tests' fixture: a loopback server that keeps what a real client POSTs."""

from __future__ import annotations

from tests.loopback_capture import capture

__all__ = ["capture"]
