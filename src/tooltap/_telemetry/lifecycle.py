"""One ``execute_tool`` span per delivered tool call, from the call received to its result sent.

The wire tap opens the span when ``StreamParser.feed`` (or a whole-body parse)
returns the call, as a child of the inference span that received it, and ends it
when a later request carries the call's result (that request's inference span
links to it). Results: ``ok``, ``error`` (``is_error``: ``error.type=tool_error``),
``orphaned`` (never answered within ``orphan_timeout``, or open at flush/shutdown),
``not_delivered`` (the SDK raised on the response that carried it), ``duplicate`` and
``unknown_call`` (counted only).

Every delivered call opens its span: a response is a new delivery, whatever ids and
arguments earlier ones had. A response whose id came before (a cache, a re-sent
response) is still accounted, and its inference span gets a
``tooltap.tool_call.replayed`` event per call. Which results are new is decided per
request: the ones after its last model turn (``RequestInfo.tool_results``). Each is
matched to an open call with what the request says about the call it answers
(``correlate``). The same result re-sent (a whole request retried) counts nothing;
a different result for an answered call, or two results for one call in one
request, is a ``duplicate`` (an event on the inference span).

Broken calls keep their lifecycle. A call whose arguments arrived whole but unusable
(``invalid_json``, ``unexpected_shape``, ``oversized_arguments``, with an id) gets its
span, ``error.type`` = the problem kind and ERROR status whatever the result, so the
error result a harness sends under its id ends it as ``error``. A ``truncated_json``
call never fully arrived: no span, but it is open (spanless) so that a result for it
counts as ``ok``/``error``, not ``unknown_call``; it expires silently. Listeners get no
``ToolCallReceived`` for a broken call (it is not a call to run).

While an agent framework that traces its own tools into the same provider is at work,
the span is pending (``adoption``, ``pending_span``): a framework's span for the call
may be adopted instead.

How calls end (results matched, or orphaned, unanswered, not delivered): ``lifecycle_ends``.

A forked child starts with empty tables and a fresh lock. A retired lifecycle (its
``Telemetry`` uninstrumented) ends at once, as orphaned, every call that still reaches it
(a response tapped just before ``uninstrument()``): nothing is left open in it.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Final

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, Tracer

from .._core.dialects import provider_of
from .._core.model import Problem, ToolCall
from .._core.problems import BROKEN_CALL_KINDS
from .._forks import OwnedLock, in_child
from . import semconv as sc
from .adoption import Adoption, start_tool_span
from .callids import Bounded, call_key
from .config import Config
from .conversation import current_conversation
from .correlate import Answered, OpenCall, OpenCalls, Scope, Wanted
from .instruments import Instruments, ToolNames
from .lifecycle_ends import CallEnds
from .listeners import Listeners, ToolCallReceived
from .pending_span import context_of
from .sanitize import Sanitizer

__all__ = ["Lifecycle", "OpenCall"]

_CONVERSATION_CHARS: Final = 256

#: A response's conversation, calls' scope, turn and system prompt fingerprint.
_Response = tuple[str, Scope, int | None, int | None]
#: Marks a stored response whose token usage was reported.
_USAGE: Final = object()

_lifecycles: weakref.WeakSet[Lifecycle] = weakref.WeakSet()


class Lifecycle(CallEnds):
    """The open-call table and the answered memory; thread-safe."""

    def __init__(
        self,
        *,
        tracer: Tracer,
        instruments: Instruments,
        listeners: Listeners,
        tool_names: ToolNames,
        config: Config,
    ) -> None:
        self._tracer = tracer
        self._instruments = instruments
        self._listeners = listeners
        self._tool_names = tool_names
        self._content = config.content_on_span
        self._orphan_timeout = config.orphan_timeout
        self._limits = (config.max_open_calls, config.max_open_bytes, config.call_id_memory)
        self._adopt_setting = config.adopt_tool_spans
        self._retired = False
        self._reset()
        _lifecycles.add(self)

    def _reset(self) -> None:
        count, size, memory = self._limits
        self._lock = OwnedLock()
        #: Whether a framework's tool span may become a call's span (``foreign_tool_span``).
        self.adoption = Adoption(self._adopt_setting)
        self._open = OpenCalls(count, size)
        self._answered = Answered(memory)
        self._ending = {}
        # response id -> its conversation ("" if none), its calls' scope (chains of
        # previous_response_id), turn and system prompt fingerprint (reading it back)
        self._responses: Bounded[str, _Response] = Bounded(memory)
        # response id -> the calls of it opened so far (call id, else index) and whether its
        # usage was reported: a response read back (polled, its stream resumed) opens each
        # of its calls once
        self._delivered: Bounded[str, set[object]] = Bounded(memory)

    def __len__(self) -> int:
        return len(self._open)

    # --- calls -----------------------------------------------------------------------------

    def received(
        self,
        call: ToolCall,
        *,
        parent: Span | None,
        provider: str,
        label: str,
        outcome: str = sc.RESULT_OK,
        broken: bool = False,
        conversation: str | None = None,
        context: Context | None = None,
        scope: Scope = None,
        turn: int | None = None,
        output: bool = False,
        system: int | None = None,
    ) -> OpenCall:
        """Open the span of a call that was fully received (``outcome``: ok or the problem).

        ``broken``: ``outcome`` is a problem that kept the arguments from being used
        (``call`` is then a stand-in: no args, ``raw_arguments`` what arrived).
        ``context``: one with ``parent`` current, when the caller has it already.
        ``scope``: the conversation results are matched in (``conversation`` if None);
        ``turn``: the history index the call's model turn will stand at (or later).
        ``output``: an output tool, ended ``output`` where it would be orphaned or
        unanswered. ``system``: the request's system prompt fingerprint.
        """
        ctx = context
        if ctx is None and parent is not None:
            ctx = trace.set_span_in_context(parent)
        clean = Sanitizer()
        name = clean.name(call.name)
        attributes: dict[str, Any] = {
            sc.GEN_AI_OPERATION_NAME: sc.OPERATION_EXECUTE_TOOL,
            sc.GEN_AI_TOOL_NAME: name,
            sc.GEN_AI_TOOL_TYPE: sc.TOOL_TYPE_FUNCTION,
            sc.GEN_AI_PROVIDER_NAME: provider,
            sc.TOOLTAP_OUTCOME: outcome,
        }
        if call.index >= 0:
            attributes[sc.TOOLTAP_TOOL_CALL_INDEX] = call.index
        if call.call_id is not None:
            attributes[sc.GEN_AI_TOOL_CALL_ID] = clean.id(call.call_id)
        if conversation is not None:
            attributes[sc.GEN_AI_CONVERSATION_ID] = clean.id(conversation)
        if broken:
            attributes[sc.ERROR_TYPE] = outcome
        if self._content:
            arguments = call.raw_arguments if broken else call.args
            if arguments is not None:
                attributes[sc.GEN_AI_TOOL_CALL_ARGUMENTS] = clean.json(arguments)
        span = start_tool_span(
            self._tracer,
            f"{sc.OPERATION_EXECUTE_TOOL} {name}".rstrip(),
            ctx,
            clean.count(attributes),
            pending=self.adoption.pending(),
        )
        key = None if broken else call_key(call.name, call.args)
        entry = OpenCall(span, call.call_id, call.name, call.index, key, provider, label,
                         outcome, time.monotonic(), conversation if scope is None else scope,
                         turn=turn, output=output, system=system,
                         broken=broken)  # fmt: skip
        self._register(entry)
        if not broken and self._listeners:
            self._listeners.emit(ToolCallReceived(call, context_of(entry.span)))
        return entry

    def broken(
        self,
        problem: Problem,
        *,
        parent: Span | None,
        provider: str,
        label: str,
        dialect: str,
        conversation: str | None = None,
        scope: Scope = None,
        turn: int | None = None,
    ) -> OpenCall | None:
        """A call (with an id) that a problem kept from being a call: its span, or spanless."""
        call_id = problem.call_id
        if call_id is None:
            return None
        index = -1 if problem.call_index is None else problem.call_index
        if problem.kind in BROKEN_CALL_KINDS:
            stand_in = ToolCall(problem.name or "", {}, provider_of(dialect), call_id,
                                index, problem.received, dialect)  # fmt: skip
            return self.received(stand_in, parent=parent, provider=provider, label=label,
                                 outcome=problem.kind, broken=True,
                                 conversation=conversation, scope=scope,
                                 turn=turn)  # fmt: skip
        if problem.kind != "truncated_json":
            return None
        entry = OpenCall(None, call_id, problem.name or "", index, None, provider, label,
                         problem.kind, time.monotonic(),
                         conversation if scope is None else scope, turn=turn,
                         broken=True)  # fmt: skip
        self._register(entry)
        return entry

    def _register(self, entry: OpenCall) -> None:
        with self._lock:
            evicted = [entry] if self._retired else self._open.add(entry)
            token = self._taken(evicted)
        if evicted:
            self._end_taken(evicted, token, sc.RESULT_ORPHANED)

    def responded(
        self,
        response_id: str | None,
        entries: Sequence[OpenCall],
        conversation: str | None,
        scope: Scope = None,
        turn: int | None = None,
        system: int | None = None,
    ) -> bool:
        """A response settled: tag its calls with its id; whether that id came before."""
        if not response_id:
            return False
        for entry in entries:
            entry.response_id = response_id
        chain = ((conversation or "")[:_CONVERSATION_CHARS], scope, turn, system)
        with self._lock:
            seen = response_id in self._responses
            self._responses.put(response_id, chain)
            if entries:
                delivered = self._delivered_of(response_id)
                delivered.update(_delivery(e.call_id, e.index) for e in entries)
        return seen

    def read_back(self, response_id: str) -> tuple[str, Scope, int | None, int | None]:
        """The conversation, scope, turn and system fingerprint of a stored response that a
        request reads back (as its ``previous_response_id`` chain would name them)."""
        with self._lock:
            known = self._responses.get(response_id)
        if known is None:
            return response_id[:_CONVERSATION_CHARS], None, None, None
        conversation, scope, turn, system = known
        conversation = conversation or response_id[:_CONVERSATION_CHARS]
        return conversation, conversation if scope is None else scope, turn, system

    def first_delivery(self, response_id: str, calls: Sequence[ToolCall]) -> list[ToolCall]:
        """The calls of ``calls`` (read back from the stored response ``response_id``)
        that no earlier read of that response delivered; they count as delivered now."""
        with self._lock:
            delivered = self._delivered_of(response_id)
            fresh = []
            for call in calls:
                key = _delivery(call.call_id, call.index)
                if key not in delivered:
                    delivered.add(key)
                    fresh.append(call)
        return fresh

    def first_read(self, response_id: str, call_id: str | None, index: int) -> bool:
        """Whether no earlier read of the stored response ``response_id`` delivered its call
        ``call_id`` (else at ``index``), broken or not; it counts as delivered now."""
        key = _delivery(call_id, index)
        with self._lock:
            delivered = self._delivered_of(response_id)
            first = key not in delivered
            delivered.add(key)
        return first

    def first_usage(self, response_id: str) -> bool:
        """Whether this read of the stored response ``response_id`` is the first to report
        its token usage (a completed response polled again reports it again)."""
        with self._lock:
            delivered = self._delivered_of(response_id)
            first = _USAGE not in delivered
            delivered.add(_USAGE)
        return first

    def _delivered_of(self, response_id: str) -> set[object]:
        """What of ``response_id`` was recorded so far (locked)."""
        delivered = self._delivered.get(response_id)
        if delivered is None:
            delivered = set()
            self._delivered.put(response_id, delivered)
        return delivered

    def conversation_of(self, previous_response_id: str | None) -> str | None:
        """The conversation a ``previous_response_id`` chain belongs to (its first response)."""
        if not previous_response_id:
            return None
        with self._lock:
            known = self._responses.get(previous_response_id)
        return (known[0] if known else "") or previous_response_id[:_CONVERSATION_CHARS]

    def scope_of(self, previous_response_id: str) -> Scope:
        """The scope a ``previous_response_id`` chain's calls were matched in."""
        with self._lock:
            known = self._responses.get(previous_response_id)
        if known is not None and known[1] is not None:
            return known[1]
        return self.conversation_of(previous_response_id)

    def horizon(self, fingerprint: int) -> int | None:
        """How far back a request of the conversation ``fingerprint`` (or the app's
        ``tooltap.conversation``) reads its history: its oldest open call's turn."""
        scope = current_conversation.get() or fingerprint
        with self._lock:
            return self._open.horizon(scope)

    def not_delivered(self, entries: Sequence[OpenCall]) -> None:
        """End, as ``not_delivered``, the calls of ``entries`` still open: the SDK raised on
        the response that carried them, so the app never got them."""
        with self._lock:
            gone = [e for e in entries if self._open.remove(e)]
            token = self._taken(gone)
        self._end_taken(gone, token, sc.RESULT_NOT_DELIVERED)

    def expire(self, now: float | None = None) -> int:
        """End, as orphaned, the calls open longer than ``orphan_timeout``; return how many."""
        limit = (time.monotonic() if now is None else now) - self._orphan_timeout
        expired: list[OpenCall] = []
        with self._lock:
            while (oldest := self._open.oldest()) is not None and oldest.started <= limit:
                expired.append(self._open.pop_oldest())
            token = self._taken(expired)
        if not expired:  # most requests
            return 0
        self._end_taken(expired, token, sc.RESULT_ORPHANED)
        return sum(1 for e in expired if e.span is not None)

    def end_all(self, keep: Callable[[OpenCall], bool] | None = None) -> int:
        """End every open span as orphaned (flush, shutdown, uninstrument), but those
        ``keep`` keeps (the calls of a response still being read)."""
        with self._lock:
            entries = self._open.clear()
            if keep is not None:
                ending: list[OpenCall] = []
                for entry in entries:  # kept ones go back in their order: the oldest first
                    if keep(entry):
                        self._open.add(entry)
                    else:
                        ending.append(entry)
                entries = ending
            token = self._taken(entries)
        self._end_taken(entries, token, sc.RESULT_ORPHANED)
        return sum(1 for e in entries if e.span is not None)

    def retire(self) -> int:
        """End every open span as orphaned, and from now on each call that arrives at once."""
        with self._lock:
            self._retired = True
        return self.end_all()

    def open_call(
        self, call_id: str | None, key: int | None, conversation: str | None
    ) -> OpenCall | None:
        """The open call of ``call_id`` and/or content ``key``, without removing it."""
        with self._lock:
            return self._open.find(Wanted(call_id, key, conversation))

    def find(self, call: ToolCall, conversation: str | None = None) -> OpenCall | None:
        """The open span of ``call`` (by id and content), without removing it."""
        wanted = Wanted(call.call_id, call_key(call.name, call.args), conversation)
        with self._lock:
            entry = self._open.find(wanted)
        return entry if entry is not None and entry.span is not None else None


def _delivery(call_id: str | None, index: int) -> object:
    """What tells a call apart within one response: its id, else its place."""
    return index if call_id is None else call_id


@in_child
def _forget_parent_calls() -> None:
    """A forked child starts with an empty open-call table and empty call-id memories."""
    for lifecycle in list(_lifecycles):
        lifecycle._reset()
