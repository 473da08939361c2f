"""The tool calls of one operation's attempt: received, handed over by the SDK, or not delivered.

Calls go to the lifecycle as soon as the parser completes them, or, while the SDK call
that returns the response runs (``handing``), when it returns (``handed``). Each is
counted in ``tooltap.tool_calls`` once the operation has ended, as ``not_delivered`` if
the SDK raised on the response instead.
"""

from __future__ import annotations

from typing import Protocol

from .._core.model import Problem, RequestInfo, ToolCall
from .._core.problems import CALL_OUTCOME_KINDS
from .._core.validate import validate
from . import semconv as sc
from .correlate import OpenCall, Scope
from .inference_span import InferenceSpan
from .listeners import ToolCallProblem
from .response import problem_event, replayed
from .telemetry import Telemetry

__all__ = ["Calls"]


class _Operation(Protocol):
    """What the calls read of their operation (provider, conversation and request change
    as its attempts tell more)."""

    tel: Telemetry
    dialect: str
    provider: str
    conversation: str | None
    scope: Scope
    turn: int | None
    system: int | None
    retrieved: str | None
    request_info: RequestInfo | None

    @property
    def ended(self) -> bool: ...


class Calls:
    """An operation's calls: delivered ones (per attempt), waiting ones, and their counts."""

    def __init__(self, op: _Operation, out: InferenceSpan, *, handing: bool) -> None:
        self._op = op
        self._out = out
        self.opened: list[OpenCall] = []
        self._delivered: set[int] = set()
        self._delivered_ids: set[str] = set()
        #: The SDK call that hands this response to the app runs (the op starts in one).
        self.handing = handing
        self._stash: list[ToolCall] = []  # calls parsed while it runs: the app has none yet
        self._stash_response: str | None = None
        self._counts: list[tuple[OpenCall, str, str]] = []  # (entry, label, outcome) to count
        self._undelivered: set[OpenCall] = set()

    def new_attempt(self) -> None:
        """A new attempt's response delivers its calls afresh."""
        self._delivered = set()
        self._delivered_ids = set()
        self.opened = []
        self._stash = []
        self._stash_response = None

    def received(self, calls: list[ToolCall] | tuple[ToolCall, ...]) -> None:
        """Calls the parser just completed: validate, open their ``execute_tool`` spans."""
        if self.handing:
            self._stash.extend(calls)
            self._delivered_ids.update(c.call_id for c in calls if c.call_id is not None)
            return
        op = self._op
        info = op.request_info
        declared = info.tools if info is not None else None
        tel, delivered = op.tel, self._delivered
        if op.retrieved is not None:  # a stored response read back: each call opens once
            self._delivered_ids.update(c.call_id for c in calls if c.call_id is not None)
            calls = tel.lifecycle.first_delivery(op.retrieved, calls)
        for call in calls:
            if call.index in delivered:
                continue
            delivered.add(call.index)
            if call.call_id is not None:
                self._delivered_ids.add(call.call_id)
            outcome = sc.RESULT_OK
            problems = validate(call, info) if info is not None else None
            if problems:
                outcome = next((p.kind for p in problems if p.kind in CALL_OUTCOME_KINDS), outcome)
                for problem in problems:
                    problem_event(tel, self._out, problem)
                    tel.listeners.emit(
                        ToolCallProblem(problem, op.dialect, self._out.span.get_span_context())
                    )
            label = tel.tool_names.label(call.name, declared)
            entry = tel.lifecycle.received(
                call,
                parent=self._out.span,
                provider=op.provider,
                label=label,
                outcome=outcome,
                conversation=op.conversation,
                context=self._out.context(),
                scope=op.scope,
                turn=op.turn,
                output=tel.config.output_tool(call.name)
                and (declared is None or call.name in declared),
                system=op.system,
            )
            self.opened.append(entry)
            self._counts.append((entry, label, outcome))
        if op.ended:  # nothing left to wait for
            self.count()

    def count(self) -> None:
        """Add the calls received so far to ``tooltap.tool_calls``, one add per label/outcome."""
        if not self._counts:
            return
        counts: dict[tuple[str, str], int] = {}
        for entry, label, outcome in self._counts:
            if entry in self._undelivered:
                outcome = sc.RESULT_NOT_DELIVERED
            counts[label, outcome] = counts.get((label, outcome), 0) + 1
        self._counts = []
        for (label, outcome), count in counts.items():
            self._op.tel.instruments.tool_call(count, self._op.provider, label, outcome)

    def responded(self, response_id: str | None) -> None:
        """The response (``response_id``) is settled: tell the lifecycle, or, while the SDK
        call that hands it over runs, when that call returns."""
        if self.handing:
            self._stash_response = response_id
            return
        op = self._op
        lifecycle = op.tel.lifecycle
        seen = lifecycle.responded(
            response_id, self.opened, op.conversation, op.scope, op.turn, op.system
        )
        if seen and op.retrieved is None:
            replayed(self._out, self.opened)

    def handed(self) -> None:
        """The SDK call returned: the app has the response; its calls are received now."""
        if not self.handing:
            return
        self.handing = False
        stash, self._stash = self._stash, []
        if stash:
            self.received(stash)
        response, self._stash_response = self._stash_response, None
        self.responded(response)

    def not_delivered(self, *, end_opened: bool) -> None:
        """The SDK raised instead of handing the response over: the waiting calls are counted
        as ``not_delivered`` with no span; ``end_opened``: the opened ones end so too."""
        self.handing = False
        stash, self._stash = self._stash, []
        self._stash_response = None
        op = self._op
        declared = op.request_info.tools if op.request_info is not None else None
        counts: dict[str, int] = {}
        seen: set[int] = set()
        for call in stash:
            if call.index not in self._delivered and call.index not in seen:
                seen.add(call.index)
                label = op.tel.tool_names.label(call.name, declared)
                counts[label] = counts.get(label, 0) + 1
        for label, count in counts.items():
            op.tel.instruments.tool_call(count, op.provider, label, sc.RESULT_NOT_DELIVERED)
        if end_opened:
            opened = [e for e in self.opened if e.span is not None]
            self._undelivered.update(opened)
            op.tel.lifecycle.not_delivered(opened)

    def broken(self, problem: Problem) -> None:
        """A per-call problem: annotates a call this attempt delivered (counted as delivered);
        else the call is broken: counted with its kind, given its span by the lifecycle."""
        if problem.call_id in self._delivered_ids:
            return
        op = self._op
        index = -1 if problem.call_index is None else problem.call_index
        if op.retrieved is not None and not op.tel.lifecycle.first_read(
            op.retrieved, problem.call_id, index
        ):
            return  # an earlier read of this stored response delivered it
        declared = op.request_info.tools if op.request_info is not None else None
        label = op.tel.tool_names.label(problem.name, declared)
        op.tel.instruments.tool_call(1, op.provider, label, problem.kind)
        entry = op.tel.lifecycle.broken(
            problem,
            parent=self._out.span,
            provider=op.provider,
            label=label,
            dialect=op.dialect,
            conversation=op.conversation,
            scope=op.scope,
            turn=op.turn,
        )
        if entry is not None:
            self.opened.append(entry)
