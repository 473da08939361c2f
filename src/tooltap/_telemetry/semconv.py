"""Every telemetry name tooltap emits, defined once (GenAI semantic conventions + ``tooltap.*``).

The GenAI conventions are still ``Development``: when upstream renames something, edit
only this module. Prometheus names follow the exporter's translation (``.`` -> ``_``,
unit suffix, ``_total`` on counters); ``PROMETHEUS_NAMES`` lists them for dashboards.
"""

from __future__ import annotations

from typing import Final

from .._core.dialects import TABLE

SCHEMA_URL: Final = "https://opentelemetry.io/schemas/gen-ai-dev/1.42.0-dev"
INSTRUMENTATION_NAME: Final = "tooltap"

#: Renames in upstream drafts whose merge is unconfirmed: current name -> draft name.
#: ``DRAFT_NAMES = True`` switches every one of them (and ``PROMETHEUS_NAMES``, which the
#: dashboards follow). Not a rename, so not here: the draft also replaces the
#: ``gen_ai.client.token.usage`` histogram by ``gen_ai.client.inference.usage.*`` counters.
DRAFT_RENAMES: Final = {
    "gen_ai.client.operation.duration": "gen_ai.client.inference.duration",
    "gen_ai.usage.cache_creation.input_tokens": "gen_ai.usage.cache_write.input_tokens",
}
DRAFT_NAMES: Final = False


def _named(name: str, draft: bool = DRAFT_NAMES) -> str:
    """``name``, or its draft rename when ``draft``."""
    return DRAFT_RENAMES.get(name, name) if draft else name


# --- span / metric attributes (GenAI semconv) ---
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME: Final = "gen_ai.provider.name"
GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_REQUEST_STREAM: Final = "gen_ai.request.stream"
GEN_AI_REQUEST_MAX_TOKENS: Final = "gen_ai.request.max_tokens"
GEN_AI_REQUEST_TEMPERATURE: Final = "gen_ai.request.temperature"
GEN_AI_REQUEST_TOP_P: Final = "gen_ai.request.top_p"
GEN_AI_REQUEST_TOP_K: Final = "gen_ai.request.top_k"
GEN_AI_REQUEST_SEED: Final = "gen_ai.request.seed"
GEN_AI_REQUEST_STOP_SEQUENCES: Final = "gen_ai.request.stop_sequences"
GEN_AI_RESPONSE_MODEL: Final = "gen_ai.response.model"
GEN_AI_RESPONSE_ID: Final = "gen_ai.response.id"
GEN_AI_RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
GEN_AI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"
#: Tokens written to the prompt cache (the drafts rename it ``cache_write``: ``DRAFT_NAMES``).
GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: Final = _named("gen_ai.usage.cache_creation.input_tokens")
GEN_AI_TOKEN_TYPE: Final = "gen_ai.token.type"
GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
GEN_AI_TOOL_TYPE: Final = "gen_ai.tool.type"
GEN_AI_TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
GEN_AI_INPUT_MESSAGES: Final = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
GEN_AI_TOOL_DEFINITIONS: Final = "gen_ai.tool.definitions"
SERVER_ADDRESS: Final = "server.address"
SERVER_PORT: Final = "server.port"
ERROR_TYPE: Final = "error.type"
HTTP_RESPONSE_STATUS_CODE: Final = "http.response.status_code"
HTTP_REQUEST_RESEND_COUNT: Final = "http.request.resend_count"

# --- tooltap's own attributes ---
TOOLTAP_PREFIX: Final = "tooltap."  # the only attributes tooltap writes on a span it adopted
#: tooltap's error class of a failed inference, on every inference span (owned or adopted).
TOOLTAP_ERROR_TYPE: Final = "tooltap.error.type"
TOOLTAP_OUTCOME: Final = "tooltap.outcome"
TOOLTAP_RESULT: Final = "tooltap.result"
TOOLTAP_PROBLEM_KIND: Final = "tooltap.problem.kind"
TOOLTAP_PROBLEM_DETAIL: Final = "tooltap.problem.detail"
TOOLTAP_TOOL_CALL_INDEX: Final = "tooltap.tool_call.index"
TOOLTAP_RETRYABLE: Final = "tooltap.retryable"
TOOLTAP_RETRY_AFTER: Final = "tooltap.retry_after"
TOOLTAP_HONORED: Final = "tooltap.honored"
TOOLTAP_COMPONENT: Final = "tooltap.component"
TOOLTAP_LINK: Final = "tooltap.link"
TOOLTAP_CONFLICTING_AUTH: Final = "tooltap.request.conflicting_auth"
TOOLTAP_STREAM_CLOSED_EARLY: Final = "tooltap.stream.closed_early"
TOOLTAP_SIDE_EFFECTS: Final = "tooltap.tool.side_effects"
TOOLTAP_HANDLER_DURATION: Final = "tooltap.tool.handler.duration"
TOOLTAP_TOOL_ATTEMPTS: Final = "tooltap.tool.attempts"  # handler runs for the call
TOOLTAP_TOOL_REPLAYED: Final = "tooltap.tool.replayed"  # answered from the ledger, not run
TOOLTAP_LEDGER_STATE: Final = "tooltap.ledger.state"  # done | pending (outcome unknown)
TOOLTAP_IN_DOUBT_REASON: Final = "tooltap.in_doubt.reason"  # pending | timeout
#: On a framework's tool span that tooltap adopted as the call's ``execute_tool`` span.
TOOLTAP_TOOL_SPAN: Final = "tooltap.tool_span"
#: Values of the span (or event) cut to their limit (``_telemetry.sanitize``).
TOOLTAP_TRUNCATED: Final = "tooltap.truncated"

