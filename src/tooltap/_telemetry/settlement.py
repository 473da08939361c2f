"""When an inference ends: the states of an operation and of its tapped body, as two tables.

Pure: no OpenTelemetry, no ``Operation``, no ``TapState``. The transport tap, the SDK
wrappers and the body report *events*; :func:`step` and :func:`body_step` return the
next state and the *actions* the reporter carries out (``Operation`` and ``TapState``
do the recording). A pair missing from a table changes nothing and asks for nothing: an
event that comes too late (a second end, a body ending after its operation) is harmless.

An operation starts ``SENDING`` when the transport tap made it for a request nobody
above described, ``CALLING`` when an SDK wrapper made it around one logical call (each
HTTP send inside is an attempt). A 2xx body handed on unread inside the SDK call holds
the operation (``HELD``) past that call's return: the body's end ends it then
(``STREAMING``), and a body read to its end inside the call leaves the ending to the SDK
wrapper, so that an SDK raising after reading still fails the inference. An SDK call
that returns inside a method that parses its response (a parse scope) ends when that
method does (``PARSING``).

A body is ``READING`` until it settles. Its raw end waits for the client's decoder to
hand on its tail (``AWAITING_FLUSH``: the decoder's flush, or the body's close, ends it
then); an end inside a step of the SDK's own loop over
it waits for how that step ends (``AWAITING_STEP``): if the SDK raised, it never handed
the response on, and the body settles with the SDK's failure; an end reported again while
no step runs (the SDK's loop dropped mid-step, then collected) settles it as a return.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Final

__all__ = [
    "BODY_TABLE",
    "TABLE",
    "Action",
    "Body",
    "BodyAction",
    "BodyEvent",
    "Event",
    "State",
    "body_step",
    "step",
]


class State(Enum):
    """Where an operation is."""

    SENDING = "sending"  # a transport-owned request is being sent
    CALLING = "calling"  # the SDK call that owns the operation runs
    HELD = "held"  # that call runs, and a body handed on unread will outlive it
    STREAMING = "streaming"  # only the tapped body is left: its end ends the operation
    PARSING = "parsing"  # the SDK call returned inside a parse scope: its close ends it
    ENDED = "ended"


class Event(Enum):
    """What happened to an operation."""

    BODY_UNREAD = "body unread"  # the tap hands on a 2xx body the app reads later
    BODY_ENDED = "body ended"  # the response settled: its body ended, or was read at once
    SEND_FAILED = "send failed"  # the send raised (or was cancelled)
    SDK_RETURNED = "sdk returned"
    SDK_RETURNED_IN_SCOPE = "sdk returned in scope"  # inside a method that parses the response
    SDK_RAISED = "sdk raised"
    SCOPE_CLOSED = "scope closed"  # that parsing method returned or raised
    ABANDONED = "abandoned"  # flush or exit before the body ended: the app dropped it


class Action(Enum):
    """What the reporter does for a transition, in table order."""

    HAND_OVER = "hand over"  # the app has the response: receive the calls that waited
    JOIN_SCOPE = "join scope"  # wait for the parse scope
    CLOSED_EARLY = "closed early"  # mark the span: the app stopped reading
    END = "end"  # end the operation (with what the reporter holds: exception, error)


_END: Final = (Action.END,)
_ABANDON: Final = (Action.CLOSED_EARLY, Action.END)

#: (state, event) -> (next state, actions). Pairs not listed change nothing.
TABLE: Final[Mapping[tuple[State, Event], tuple[State, tuple[Action, ...]]]] = {
    (State.SENDING, Event.BODY_UNREAD): (State.STREAMING, ()),
    (State.SENDING, Event.BODY_ENDED): (State.ENDED, _END),
    (State.SENDING, Event.SEND_FAILED): (State.ENDED, _END),
    (State.SENDING, Event.ABANDONED): (State.ENDED, _ABANDON),
    (State.CALLING, Event.BODY_UNREAD): (State.HELD, ()),
    (State.CALLING, Event.SDK_RETURNED): (State.ENDED, (Action.HAND_OVER, Action.END)),
    (State.CALLING, Event.SDK_RETURNED_IN_SCOPE): (State.PARSING, (Action.JOIN_SCOPE,)),
    (State.CALLING, Event.SDK_RAISED): (State.ENDED, _END),
    (State.CALLING, Event.ABANDONED): (State.ENDED, _ABANDON),
    (State.HELD, Event.BODY_ENDED): (State.CALLING, ()),  # read inside the call: it ends it
    (State.HELD, Event.SDK_RETURNED): (State.STREAMING, (Action.HAND_OVER,)),
    (State.HELD, Event.SDK_RETURNED_IN_SCOPE): (State.STREAMING, (Action.HAND_OVER,)),
    (State.HELD, Event.SDK_RAISED): (State.ENDED, _END),
    (State.HELD, Event.ABANDONED): (State.ENDED, _ABANDON),
    (State.STREAMING, Event.BODY_ENDED): (State.ENDED, _END),
    (State.STREAMING, Event.ABANDONED): (State.ENDED, _ABANDON),
    (State.PARSING, Event.SCOPE_CLOSED): (State.ENDED, _END),
    (State.PARSING, Event.ABANDONED): (State.ENDED, _ABANDON),
}


def step(state: State, event: Event) -> tuple[State, tuple[Action, ...]]:
    """The operation's next state and the actions for ``event`` in ``state``."""
    return TABLE.get((state, event), (state, ()))


