"""One logical inference call = one ``Operation`` = one CLIENT span, covering every attempt.

Who owns an operation, and who ends it (exactly once; ``end`` is idempotent):

* ``owner="transport"``: the httpx tap made it for a single request nobody above
  it described. The tap ends it when the response is settled: at once for an
  error status or an already-read body, else when the tapped body is exhausted,
  closed, broken, or garbage-collected.
* ``owner="sdk"``: an SDK wrapper made it and set ``current_operation`` around the
  SDK call; each HTTP send inside is one attempt (``begin_attempt``). The wrapper
  calls ``op.end(exc)`` if the call raised, else ``op.end()`` unless ``op.held``.
  When the tap hands on a 2xx body unread inside the call, it calls
  ``hold_until_stream_end()``; at the body's end it calls ``release()``, which
  ends the op only if the SDK call has already returned (``current_operation`` is
  no longer this op in the context that finishes the body) — the streamed case,
  ``stream=True``, where the app reads the body later. A body read inside the SDK
  call (non-streamed, or an SDK that reads eagerly) releases the hold instead, so
  the wrapper's own ``end`` — or ``end(exc)`` when the SDK raises after reading —
  wins, and the error is not lost. An SDK wrapper that keeps the op current while
  the app iterates (google-genai's generator) must end the op itself.
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

import time
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any, Literal

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from .._core.errors import classify_error, classify_problem, redacted
from .._core.model import ErrorClass, Parsed, Problem, RequestInfo, ToolCall
from .._core.request import parse_request
from .._core.validate import validate
from .._forks import new_lock
from . import semconv as sc
from .content import input_messages, output_messages, to_json, tool_definitions
from .conversation import current_conversation
from .correlate import OpenCall
from .listeners import ToolCallProblem
from .telemetry import Telemetry, get_telemetry

__all__ = ["Operation", "current_operation", "get_telemetry"]

current_operation: ContextVar[Operation | None] = ContextVar("tooltap_operation", default=None)

_CALL_OUTCOMES = ("undeclared_tool", "invalid_tool_name", "schema_violation")
#: Makes ``end`` run once per operation (held for two statements: one lock serves them all).
_END_LOCK = new_lock()
_STOPPED_BY_APP = ("truncated_stream", "truncated_json")


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
        self.tel = tel
        self.dialect = dialect
        self.owner = owner
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
        self._adopted = span is not None
        self._span_content = span_content
        conversation = current_conversation.get()
        if span is None:
            start = dict(self.attributes)
            if stream is not None:
                start[sc.GEN_AI_REQUEST_STREAM] = stream
            if params:  # the request's gen_ai.request.* parameters
                start.update(params)
            if conversation is not None:
                start[sc.GEN_AI_CONVERSATION_ID] = conversation
            span = tel.tracer.start_span(self._name(), kind=SpanKind.CLIENT, attributes=start)
        self.span = span
        self.request_info: RequestInfo | None = None
        self.request_body = request_body
        self.conversation = conversation
        self._parsed_request: RequestInfo | None = None
        self._accounted: RequestInfo | None = None
        self._opened: list[OpenCall] = []
        self._started = time.monotonic()
        self.attempt_started = self._started  # when the current attempt's request was sent
        self._span_context: Context | None = None
        self._ended = False
        self._held = False
        self._attempts = 0
        self._resends = 0
        self._retry_error: ErrorClass | None = None  # failed attempt not yet followed by another
        self._failure: ErrorClass | None = None  # the outcome so far, None = success
        self._ttfc_recorded = False
        self._delivered: set[int] = set()
        self._delivered_ids: set[str] = set()
        self._handing = False  # the SDK call that hands this response to the app is running
        self._stash: list[ToolCall] = []  # calls parsed while it runs: the app has none yet
        self._stash_response: str | None = None
        self._counts: list[tuple[OpenCall, str, str]] = []  # (entry, label, outcome) to count
        self._undelivered: set[OpenCall] = set()
        self._sdk_error: ErrorClass | None = None
        self._output: list[dict[str, Any]] | None = None
        tel.open_operations.add(self)

    def _name(self) -> str:
        operation = self.attributes[sc.GEN_AI_OPERATION_NAME]
        return f"{operation} {self.request_model}" if self.request_model else str(operation)

    def _owns(self, key: str) -> bool:
        """Whether tooltap writes ``key``: any on its own span, ``tooltap.*`` on an adopted one."""
        return not self._adopted or key.startswith(sc.TOOLTAP_PREFIX)

    def _set(self, key: str, value: Any) -> None:
        """Set an attribute tooltap owns, while the span records (an adopted span may end first)."""
        if self._owns(key) and self.span.is_recording():
            self.span.set_attribute(key, value)

    def _context(self) -> Context:
        """A context with the span current (for metric exemplars and tool spans), built once."""
        context = self._span_context
        if context is None:
            context = self._span_context = trace.set_span_in_context(self.span)
        return context

    def _event(self, name: str, attributes: dict[str, Any]) -> None:
        if self.span.is_recording():
            self.span.add_event(name, attributes)

    # --- attempts --------------------------------------------------------------------------

    def request(self, dialect: str) -> RequestInfo | None:
        """The request read from the SDK's body object (once), or None without one."""
        if self.request_body is None or dialect != self.dialect:
            return None
        if self._parsed_request is None:
            self._parsed_request = parse_request(self.request_body, dialect)
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

        ``x-stainless-retry-count`` gives the attempt number when present; a new
        attempt after a failed one counts ``tooltap.retries`` with that failure's type.
        ``headers``: case-insensitive (httpx ``Headers``) or with lower-case names.
        ``body`` (decoded JSON) is only used under content capture.
        """
        self._attempts += 1
        self.attempt_started = time.monotonic()
        retry_count = headers.get("x-stainless-retry-count")
        resend = self._attempts - 1
        if retry_count is not None and retry_count.isdigit():
            resend = max(resend, int(retry_count))
        self._resends = max(self._resends, resend)
        if self._attempts > 1:
            error_type = self._retry_error.error_type if self._retry_error else sc.ERROR_OTHER
            self.tel.instruments.retries.add(1, {**self.attributes, sc.ERROR_TYPE: error_type})
        self._retry_error = None
        self._delivered = set()
        self._delivered_ids = set()
        self._opened = []
        self._stash = []
        self._stash_response = None
        if "x-api-key" in headers and "authorization" in headers:
            self._set(sc.TOOLTAP_CONFLICTING_AUTH, True)
        if self.provider == "gcp.gen_ai" and (url_host or url_path):
            self.provider = sc.provider_name(self.dialect, url_host, url_path)
            self.attributes[sc.GEN_AI_PROVIDER_NAME] = self.provider
            self._set(sc.GEN_AI_PROVIDER_NAME, self.provider)
        if self.request_model is None and request_info.model:
            self.request_model = request_info.model
            self.attributes[sc.GEN_AI_REQUEST_MODEL] = request_info.model
            self._set(sc.GEN_AI_REQUEST_MODEL, request_info.model)
            if not self._adopted:
                self.span.update_name(self._name())
        self.request_info = request_info
        for problem in request_info.problems:
            self._problem_event(problem)
        lifecycle = self.tel.lifecycle
        if self.conversation is None:
            self.conversation = request_info.conversation_id or lifecycle.conversation_of(
                request_info.previous_response_id
            )
            if self.conversation is not None:
                self._set(sc.GEN_AI_CONVERSATION_ID, self.conversation)
        lifecycle.expire()
        if request_info is not self._accounted:  # an SDK retry re-sends the very same request
            self._accounted = request_info
            links = lifecycle.results_sent(
                request_info.tool_results,
                provider=self.provider,
                declared=request_info.tools,
                inference_span=self.span,
                conversation=self.conversation,
                previous_response=request_info.previous_response_id,
            )
            if self.span.is_recording():
                for link in links:
                    self.span.add_link(link, {sc.TOOLTAP_LINK: sc.LINK_TOOL_RESULT})
        if self.tel.config.capture_any and body is not None:
            self._content(sc.GEN_AI_INPUT_MESSAGES, input_messages(self.dialect, body))
            definitions = tool_definitions(self.dialect, body)
            if definitions and self.tel.config.content_on_span:
                self._set(sc.GEN_AI_TOOL_DEFINITIONS, to_json(definitions))

    def attempt_failed(self, error: ErrorClass) -> None:
        """The current attempt failed (status, exception, or an error inside the stream)."""
        event: dict[str, Any] = {
            sc.ERROR_TYPE: error.error_type,
            sc.TOOLTAP_RETRYABLE: error.retryable,
        }
        if error.status is not None:
            event[sc.HTTP_RESPONSE_STATUS_CODE] = error.status
        if error.retry_after is not None:
            event[sc.TOOLTAP_RETRY_AFTER] = error.retry_after
        self._event(sc.EVENT_ATTEMPT_FAILED, event)
        self.tel.instruments.provider_errors.add(
            1,
            {
                **self.attributes,
                sc.ERROR_TYPE: error.error_type,
                sc.TOOLTAP_RETRYABLE: error.retryable,
            },
        )
        self._retry_error = error
        self._failure = error

    def first_chunk(self) -> None:
        """The first body chunk of a streamed response arrived (recorded once per op)."""
        if not self._ttfc_recorded:
            self._ttfc_recorded = True
            self.tel.instruments.time_to_first_chunk.record(
                time.monotonic() - self._started,
                self.attributes,
                context=self._context(),
            )

    # --- calls and responses ---------------------------------------------------------------

    def calls_received(self, calls: list[ToolCall] | tuple[ToolCall, ...]) -> None:
        """Calls the parser just completed: validate, open their ``execute_tool`` spans.

        While the SDK call that returns the response runs (``handing``), the app has none
        of them yet: they wait for that call to return (``handed``). Each call is counted
        in ``tooltap.tool_calls`` when the operation ends, as ``not_delivered`` if the SDK
        raised on the response instead (``not_delivered``).
        """
        if self._handing:
            self._stash.extend(calls)
            self._delivered_ids.update(c.call_id for c in calls if c.call_id is not None)
            return
        info = self.request_info
        declared = info.tools if info is not None else None
        tel, delivered = self.tel, self._delivered
        for call in calls:
            if call.index in delivered:
                continue
            delivered.add(call.index)
            if call.call_id is not None:
                self._delivered_ids.add(call.call_id)
            outcome = sc.RESULT_OK
            problems = validate(call, info) if info is not None else None
            if problems:
                outcome = next((p.kind for p in problems if p.kind in _CALL_OUTCOMES), outcome)
                for problem in problems:
                    self._problem_event(problem)
                    tel.listeners.emit(
                        ToolCallProblem(problem, self.dialect, self.span.get_span_context())
                    )
            label = tel.tool_names.label(call.name, declared)
            entry = tel.lifecycle.received(
                call,
                parent=self.span,
                provider=self.provider,
                label=label,
                outcome=outcome,
                conversation=self.conversation,
                context=self._context(),
            )
            self._opened.append(entry)
            self._counts.append((entry, label, outcome))
        if self._ended:  # nothing left to wait for
            self._count_calls()

    def _count_calls(self) -> None:
        """Add the calls received so far to ``tooltap.tool_calls``, one add per label/outcome."""
        counts: dict[tuple[str, str], int] = {}
        for entry, label, outcome in self._counts:
            if entry in self._undelivered:
                outcome = sc.RESULT_NOT_DELIVERED
            counts[label, outcome] = counts.get((label, outcome), 0) + 1
        self._counts = []
        for (label, outcome), count in counts.items():
            self.tel.instruments.tool_calls.add(
                count,
                {
                    sc.GEN_AI_OPERATION_NAME: sc.OPERATION_EXECUTE_TOOL,
                    sc.GEN_AI_PROVIDER_NAME: self.provider,
                    sc.GEN_AI_TOOL_NAME: label,
                    sc.TOOLTAP_OUTCOME: outcome,
                },
            )

    def handing(self) -> None:
        """The SDK call that hands the response to the app starts: calls wait for its return."""
        self._handing = True

    def handed(self) -> None:
        """That SDK call returned: the app has the response; its calls are received now."""
        if not self._handing:
            return
        self._handing = False
        stash, self._stash = self._stash, []
        if stash:
            self.calls_received(stash)
        response, self._stash_response = self._stash_response, None
        if self.tel.lifecycle.responded(response, self._opened, self.conversation):
            self._replayed()

    def not_delivered(self, exc: BaseException) -> None:
        """The SDK raised instead of handing the response to the app.

        The calls still waiting for the SDK call are counted as ``not_delivered`` and
        get no span. Unless the SDK call was cancelled (the app stopped it), the calls
        already opened from this attempt's response are ended as ``not_delivered`` too,
        and the operation ends with the SDK's error unless a transport error came first.
        """
        self._handing = False
        stash, self._stash = self._stash, []
        self._stash_response = None
        info = self.request_info
        declared = info.tools if info is not None else None
        counts: dict[str, int] = {}
        seen: set[int] = set()
        for call in stash:
            if call.index not in self._delivered and call.index not in seen:
                seen.add(call.index)
                label = self.tel.tool_names.label(call.name, declared)
                counts[label] = counts.get(label, 0) + 1
        for label, count in counts.items():
            self.tel.instruments.tool_calls.add(
                count,
                {
                    sc.GEN_AI_PROVIDER_NAME: self.provider,
                    sc.GEN_AI_TOOL_NAME: label,
                    sc.TOOLTAP_OUTCOME: sc.RESULT_NOT_DELIVERED,
                },
            )
        if not isinstance(exc, Exception):
            return
        self._sdk_error = classify_error(None, {}, None, exc)
        opened = [e for e in self._opened if e.span is not None]
        self._undelivered.update(opened)
        self.tel.lifecycle.not_delivered(opened)

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
        self._failure = None
        self.calls_received(parsed.calls)
        self._response_attributes(parsed)
        problems = parsed.problems
        ended_by_error = any(p.kind == "error_event" for p in problems)
        if closed_early and not parsed.complete and not ended_by_error:  # else the provider's
            if not by_sdk:
                self.record_closed_early()
            problems = tuple(p for p in problems if p.kind not in _STOPPED_BY_APP)
        for problem in problems:
            self.record_problem(problem)
            failure = failure or classify_problem(problem)
        if self._handing:  # tagged when the SDK hands the response over
            self._stash_response = parsed.response_id
        elif self.tel.lifecycle.responded(parsed.response_id, self._opened, self.conversation):
            self._replayed()
        if failure is not None:
            self.attempt_failed(failure)
        self._forced_tool_choice(parsed)
        if self.tel.config.capture_any:
            self._output = output_messages(parsed, body)
            self._content(sc.GEN_AI_OUTPUT_MESSAGES, self._output)

    def _response_attributes(self, parsed: Parsed) -> None:
        attributes: dict[str, Any] = {}  # set in one call: one lock, one validation pass
        if parsed.response_id:
            attributes[sc.GEN_AI_RESPONSE_ID] = parsed.response_id
        if parsed.model:
            attributes[sc.GEN_AI_RESPONSE_MODEL] = parsed.model
        failed = not parsed.complete and any(p.kind == "error_event" for p in parsed.problems)
        if parsed.finish_reason or failed:  # an error that ended the response outranks it
            raw = parsed.finish_reason or ""
            reason = "error" if failed else sc.finish_reason(raw, bool(parsed.calls))
            attributes[sc.GEN_AI_RESPONSE_FINISH_REASONS] = (reason,)
        usage = parsed.usage
        if usage is not None:
            for key, value, token_type in (
                (sc.GEN_AI_USAGE_INPUT_TOKENS, usage.input_tokens, "input"),
                (sc.GEN_AI_USAGE_OUTPUT_TOKENS, usage.output_tokens, "output"),
                (sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, usage.cache_read_input_tokens, None),
                (
                    sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
                    usage.cache_creation_input_tokens,
                    None,
                ),
            ):
                if value is None:
                    continue
                attributes[key] = value
                if token_type is not None:
                    self.tel.instruments.token_usage.record(
                        value,
                        {**self.attributes, sc.GEN_AI_TOKEN_TYPE: token_type},
                        context=self._context(),
                    )
        if attributes and not self._adopted and self.span.is_recording():
            self.span.set_attributes(attributes)

    def _replayed(self) -> None:
        """This response's id came before (a cache, a re-sent response): say so per call."""
        for entry in self._opened:
            attributes: dict[str, Any] = {sc.GEN_AI_TOOL_NAME: entry.name}
            if entry.call_id is not None:
                attributes[sc.GEN_AI_TOOL_CALL_ID] = entry.call_id
            if entry.index >= 0:
                attributes[sc.TOOLTAP_TOOL_CALL_INDEX] = entry.index
            self._event(sc.EVENT_CALL_REPLAYED, attributes)

    def _problem_event(self, problem: Problem) -> None:
        event: dict[str, Any] = {sc.TOOLTAP_PROBLEM_KIND: problem.kind}
        if problem.call_index is not None:
            event[sc.TOOLTAP_TOOL_CALL_INDEX] = problem.call_index
        if problem.call_id is not None:
            event[sc.GEN_AI_TOOL_CALL_ID] = problem.call_id
        if problem.name is not None:
            event[sc.GEN_AI_TOOL_NAME] = problem.name
        if problem.detail and self.tel.config.capture_any and self._span_content:  # may quote args
            event[sc.TOOLTAP_PROBLEM_DETAIL] = problem.detail
        self._event(sc.EVENT_PROBLEM, event)

    def record_closed_early(self) -> None:
        """The app stopped reading the body before its end (not a failure)."""
        self._set(sc.TOOLTAP_STREAM_CLOSED_EARLY, True)

    def record_problem(self, problem: Problem) -> None:
        """A parser problem: event, metric (per call or per response), listeners.

        A problem about a call this attempt delivered annotates that call (counted once,
        as delivered); any other per-call problem is a broken call: counted with its
        kind, and given its span (or its id remembered) by the lifecycle. Credentials a
        provider's message echoes are masked, for the span and the listeners alike.
        """
        problem = redacted(problem)
        self._problem_event(problem)
        if problem.call_index is None and problem.call_id is None:
            self.tel.instruments.stream_problems.add(
                1, {**self.attributes, sc.TOOLTAP_PROBLEM_KIND: problem.kind}
            )
        elif problem.call_id not in self._delivered_ids:  # a broken call
            declared = self.request_info.tools if self.request_info is not None else None
            label = self.tel.tool_names.label(problem.name, declared)
            self.tel.instruments.tool_calls.add(
                1,
                {
                    sc.GEN_AI_OPERATION_NAME: sc.OPERATION_EXECUTE_TOOL,
                    sc.GEN_AI_PROVIDER_NAME: self.provider,
                    sc.GEN_AI_TOOL_NAME: label,
                    sc.TOOLTAP_OUTCOME: problem.kind,
                },
            )
            entry = self.tel.lifecycle.broken(
                problem,
                parent=self.span,
                provider=self.provider,
                label=label,
                dialect=self.dialect,
                conversation=self.conversation,
            )
            if entry is not None:
                self._opened.append(entry)
        self.tel.listeners.emit(
            ToolCallProblem(problem, self.dialect, self.span.get_span_context())
        )

    def _forced_tool_choice(self, parsed: Parsed) -> None:
        choice = self.request_info.tool_choice if self.request_info is not None else None
        if choice is None or not (choice == "any" or choice.startswith("tool:")):
            return
        wanted = choice[5:] if choice.startswith("tool:") else None
        honored = any(wanted is None or c.name == wanted for c in parsed.calls)
        self.tel.instruments.forced_tool_choice.add(
            1, {**self.attributes, sc.TOOLTAP_HONORED: honored}
        )

    def _content(self, key: str, messages: list[dict[str, Any]]) -> None:
        if self.tel.config.content_on_span and self._owns(key):
            self._set(key, to_json(messages))
        events = self.tel.events
        if events is not None:
            events.emit(
                event_name=sc.EVENT_INFERENCE_DETAILS,
                attributes={**self.attributes, key: to_json(messages)},
                context=self._context(),
            )

    # --- ending ----------------------------------------------------------------------------

    def hold_until_stream_end(self) -> None:
        """The tap hands on a body unread: the op must outlive the SDK call until it ends."""
        self._held = True

    @property
    def held(self) -> bool:
        """Whether a tapped body, not the SDK wrapper, will end this op."""
        return self._held

    @property
    def ended(self) -> bool:
        """Whether ``end`` already ran."""
        return self._ended

    def abandon(self) -> None:
        """Flush or exit came before the body ended (the app dropped it unclosed): end now."""
        if not self._ended:
            self.record_closed_early()
            self.end()

    def release(self, exc: BaseException | None = None, error: ErrorClass | None = None) -> None:
        """The tapped body ended: end the op, unless the SDK call that owns it is still running."""
        if self.owner == "transport" or (self._held and current_operation.get() is not self):
            self.end(exc, error)
        else:
            self._held = False

    def end(self, exc: BaseException | None = None, error: ErrorClass | None = None) -> None:
        """End the operation once: duration metric, resend count, error type and status."""
        with _END_LOCK:
            if self._ended:
                return
            self._ended = True
        self.tel.open_operations.discard(self)
        try:
            if self._handing:  # ended before the SDK call that hands the response over
                if exc is None:
                    self.handed()
                else:
                    self.not_delivered(exc)
            if error is None and exc is not None:
                error = classify_error(None, {}, None, exc)
            error = error or self._sdk_error or self._failure
            attributes = dict(self.attributes)
            if self._resends:
                self._set(sc.HTTP_REQUEST_RESEND_COUNT, self._resends)
            if error is not None:
                attributes[sc.ERROR_TYPE] = error.error_type
                self._set(sc.ERROR_TYPE, error.error_type)
                self._set(sc.TOOLTAP_ERROR_TYPE, error.error_type)
                if not self._adopted and self.span.is_recording():
                    self.span.set_status(Status(StatusCode.ERROR, error.error_type))
            if self._counts:
                self._count_calls()
            duration = time.monotonic() - self._started
            self.tel.instruments.operation_duration.record(
                duration, attributes, context=self._context()
            )
        finally:  # a recording failure (a tooltap bug) must not leave the span open
            if not self._adopted:
                self.span.end()
