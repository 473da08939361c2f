"""Where a model turn sits in its conversation: the key of calls that have no id."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

__all__ = ["history_position"]

#: Roles of the model's own turns in a request's history (Google, and the others).
_MODEL_ROLES: Final = frozenset({"model", "assistant"})


def history_position(conversation_id: str | None, history: Sequence[Any] | None) -> str | None:
    """The model turn's place: ``<conversation>/<turn index>``, or a digest of the history.

    ``history`` is the request's conversation (contents/messages) that produced the
    response; the turn index is the number of model turns in it. Without a
    conversation id, the history's digest stands for the conversation, so two
    conversations identical up to that turn share the position.
    """
    if history is None:
        return None
    turn = sum(1 for item in history if _role(item) in _MODEL_ROLES)
    if conversation_id is not None:
        return f"{conversation_id}/{turn}"
    canonical = json.dumps([_plain(item) for item in history], sort_keys=True, default=str)
    return f"h{hashlib.sha256(canonical.encode()).hexdigest()[:24]}/{turn}"


def _role(item: Any) -> Any:
    return item.get("role") if isinstance(item, Mapping) else getattr(item, "role", None)


def _plain(item: Any) -> Any:
    """A JSON-able form of one history item (SDK models through ``model_dump``)."""
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        try:
            return dump(exclude_none=True, mode="json")
        except Exception:  # noqa: BLE001 - fall back to its text
            return str(item)
    return item
