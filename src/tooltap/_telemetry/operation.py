"""One logical inference call = one ``Operation`` = one CLIENT span, covering every attempt.

When it ends is decided by one table (``settlement``): the transport tap, the SDK
wrappers and the tapped body ``report`` events, and the operation carries out the
recording actions the table returns (hand the calls over, mark closed early, ``end``;
``end`` runs once, whatever calls it).

* ``owner="transport"``: the httpx tap made it for a single request nobody above it
  described (``SENDING``). Its response settles it: at once for an error status or an
  already-read body, else when the tapped body ends.
* ``owner="sdk"``: an SDK wrapper made it and set ``current_operation`` around the SDK
  call (``CALLING``); each HTTP send inside is one attempt (``begin_attempt``). The
  wrapper reports how the call ended; a 2xx body the tap hands on unread holds the
  operation past the call (the streamed case), and a body read inside the call leaves
  the end to the wrapper, so that an SDK raising after reading still fails it.
* ``span=`` given: the op adopts a span someone else made (anthropic's own) and
  never ends it. That span's owner keeps its attributes: tooltap sets only its own
  ``tooltap.*`` attributes there (``tooltap.error.type`` included), adds events and
  links, and hangs the tool spans under it; no ``gen_ai.*``, ``error.type``,
  ``http.*`` attribute and no status. Content (problem details) goes on it only
  when ``span_content`` (the owner's content mode) allows it too. Metrics, events
  and tool spans keep tooltap's own vocabulary and content setting.

Tool calls go to the lifecycle as soon as the tap's parser completes them
(``calls_received``), or, while the SDK call that returns the response runs
(``handing``), when it returns (``handed``); ``record_parsed`` settles the response
(attributes, usage, problems, forced ``tool_choice``) and hands on any call not
delivered yet. When the SDK raises instead of handing the response to the app
(``not_delivered``), its calls are not received: waiting ones get no span, open ones
end ``not_delivered``, and ``tooltap.tool_calls`` (added when the op ends) counts
them so.

An SDK wrapper passes the request body it is about to send (``request_body``): the
tap reads the request from that object (``request``) instead of decoding the bytes
again, once for every attempt. The conversation (``gen_ai.conversation.id``) is the
app's ``tooltap.conversation``, else the one the request carries.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any, Literal, Protocol

from opentelemetry.trace import Span, SpanKind

from .._core.errors import classify_error, classify_problem, redacted
from .._core.model import ErrorClass, Parsed, Problem, RequestInfo, ToolCall
from .._core.request import parse_request
from .._core.validate import prepare
from .._forks import OwnedLock
from .._quietly import after_collection, run_deferred
from . import semconv as sc
from .attempts import Attempts
from .calls import Calls
from .capture import capture_request, capture_response
from .conversation import current_conversation
from .correlate import OpenCall, Scope
from .inference_span import InferenceSpan
from .listeners import ToolCallProblem
from .response import forced_tool_choice, problem_event, response_attributes
from .sanitize import ID_CHARS, NAME_CHARS, text
from .settlement import Action, Event, State, step
from .telemetry import Telemetry, get_telemetry

__all__ = ["Operation", "current_operation", "get_telemetry"]

current_operation: ContextVar[Operation | None] = ContextVar("tooltap_operation", default=None)

_STOPPED_BY_APP = ("truncated_stream", "truncated_json")
#: Makes each state step atomic (held for one lookup: one lock serves every operation).
_STEP_LOCK = OwnedLock()


class Body(Protocol):
    """The tapped body of an operation (``tap_stream.TapState``)."""

    def dropped(self, caller: threading.Thread) -> bool:
        """Not settled, and nobody reads it now (``caller`` being the thread that asks)."""


class Operation:
    """One inference span and its metrics; see the module docstring for ownership."""

    def __init__(
        self,
        tel: Telemetry,
        *,
        dialect: str,
        request_model: str | None,
        server_address: str | None,
        server_port: int | None,
        stream: bool | None,
        owner: Literal["sdk", "transport"],
        span: Span | None = None,
        span_content: bool = True,
        provider_name: str | None = None,
        params: Mapping[str, Any] | None = None,
        request_body: Mapping[str, Any] | None = None,
    ) -> None:
        run_deferred()  # what a garbage collection left to settle, before this one starts
        self.tel = tel
        self.dialect = dialect
        if request_model:
            request_model = text(request_model, NAME_CHARS)
        self.request_model = request_model
        self.provider = provider_name or sc.provider_name(dialect, server_address)
        self.attributes: dict[str, Any] = {
            sc.GEN_AI_OPERATION_NAME: sc.operation_name(dialect),
            sc.GEN_AI_PROVIDER_NAME: self.provider,
        }
        if request_model:
            self.attributes[sc.GEN_AI_REQUEST_MODEL] = request_model
        if server_address:
            self.attributes[sc.SERVER_ADDRESS] = server_address
            if server_port is not None:
                self.attributes[sc.SERVER_PORT] = server_port
        adopted = span is not None
        conversation = current_conversation.get()
        if span is None:
            start = dict(self.attributes)
            if stream is not None:
                start[sc.GEN_AI_REQUEST_STREAM] = stream
            if params:  # the request's gen_ai.request.* parameters
                start.update(params)
            if conversation is not None:
                start[sc.GEN_AI_CONVERSATION_ID] = text(conversation, ID_CHARS)
            span = tel.tracer.start_span(self._name(), kind=SpanKind.CLIENT, attributes=start)
        self.span = span
        self._out = InferenceSpan(span, adopted=adopted, content=span_content)
        self._attempts = Attempts(tel, self.attributes, self._out, sc.retry_count_header(dialect))
        self.request_info: RequestInfo | None = None
        self.request_body = request_body
        self.conversation = conversation
        self._named = conversation  # the app's own conversation id
        self.scope: Scope = conversation  # what this request's results are matched in
        self.turn: int | None = None  # where its response's model turn will stand
        self.system: int | None = None  # its system prompt's fingerprint
        self.retrieved: str | None = None  # the stored response a GET reads back
        self._parsed_request: RequestInfo | None = None
        self._accounted: RequestInfo | None = None
        self._once = threading.Lock()  # taken (never released) by the one ``end`` that runs
        self.state = State.SENDING if owner == "transport" else State.CALLING
        self.body: Body | None = None
        self._calls = Calls(self, self._out, handing=self.state is State.CALLING)
        self._sdk_error: ErrorClass | None = None
        self._cancelled = False
        if not tel.export_checked:
            tel.check_export()
        tel.open_operations.add(self)

    def _name(self) -> str:
        operation = self.attributes[sc.GEN_AI_OPERATION_NAME]
        return f"{operation} {self.request_model}" if self.request_model else str(operation)

    @property
    def attempt_started(self) -> float:
        """When the current attempt's request was sent (``time.monotonic``)."""
        return self._attempts.attempt_started

    # --- attempts --------------------------------------------------------------------------

    def request(self, dialect: str) -> RequestInfo | None:
        """The request read from the SDK's body object (once), or None without one."""
        if self.request_body is None or dialect != self.dialect:
            return None
        if self._parsed_request is None:
            horizon = self.tel.lifecycle.horizon
            self._parsed_request = parse_request(self.request_body, dialect, horizon)
        return self._parsed_request

    def begin_attempt(
        self,
        request_info: RequestInfo,
        headers: Mapping[str, str],
        *,
        url_host: str | None = None,
        url_path: str | None = None,
        body: Any = None,
    ) -> None:
        """One HTTP attempt starts: count retries, account the tool results it carries.

        The dialect's retry header gives the attempt number when present; a new
        attempt after a failed one counts ``tooltap.retries`` with that failure's type.
        ``headers``: case-insensitive (httpx ``Headers``) or with lower-case names.
        ``body`` (decoded JSON) is only used under content capture.
        """
        self._attempts.begin(headers)
        self._calls.new_attempt()
        if "x-api-key" in headers and "authorization" in headers:
            self._out.set(sc.TOOLTAP_CONFLICTING_AUTH, True)
        untold = sc.provider_untold(self.dialect)
        if untold is not None and self.provider == untold and (url_host or url_path):
            self.provider = sc.provider_name(self.dialect, url_host, url_path)
            self.attributes[sc.GEN_AI_PROVIDER_NAME] = self.provider
            self._out.set(sc.GEN_AI_PROVIDER_NAME, self.provider)
        if self.request_model is None and request_info.model:
            self.request_model = text(request_info.model, NAME_CHARS)
            self.attributes[sc.GEN_AI_REQUEST_MODEL] = self.request_model
            self._out.set(sc.GEN_AI_REQUEST_MODEL, self.request_model)
            self._out.rename(self._name())
        self.request_info = request_info
        prepare(request_info)  # schemas compiled now, not on the stream
        for problem in request_info.problems:
            problem_event(self.tel, self._out, problem)
        lifecycle = self.tel.lifecycle
        named = request_info.conversation_id
        previous = request_info.previous_response_id
        if request_info.retrieved is not None:  # read back: as the response was delivered
            self._read_back(request_info.retrieved)
            lifecycle.expire()
            capture_request(self.tel, self._out, self.attributes, self.dialect, body)
            return
        if self.conversation is None:
            self.conversation = named or lifecycle.conversation_of(previous)
            if self.conversation is not None:
                self._out.set(sc.GEN_AI_CONVERSATION_ID, text(self.conversation, ID_CHARS))
        if self._named:
            self.scope = self._named
        elif named is None and previous is not None:  # the chain's scope
            self.scope = lifecycle.scope_of(previous)
        else:
            self.scope = named or request_info.fingerprint
        self.turn = request_info.history_length
        self.system = request_info.system_fingerprint
        lifecycle.expire()
        if request_info is not self._accounted:  # an SDK retry re-sends the very same request
            self._accounted = request_info
            links = lifecycle.results_sent(
                request_info.tool_results,
                provider=self.provider,
                declared=request_info.tools,
                inference_span=self.span,
                conversation=self.scope,
                previous_response=request_info.previous_response_id,
                history_length=request_info.history_length,
                model_turns=request_info.model_turns,
                system=self.system,
            )
            self._out.links(links, {sc.TOOLTAP_LINK: sc.LINK_TOOL_RESULT})
        capture_request(self.tel, self._out, self.attributes, self.dialect, body)

    def _read_back(self, response_id: str) -> None:
        """A ``GET`` of a stored response: its calls open in the scope, at the turn, of the
        request that created it, and each only once over every read of it."""
        self.retrieved = response_id
        conversation, scope, self.turn, self.system = self.tel.lifecycle.read_back(response_id)
        self.scope = self._named or scope
        if self.conversation is None:
            self.conversation = conversation
            self._out.set(sc.GEN_AI_CONVERSATION_ID, text(conversation, ID_CHARS))

    def attempt_failed(self, error: ErrorClass) -> None:
        """The current attempt failed (status, exception, or an error inside the stream)."""
        self._attempts.failed(error)

    def first_chunk(self) -> None:
        """The first body chunk of a streamed response arrived (recorded once per op)."""
        self._attempts.first_chunk()

    # --- calls and responses ---------------------------------------------------------------

    def calls_received(self, calls: list[ToolCall] | tuple[ToolCall, ...]) -> None:
        """Calls the parser just completed: validate, open their ``execute_tool`` spans.

        While the SDK call that returns the response runs (``handing``), the app has none
        of them yet: they wait for that call to return (``handed``). Each call is counted
        in ``tooltap.tool_calls`` when the operation ends, as ``not_delivered`` if the SDK
        raised on the response instead (``not_delivered``).
        """
        self._calls.received(calls)

    def handed(self) -> None:
        """That SDK call returned: the app has the response; its calls are received now."""
        self._calls.handed()

    def not_delivered(self, exc: BaseException) -> None:
        """The SDK raised instead of handing the response to the app.

        The calls still waiting for the SDK call are counted as ``not_delivered`` and
        get no span. Unless the SDK call was cancelled (the app stopped it), the calls
        already opened from this attempt's response are ended as ``not_delivered`` too,
        and the operation ends with the SDK's error unless a transport error came first.
        """
        cancelled = not isinstance(exc, Exception)
        if not cancelled:
            self._sdk_error = classify_error(None, {}, None, exc)
        self._calls.not_delivered(end_opened=not cancelled)

    def record_parsed(
        self,
        parsed: Parsed,
        request_info: RequestInfo | None,
        *,
        body: Any = None,
        closed_early: bool = False,
        by_sdk: bool = False,
        failure: ErrorClass | None = None,
    ) -> None:
        """A 2xx response is settled: its attributes, usage, problems and remaining calls.

        ``closed_early``: the app stopped reading (``by_sdk``: the SDK did, as it raised on
        the body, which is recorded as its failure instead); the truncation that follows
        is not the provider's fault and is not reported. ``failure``: the exception that broke
        the body, classed (it outranks the truncation it causes). ``body``: decoded
        JSON of a whole body, used for output text under content capture.
        """
        if request_info is not None:
            self.request_info = request_info
        self._attempts.failure = None
        retrieved = self.retrieved
        if retrieved and parsed.usage and not self.tel.lifecycle.first_usage(retrieved):
            parsed = dataclasses.replace(parsed, usage=None)  # a poll repeats it
        self.calls_received(parsed.calls)
        response_attributes(self.tel, self._out, self.attributes, parsed)
        problems = parsed.problems
        if (  # else the provider's: an error event ended it
            closed_early
            and not parsed.complete
            and not any(p.kind == "error_event" for p in problems)
        ):
            if not by_sdk:
                self.record_closed_early()
            problems = tuple(p for p in problems if p.kind not in _STOPPED_BY_APP)
        for problem in problems:
            self.record_problem(problem)
            failure = failure or classify_problem(problem)
        self._calls.responded(parsed.response_id)
        if failure is not None:
            self.attempt_failed(failure)
        forced_tool_choice(self.tel, self.attributes, self.request_info, parsed)
        capture_response(self.tel, self._out, self.attributes, parsed, body)

    def cancelled(self) -> None:
        """The app cancelled the operation (a ``BaseException`` that is not an ``Exception``:
        asyncio's or trio's cancellation, ``KeyboardInterrupt``): it ends as
        ``tooltap.outcome=cancelled``, not as an error."""
        self._cancelled = True

    def record_closed_early(self) -> None:
        """The app stopped reading the body before its end (not a failure)."""
        self._out.set(sc.TOOLTAP_STREAM_CLOSED_EARLY, True)

    def record_problem(self, problem: Problem) -> None:
        """A parser problem: event, metric (per call or per response), listeners.

        A problem about a call this attempt delivered annotates that call (counted once,
        as delivered); any other per-call problem is a broken call: counted with its
        kind, and given its span (or its id remembered) by the lifecycle. Credentials a
        provider's message echoes are masked, for the span and the listeners alike.
        """
        problem = redacted(problem)
        problem_event(self.tel, self._out, problem)
        if problem.call_index is None and problem.call_id is None:
            self.tel.instruments.stream_problem(problem.kind, self.attributes)
        else:
            self._calls.broken(problem)
        self.tel.listeners.emit(
            ToolCallProblem(problem, self.dialect, self.span.get_span_context())
        )

    # --- ending ----------------------------------------------------------------------------

    def report(
        self, event: Event, exc: BaseException | None = None, error: ErrorClass | None = None
    ) -> tuple[Action, ...]:
        """``event`` happened (see ``settlement``): step the state, carry out the recording
        actions (``exc``, ``error``: what the operation ends with); return all the actions,
        for the reporter to carry out its own (``JOIN_SCOPE``)."""
        with _STEP_LOCK:  # two threads reporting at once both see their own transition
            self.state, actions = step(self.state, event)
        try:
            for action in actions:
                if action is Action.HAND_OVER:
                    self.handed()
                elif action is Action.CLOSED_EARLY:
                    self.record_closed_early()
        finally:  # END comes last; a recording failure (a tooltap bug) must not skip it
            if Action.END in actions:
                self.end(exc, error)
        return actions

    @property
    def ended(self) -> bool:
        """Whether ``end`` already ran."""
        return self._once.locked()

    def abandonable(self, caller: threading.Thread) -> bool:
        """Whether only ``abandon`` would end this op now: its body is tapped, unsettled and
        not being read (else its send, its SDK call or its reader ends it)."""
        body = self.body
        return not self.ended and body is not None and body.dropped(caller)

    def keeps(self, entry: OpenCall) -> bool:
        """Whether ``entry`` is one of this op's calls (its span under this op's)."""
        if entry in self._calls.opened:
            return True
        parent = getattr(entry.span, "parent", None)
        return parent is not None and parent.span_id == self.span.get_span_context().span_id

    def abandon(self) -> None:
        """Flush or exit came before the body ended (the app dropped it unclosed): end now."""
        self.report(Event.ABANDONED)

    def end(self, exc: BaseException | None = None, error: ErrorClass | None = None) -> None:
        """End the operation once: duration metric, resend count, error type and status."""
        if after_collection(self.end, exc, error):
            return
        if not self._once.acquire(blocking=False):  # never waits: safe from a signal handler
            return
        lifecycle = self.tel.lifecycle
        ending = lifecycle.mark()  # before leaving the open operations: a flush waits for it
        self.state = State.ENDED  # ended directly, not through ``report``
        self.tel.open_operations.discard(self)
        # The SDK's body object (the whole history) is the SDK's to free: the op lives on
        # in a cycle until a collection, which would otherwise keep and traverse it.
        self.request_body = None
        try:
            self._record_end(exc, error)
        finally:  # a recording failure (a tooltap bug) must not leave the span open
            try:
                self._out.end()
            finally:
                lifecycle.unmark(ending)

    def _record_end(self, exc: BaseException | None, error: ErrorClass | None) -> None:
        """``end``'s accounting: the response handed over, the error, the metrics."""
        if self._calls.handing:  # ended before the SDK call that hands the response over
            if exc is None:
                self.handed()
            else:
                self.not_delivered(exc)
        if exc is not None and not isinstance(exc, Exception):
            self._cancelled = True
        elif error is None and exc is not None:
            error = classify_error(None, {}, None, exc)
        if error is None and not self._cancelled:
            error = self._sdk_error or self._attempts.failure
        if self._cancelled and error is None:
            self._out.set(sc.TOOLTAP_OUTCOME, sc.OUTCOME_CANCELLED)
        attributes = dict(self.attributes)
        if self._attempts.resends:
            self._out.set(sc.HTTP_REQUEST_RESEND_COUNT, self._attempts.resends)
        if error is not None:
            attributes[sc.ERROR_TYPE] = error.error_type
            self._out.set(sc.ERROR_TYPE, error.error_type)
            self._out.set(sc.TOOLTAP_ERROR_TYPE, error.error_type)
            self._out.fail(error.error_type)
        self._calls.count()
        duration = time.monotonic() - self._attempts.started
        self.tel.instruments.operation(duration, attributes, self._out.context())
