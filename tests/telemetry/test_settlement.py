"""The settlement tables, state by state and event by event (as h11's ``test_state.py``).

Each test walks one path a real operation or body takes; the invariants below hold for
every pair; ``docs/GUARANTEES.md`` shows the tables exactly as the code has them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tooltap._telemetry import settlement
from tooltap._telemetry.settlement import (
    BODY_TABLE,
    TABLE,
    Action,
    Body,
    BodyAction,
    BodyEvent,
    Event,
    State,
    body_step,
    step,
)

ROOT = Path(__file__).parent.parent.parent
GUARANTEES = ROOT / "docs" / "GUARANTEES.md"


def _walk(state: State, *events: Event) -> tuple[State, list[Action]]:
    done: list[Action] = []
    for event in events:
        state, actions = step(state, event)
        done.extend(actions)
    return state, done


# --- the operation ---------------------------------------------------------------------


def test_transport_request_ends_with_its_response() -> None:
    assert step(State.SENDING, Event.BODY_ENDED) == (State.ENDED, (Action.END,))  # read at once
    assert step(State.SENDING, Event.SEND_FAILED) == (State.ENDED, (Action.END,))
    assert _walk(State.SENDING, Event.BODY_UNREAD) == (State.STREAMING, [])
    assert _walk(State.SENDING, Event.BODY_UNREAD, Event.BODY_ENDED) == (
        State.ENDED,
        [Action.END],
    )


def test_sdk_call_returning_a_read_response_hands_it_over_then_ends() -> None:
    assert _walk(State.CALLING, Event.BODY_ENDED) == (State.CALLING, [])  # an error body, read
    assert step(State.CALLING, Event.SDK_RETURNED) == (
        State.ENDED,
        (Action.HAND_OVER, Action.END),
    )


def test_send_failing_inside_an_sdk_call_leaves_the_end_to_the_sdk() -> None:
    assert step(State.CALLING, Event.SEND_FAILED) == (State.CALLING, ())  # it may retry
    assert step(State.CALLING, Event.SDK_RAISED) == (State.ENDED, (Action.END,))


def test_streamed_body_holds_the_operation_past_the_sdk_call() -> None:
    state, actions = _walk(State.CALLING, Event.BODY_UNREAD, Event.SDK_RETURNED)
    assert (state, actions) == (State.STREAMING, [Action.HAND_OVER])
    assert step(state, Event.BODY_ENDED) == (State.ENDED, (Action.END,))


def test_body_read_inside_the_sdk_call_leaves_the_end_to_the_sdk() -> None:
    state, actions = _walk(State.CALLING, Event.BODY_UNREAD, Event.BODY_ENDED)
    assert (state, actions) == (State.CALLING, [])
    assert step(state, Event.SDK_RAISED) == (State.ENDED, (Action.END,))  # its error is kept


def test_sdk_raising_on_a_held_body_ends_the_operation() -> None:
    assert step(State.HELD, Event.SDK_RAISED) == (State.ENDED, (Action.END,))


def test_parse_scope_ends_the_operation_when_it_closes() -> None:
    assert step(State.CALLING, Event.SDK_RETURNED_IN_SCOPE) == (
        State.PARSING,
        (Action.JOIN_SCOPE,),
    )
    assert step(State.PARSING, Event.BODY_ENDED) == (State.PARSING, ())
    assert step(State.PARSING, Event.SCOPE_CLOSED) == (State.ENDED, (Action.END,))
    # a streamed body inside a parse scope: the body ends it, not the scope
    assert step(State.HELD, Event.SDK_RETURNED_IN_SCOPE) == (State.STREAMING, (Action.HAND_OVER,))
    assert step(State.STREAMING, Event.SCOPE_CLOSED) == (State.STREAMING, ())


@pytest.mark.parametrize("state", [s for s in State if s is not State.ENDED])
def test_abandoning_ends_every_open_operation_as_closed_early(state: State) -> None:
    assert step(state, Event.ABANDONED) == (State.ENDED, (Action.CLOSED_EARLY, Action.END))


@pytest.mark.parametrize("event", list(Event))
def test_an_ended_operation_ignores_every_event(event: Event) -> None:
    assert step(State.ENDED, event) == (State.ENDED, ())


def test_end_is_asked_exactly_on_the_way_into_ended() -> None:
    for (state, event), (after, actions) in TABLE.items():
        assert (Action.END in actions) is (after is State.ENDED), (state, event)
        assert actions.count(Action.END) <= 1
        if Action.END in actions:
            assert actions[-1] is Action.END, (state, event)  # recording first, then the end


def test_every_state_can_end() -> None:
    for state in State:
        seen, todo = {state}, [state]
        while todo:
            here = todo.pop()
            for (src, _), (dst, _) in TABLE.items():
                if src is here and dst not in seen:
                    seen.add(dst)
                    todo.append(dst)
        assert State.ENDED in seen, state


# --- the body ----------------------------------------------------------------------------


def test_body_settles_once_at_its_end() -> None:
    assert body_step(Body.READING, BodyEvent.ENDED) == (Body.SETTLED, (BodyAction.SETTLE,))
    for event in BodyEvent:
        after, actions = body_step(Body.SETTLED, event)
        assert after is Body.SETTLED
        assert BodyAction.SETTLE not in actions


def test_raw_end_waits_for_the_clients_decoder() -> None:
    assert body_step(Body.READING, BodyEvent.EXHAUSTED_UNFLUSHED) == (Body.AWAITING_FLUSH, ())
    assert body_step(Body.AWAITING_FLUSH, BodyEvent.EXHAUSTED_UNFLUSHED) == (
        Body.AWAITING_FLUSH,
        (),
    )
    assert body_step(Body.AWAITING_FLUSH, BodyEvent.ENDED) == (Body.SETTLED, (BodyAction.SETTLE,))


def test_end_inside_an_sdk_step_waits_for_that_step() -> None:
    for start in (Body.READING, Body.AWAITING_FLUSH):
        assert body_step(start, BodyEvent.ENDED_IN_STEP) == (
            Body.AWAITING_STEP,
            (BodyAction.DEFER,),
        )
    assert body_step(Body.AWAITING_STEP, BodyEvent.ENDED_IN_STEP) == (Body.AWAITING_STEP, ())
    # the SDK's loop dropped mid-step: a later end (its collection) settles the body
    assert body_step(Body.AWAITING_STEP, BodyEvent.ENDED) == (
        Body.SETTLED,
        (BodyAction.SETTLE_DEFERRED,),
    )
    assert body_step(Body.AWAITING_STEP, BodyEvent.STEP_RETURNED) == (
        Body.SETTLED,
        (BodyAction.SETTLE_DEFERRED,),
    )
    assert body_step(Body.AWAITING_STEP, BodyEvent.STEP_RAISED) == (
        Body.SETTLED,
        (BodyAction.SDK_FAILED,),
    )


def test_sdk_raising_on_a_body_makes_it_its_failure() -> None:
    assert body_step(Body.READING, BodyEvent.STEP_RAISED) == (
        Body.SETTLED,
        (BodyAction.SDK_FAILED,),
    )
    assert body_step(Body.SETTLED, BodyEvent.STEP_RAISED) == (
        Body.SETTLED,
        (BodyAction.NOT_DELIVERED,),
    )
    assert body_step(Body.READING, BodyEvent.STEP_RETURNED) == (Body.READING, ())


@pytest.mark.parametrize("state", list(Body))
def test_a_forked_child_never_settles_its_parents_body(state: Body) -> None:
    assert body_step(state, BodyEvent.FORGOTTEN) == (Body.SETTLED, ())


def test_every_settling_transition_settles_once() -> None:
    settling = {BodyAction.SETTLE, BodyAction.SETTLE_DEFERRED, BodyAction.SDK_FAILED}
    for (state, event), (after, actions) in BODY_TABLE.items():
        count = sum(1 for a in actions if a in settling)
        assert count <= 1
        if count:
            assert state is not Body.SETTLED and after is Body.SETTLED, (state, event)


# --- purity and documentation ------------------------------------------------------------


def test_the_module_is_pure() -> None:
    tree = ast.parse(Path(settlement.__file__).read_text())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
    }
    assert imported <= {"__future__", "collections", "enum", "typing"}


def render() -> str:
    """The two tables as ``docs/GUARANTEES.md`` shows them."""
    lines = ["| operation state | event | next state | actions |", "| --- | --- | --- | --- |"]
    for (state, event), (after, actions) in TABLE.items():
        done = ", ".join(a.value for a in actions) or "-"
        lines.append(f"| {state.value} | {event.value} | {after.value} | {done} |")
    lines += ["", "| body state | event | next state | actions |", "| --- | --- | --- | --- |"]
    for (body, body_event), (body_after, body_actions) in BODY_TABLE.items():
        done = ", ".join(a.value for a in body_actions) or "-"
        lines.append(f"| {body.value} | {body_event.value} | {body_after.value} | {done} |")
    return "\n".join(lines) + "\n"


def test_guarantees_shows_the_tables_of_the_code() -> None:
    assert render() in GUARANTEES.read_text(), (
        "regenerate: python tests/telemetry/test_settlement.py"
    )


if __name__ == "__main__":
    print(render(), end="")