class Body(Enum):
    """Where a tapped body is."""

    READING = "reading"
    AWAITING_FLUSH = "awaiting flush"  # the raw body ended; the client's decoder not flushed
    AWAITING_STEP = "awaiting step"  # it ended inside a step of the SDK's loop over it
    SETTLED = "settled"


class BodyEvent(Enum):
    """What happened to a tapped body."""

    ENDED = "ended"  # exhausted, closed, broken, cancelled, collected or detached
    ENDED_IN_STEP = "ended in step"  # ended while a step of the SDK's loop runs
    EXHAUSTED_UNFLUSHED = "exhausted unflushed"  # the raw end, the client still decoding
    STEP_RETURNED = "step returned"  # the SDK's loop returned, was closed or cancelled
    STEP_RAISED = "step raised"  # the SDK's loop raised an Exception: nothing handed on
    FORGOTTEN = "forgotten"  # a forked child's copy of its parent's body


class BodyAction(Enum):
    """What the body does for a transition."""

    SETTLE = "settle"  # record the response with this end, then report BODY_ENDED
    DEFER = "defer"  # keep this end for the step's outcome
    SETTLE_DEFERRED = "settle deferred"  # settle with the end kept
    SDK_FAILED = "sdk failed"  # settle (with the end kept, else closed) as the SDK's failure
    NOT_DELIVERED = "not delivered"  # settled already: its calls were not delivered


#: (state, event) -> (next state, actions). Pairs not listed change nothing.
BODY_TABLE: Final[Mapping[tuple[Body, BodyEvent], tuple[Body, tuple[BodyAction, ...]]]] = {
    (Body.READING, BodyEvent.ENDED): (Body.SETTLED, (BodyAction.SETTLE,)),
    (Body.READING, BodyEvent.ENDED_IN_STEP): (Body.AWAITING_STEP, (BodyAction.DEFER,)),
    (Body.READING, BodyEvent.EXHAUSTED_UNFLUSHED): (Body.AWAITING_FLUSH, ()),
    (Body.READING, BodyEvent.STEP_RAISED): (Body.SETTLED, (BodyAction.SDK_FAILED,)),
    (Body.READING, BodyEvent.FORGOTTEN): (Body.SETTLED, ()),
    (Body.AWAITING_FLUSH, BodyEvent.ENDED): (Body.SETTLED, (BodyAction.SETTLE,)),
    (Body.AWAITING_FLUSH, BodyEvent.ENDED_IN_STEP): (Body.AWAITING_STEP, (BodyAction.DEFER,)),
    (Body.AWAITING_FLUSH, BodyEvent.STEP_RAISED): (Body.SETTLED, (BodyAction.SDK_FAILED,)),
    (Body.AWAITING_FLUSH, BodyEvent.FORGOTTEN): (Body.SETTLED, ()),
    (Body.AWAITING_STEP, BodyEvent.STEP_RETURNED): (Body.SETTLED, (BodyAction.SETTLE_DEFERRED,)),
    # ended again with no step running: the SDK's loop was dropped mid-step (collected)
    (Body.AWAITING_STEP, BodyEvent.ENDED): (Body.SETTLED, (BodyAction.SETTLE_DEFERRED,)),
    (Body.AWAITING_STEP, BodyEvent.STEP_RAISED): (Body.SETTLED, (BodyAction.SDK_FAILED,)),
    (Body.AWAITING_STEP, BodyEvent.FORGOTTEN): (Body.SETTLED, ()),
    (Body.SETTLED, BodyEvent.STEP_RAISED): (Body.SETTLED, (BodyAction.NOT_DELIVERED,)),
}


def body_step(state: Body, event: BodyEvent) -> tuple[Body, tuple[BodyAction, ...]]:
    """The body's next state and the actions for ``event`` in ``state``."""
    return BODY_TABLE.get((state, event), (state, ()))
