"""What an SDK item reader raises when the bytes, not the item, must decide."""

from __future__ import annotations

__all__ = ["Declined"]


class Declined(Exception):
    """The item is valid, but only its bytes tell all the reducer needs (no warning)."""
