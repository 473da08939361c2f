"""The conversation the app says it is in: ``tooltap.conversation("...")``.

Recorded as ``gen_ai.conversation.id`` on the inference and tool spans made inside the
block, and used to keep tool results matched to that conversation's calls. tooltap
never invents one: without the block (or an id the API carries) there is none.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["conversation", "current_conversation"]

current_conversation: ContextVar[str | None] = ContextVar("tooltap_conversation", default=None)


@contextmanager
def conversation(conversation_id: str) -> Iterator[None]:
    """Run the block as part of conversation ``conversation_id`` (threads and tasks
    started inside inherit it as contextvars do)."""
    token = current_conversation.set(str(conversation_id) or None)
    try:
        yield
    finally:
        current_conversation.reset(token)
