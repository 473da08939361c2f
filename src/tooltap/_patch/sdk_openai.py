"""openai: one operation per Chat Completions / Responses call, all retries included.

The logical call is ``SyncAPIClient.request`` / ``AsyncAPIClient.request`` in
``openai._base_client`` (openai 3.x): it holds the retry loop (sending
``x-stainless-retry-count`` on each attempt), and every public path funnels into
it: ``chat.completions.create`` and ``.parse`` (which posts directly, not through
``create``), ``.stream`` (whose manager calls ``create`` on ``__enter__``, outside
the helper), ``responses.create/parse/stream``, ``with_raw_response`` and
``with_streaming_response``. Wrapping the resource methods instead would miss the
stream managers' deferred requests and raw-response wrappers built earlier.
Only POSTs to ``/chat/completions`` and ``/responses`` are observed, and the GETs of
``/responses/{id}`` that read a stored response back (``responses.retrieve``: a background
response polled, its stream resumed with ``starting_after``). ``Stream.__stream__``
(and the async twin), the SDK's loop over a streamed body, is wrapped so that a stream
the SDK fails on is recorded as its failure (``reader_wrappers``).

Another instrumentation's inference span may already be current for the call:
``opentelemetry-instrumentation-openai-v2`` wraps ``Completions.create`` in a CLIENT
``chat {model}`` span (its ``opentelemetry.util.genai`` handler, or its legacy tracer).
A trace must hold one inference span per call, so tooltap adopts that span, when it
records into tooltap's own provider,
(``Operation(span=...)``: attributes, events, links and tool spans go on it, and its
owner ends it) instead of nesting a second ``chat {model}`` under it. Both still
record ``gen_ai.client.*`` histograms, each under its own instrumentation scope
(``otel_scope_name`` in Prometheus); tooltap's dashboards and alerts select
``otel_scope_name="tooltap"``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Tracer

from .._telemetry import semconv as sc
from .._telemetry.inference_span import adoptable
from .._telemetry.operation import Operation
from .._telemetry.telemetry import Telemetry
from .exchange import arg
from .patchset import Patch, PatchSet
from .sdk_call import Call, wrappers
from .sdk_request import describe_body
from .sdk_stream import reader_wrappers

__all__ = ["PATCHES", "foreign_inference_span"]

_log = logging.getLogger("tooltap")
_announced: set[str] = set()


def foreign_inference_span(tracer: Tracer) -> Span | None:
    """The current span when another instrumentation's GenAI inference span (CLIENT, ``chat``)
    recording into the provider of ``tracer`` (tooltap's)."""
    span = trace.get_current_span()
    if not adoptable(span, tracer) or getattr(span, "kind", None) is not SpanKind.CLIENT:
        return None
    scope = getattr(span, "instrumentation_scope", None)
    name = getattr(scope, "name", None)
    if not name or name == sc.INSTRUMENTATION_NAME:
        return None
    attributes = getattr(span, "attributes", None) or {}
    if attributes.get(sc.GEN_AI_OPERATION_NAME) != sc.OPERATION_CHAT:
        return None
    if name not in _announced:
        _announced.add(name)
        _log.info(
            "tooltap: adopting the inference spans of %s (one span per call); its "
            "gen_ai.client.* metrics are recorded under its own scope too. To keep only "
            "tooltap's, set OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=openai_v2",
            name,
        )
    return span


@dataclass(slots=True)
class _OpenAICall(Call):
    """A Chat Completions / Responses call; adopts a current foreign inference span."""

    def open(self, tel: Telemetry) -> Operation:
        """Adopt the current foreign inference span when there is one; else start tooltap's."""
        span = foreign_inference_span(tel.tracer)
        if span is None:
            return Call.open(self, tel)  # not super(): slots dataclasses break it
        return Operation(
            tel,
            dialect=self.dialect,
            request_model=self.request_model,
            server_address=self.server_address,
            server_port=self.server_port,
            stream=self.stream,
            owner="sdk",
            span=span,
            provider_name=self.provider,
            params=self.params,
        )


def _describe(instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Call | None:
    # request(self, cast_to, options, *, stream=False, stream_cls=None)
    options = arg(args, kwargs, 1, "options")
    call = describe_body(
        str(options.method), str(options.url), options.json_data, instance.base_url, _OpenAICall
    )
    if call is not None and options.json_data is None:  # a GET: stream=True is an argument
        call.stream = kwargs.get("stream") is True
    return call


_sync, _async = wrappers(_describe)
_read_sync, _read_async = reader_wrappers(lambda stream: stream.response.stream)

PATCHES = PatchSet(
    (
        Patch("openai._base_client", "SyncAPIClient.request", _sync),
        Patch("openai._base_client", "AsyncAPIClient.request", _async),
        Patch("openai._streaming", "Stream.__stream__", _read_sync),
        Patch("openai._streaming", "AsyncStream.__stream__", _read_async),
    ),
    "openai >= 2.0, < 4",
)