# --- values ---
OPERATION_CHAT: Final = "chat"
OPERATION_GENERATE_CONTENT: Final = "generate_content"
OPERATION_EXECUTE_TOOL: Final = "execute_tool"
TOOL_TYPE_FUNCTION: Final = "function"
LINK_TOOL_RESULT: Final = "tool_result"
TOOL_SPAN_ADOPTED: Final = "adopted"
UNDECLARED_TOOL: Final = "_undeclared"
OTHER_TOOL: Final = "_other"
ERROR_OTHER: Final = "_OTHER"
ERROR_TOOL: Final = "tool_error"
RESULT_OK: Final = "ok"
RESULT_ERROR: Final = "error"
RESULT_ORPHANED: Final = "orphaned"
#: A call whose conversation moved past it without a structured result (sent as text).
RESULT_UNANSWERED: Final = "unanswered"
#: A call of an output tool (``Config.output_tools``) the framework consumed itself.
RESULT_OUTPUT: Final = "output"
RESULT_DUPLICATE: Final = "duplicate"
RESULT_UNKNOWN_CALL: Final = "unknown_call"
#: A call the tap parsed from a response the SDK then raised on: the app never got it.
RESULT_NOT_DELIVERED: Final = "not_delivered"
#: ``tooltap.outcome`` of an inference span the app cancelled (not an error: no ``error.type``).
OUTCOME_CANCELLED: Final = "cancelled"

# --- events ---
EVENT_ATTEMPT_FAILED: Final = "gen_ai.client.attempt.failed"
EVENT_PROBLEM: Final = "tooltap.problem"
EVENT_DUPLICATE_RESULT: Final = "tooltap.tool_result.duplicate"
EVENT_INFERENCE_DETAILS: Final = "gen_ai.client.inference.operation.details"
EVENT_TOOL_RETRY: Final = "tooltap.tool.retry"  # tool span: a handler attempt failed, retried
EVENT_TOOL_REPLAYED: Final = "tooltap.tool.replayed"  # tool span: the ledger's result was sent
EVENT_CALL_REPLAYED: Final = "tooltap.tool_call.replayed"  # inference span: a response came again
EVENT_TOOL_IN_DOUBT: Final = "tooltap.tool.in_doubt"  # tool span: a side effect's outcome unknown
#: inference span: the result of a call whose tool span was a framework's (ended before it).
EVENT_ADOPTED_RESULT: Final = "tooltap.tool_result"

# --- metrics: name -> (kind, unit, description) ---
OPERATION_DURATION: Final = _named("gen_ai.client.operation.duration")
TOKEN_USAGE: Final = "gen_ai.client.token.usage"
TIME_TO_FIRST_CHUNK: Final = "gen_ai.client.operation.time_to_first_chunk"
EXECUTE_TOOL_DURATION: Final = "gen_ai.execute_tool.duration"
TOOL_CALLS: Final = "tooltap.tool_calls"
STREAM_PROBLEMS: Final = "tooltap.stream.problems"
TOOL_RESULTS: Final = "tooltap.tool_results"
TOOL_CALL_DURATION: Final = "tooltap.tool_call.duration"
RETRIES: Final = "tooltap.retries"
PROVIDER_ERRORS: Final = "tooltap.provider.errors"
FORCED_TOOL_CHOICE: Final = "tooltap.forced_tool_choice"
INTERNAL_ERRORS: Final = "tooltap.internal_errors"

METRICS: Final[dict[str, tuple[str, str, str]]] = {
    OPERATION_DURATION: ("histogram", "s", "GenAI operation duration, all attempts included."),
    TOKEN_USAGE: ("histogram", "{token}", "Tokens used per operation, by token type."),
    TIME_TO_FIRST_CHUNK: ("histogram", "s", "Time until the first chunk of a streamed response."),
    EXECUTE_TOOL_DURATION: ("histogram", "s", "Duration of a tool's execution by the harness."),
    TOOL_CALLS: ("counter", "{call}", "Tool calls received, by outcome."),
    STREAM_PROBLEMS: ("counter", "{problem}", "Response-level problems, by kind."),
    TOOL_RESULTS: ("counter", "{result}", "Tool results sent back, by result."),
    TOOL_CALL_DURATION: ("histogram", "s", "Time from a tool call received to its result sent."),
    RETRIES: ("counter", "{retry}", "Attempts retried, by the failed attempt's error type."),
    PROVIDER_ERRORS: ("counter", "{error}", "Failed attempts, by error type."),
    FORCED_TOOL_CHOICE: ("counter", "{response}", "Responses to a forced tool_choice."),
    INTERNAL_ERRORS: ("counter", "{error}", "Errors inside tooltap, contained."),
}

