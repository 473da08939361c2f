"""The conversation the app says it is in: ``tooltap.conversation("...")``.

Recorded as ``gen_ai.conversation.id`` on the inference and tool spans made inside the
block, and used to keep tool results matched to that conversation's calls. tooltap
never invents one: without the block (or an id the API carries) there is none.

With ``root_span=True`` the block also runs inside one ``conversation`` span (INTERNAL,
with ``gen_ai.conversation.id``) of the provider tooltap records into, so every model
request of the conversation, with its tool spans, is one trace. Without it each request
is a trace of its own unless the app has a span current.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from contextvars import ContextVar
from typing import Final

from opentelemetry.trace import Span, SpanKind, Tracer

from .._quietly import quietly

__all__ = ["ROOT_SPAN_NAME", "conversation", "current_conversation", "use_tracer"]

current_conversation: ContextVar[str | None] = ContextVar("tooltap_conversation", default=None)

ROOT_SPAN_NAME: Final = "conversation"
_CONVERSATION_ID: Final = "gen_ai.conversation.id"
_tracer: Tracer | None = None


def use_tracer(tracer: Tracer | None) -> None:
    """The tracer of root spans: tooltap's while instrumented, else None (no span)."""
    global _tracer
    _tracer = tracer


def _root(conversation_id: str) -> AbstractContextManager[Span] | None:
    tracer = _tracer
    if tracer is None:
        return None
    return tracer.start_as_current_span(
        ROOT_SPAN_NAME, kind=SpanKind.INTERNAL, attributes={_CONVERSATION_ID: conversation_id}
    )


@contextmanager
def conversation(conversation_id: str, *, root_span: bool = False) -> Iterator[None]:
    """Run the block as part of conversation ``conversation_id`` (threads and tasks
    started inside inherit it as contextvars do); ``root_span``: inside one span of its
    own, so the conversation is one trace (an exception leaving the block marks it failed
    and leaves unchanged)."""
    token = current_conversation.set(str(conversation_id) or None)
    try:
        with ExitStack() as stack:
            span = quietly(_root, str(conversation_id)) if root_span else None
            if span is not None:
                quietly(stack.enter_context, span)
            yield
    finally:
        current_conversation.reset(token)