#: OpenTelemetry name -> the name the Prometheus exporter gives it (without _bucket etc.).
PROMETHEUS_NAMES: Final[dict[str, str]] = {
    name: name.replace(".", "_")
    + ("_seconds" if unit == "s" else "")
    + ("_total" if kind == "counter" else "")
    for name, (kind, unit, _) in METRICS.items()
}

#: The attributes of each metric's points, as docs/REFERENCE.md's Labels table shows them
#: (``python docs/tables.py``): *op* and *tool* stand for the operation's and the tool's.
METRIC_LABELS: Final[dict[str, str]] = {
    OPERATION_DURATION: ("op, `error.type` (failed operations only)"),
    TOKEN_USAGE: ("op, `gen_ai.token.type` (`input`, `output`)"),
    TIME_TO_FIRST_CHUNK: ("op (streams only)"),
    EXECUTE_TOOL_DURATION: (
        "tool, `gen_ai.tool.type` (`function`), `error.type` (failed runs only); the "
        "handler's run, recorded by the harness toolkit"
    ),
    TOOL_CALLS: (
        "tool, `tooltap.outcome` (`ok`, `invalid_json`, `truncated_json`, "
        "`schema_violation`, `undeclared_tool`, `invalid_tool_name`, "
        "`oversized_arguments`, `unexpected_shape`; `not_delivered` when the SDK raised "
        "on the response instead of handing it to the app)"
    ),
    TOOL_RESULTS: (
        "tool, `tooltap.result` (`ok`, `error`, `unanswered`, `output`, `orphaned`, "
        "`not_delivered`, `duplicate`, `unknown_call`)"
    ),
    TOOL_CALL_DURATION: (
        "tool, `tooltap.result`; received → result sent (the model's view, handler included)"
    ),
    STREAM_PROBLEMS: (
        "op, `tooltap.problem.kind` (response-level kinds: `truncated_stream`, "
        "`error_event`, `unexpected_shape`, `oversized_event`, `incomplete_response`, "
        "`stream_buffered`)"
    ),
    RETRIES: ("op, `error.type` of the failed attempt"),
    PROVIDER_ERRORS: ("op, `error.type`, `tooltap.retryable`"),
    FORCED_TOOL_CHOICE: ("op, `tooltap.honored`"),
    INTERNAL_ERRORS: ("`tooltap.component` only"),
}

DURATION_BUCKETS: Final = (
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
)  # fmt: skip
TOKEN_BUCKETS: Final = (
    1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
)  # fmt: skip


def provider_of_family(family: str) -> str:
    """``gen_ai.provider.name`` of a ``ToolCall.provider`` family, its backend unknown (the
    family's ``Dialect.provider_untold``, else the family itself)."""
    for entry in TABLE.values():
        if entry.provider == family and entry.provider_untold is not None:
            return entry.provider_untold
    return family


def operation_name(dialect: str) -> str:
    """``gen_ai.operation.name`` of a dialect (``chat``, ``generate_content`` for Google)."""
    entry = TABLE.get(dialect)
    return OPERATION_CHAT if entry is None else entry.operation_name


def provider_name(dialect: str, host: str | None = None, path: str | None = None) -> str:
    """``gen_ai.provider.name`` of a request; the dialect tells it from host and path
    (Google's backends: Vertex AI, the Gemini API, ``gcp.gen_ai`` when neither is told);
    an unknown dialect is its own name."""
    entry = TABLE.get(dialect)
    return dialect if entry is None else entry.provider_name(host, path)


def retry_count_header(dialect: str) -> str | None:
    """The request header that gives the attempt number in ``dialect`` (or None)."""
    entry = TABLE.get(dialect)
    return None if entry is None else entry.retry_count_header


def provider_untold(dialect: str) -> str | None:
    """``gen_ai.provider.name`` of ``dialect`` while host and path have not told it."""
    entry = TABLE.get(dialect)
    return None if entry is None else entry.provider_untold


#: Every dialect's finish reasons in the semconv vocabulary (the entries never disagree).
_FINISH_REASONS: Final = {
    raw: reason for entry in TABLE.values() for raw, reason in entry.finish_reasons.items()
}


def finish_reason(raw: str, has_calls: bool = False) -> str:
    """A provider's finish reason in the semconv vocabulary (``tool_call``, ``stop``...).

    Mapping ``tool_calls``/``tool_use`` to ``tool_call`` is tooltap's choice
    (unconfirmed upstream), as is ``stop`` with tool calls (Google ``STOP``, Responses
    ``completed``) -> ``tool_call``; unknown reasons pass through, lower-cased.
    """
    low = raw.lower()
    reason = _FINISH_REASONS.get(low, low)
    return "tool_call" if has_calls and reason == "stop" else reason
