"""anthropic: one operation per Messages call, adopting anthropic's own call span.

The logical call is ``SyncAPIClient._request`` / ``AsyncAPIClient._request`` in
``anthropic._base_client`` (anthropic 1.x before ``_request`` existed: ``request``, with
the same arguments but ``call``, and the retry loop): every public path
(``messages.create``, ``.parse``,
``.stream`` whose manager sends on ``__enter__``, ``with_raw_response``,
``with_streaming_response``, ``beta.messages.*``) funnels into it, and it holds
the retry loop. Only POSTs to ``/messages`` are observed (``detect_dialect``).
``Stream.__stream__`` (and the async twin), the SDK's loop over a streamed body, is
wrapped so that a stream the SDK fails on is recorded as its failure (``reader_wrappers``).

anthropic >= 2 emits its own ``CLIENT`` "call span" when it has a tracer (an
``open_telemetry={"tracer_provider": ...}`` option, or a global SDK tracer
provider; see ``anthropic/_tracing.py``, ``get_tracer`` and
``start_api_call_span``). It starts that span in ``request`` and passes it down
as ``_request(..., call=ApiCall(span))``, current during every send. A trace must
hold one inference span per call, so when ``call.span`` exists, records, and records
into tooltap's own provider (``adoptable``) tooltap adopts it (``Operation(span=...)``)
instead of starting its own. A span of another provider (the global no-op one, when
the app hands tooltap a provider of its own) is left to anthropic: tooltap's span is
then the call's inference span.

On that span anthropic's attributes win: tooltap writes only ``tooltap.*`` ones
there (see :class:`Operation`), and content only when the client's content mode
(``ApiCall.records_content``: ``open_telemetry={"traces": {"content_mode": ...}}``
or ``ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE``) allows it as well as tooltap's.
``gen_ai.provider.name`` of the metrics and tool spans is the client's own
(``_gen_ai_provider_name``: ``gcp.vertex_ai`` for Vertex, ``aws.bedrock`` for
Bedrock), as on anthropic's span.

anthropic ends its span before tooltap's operation ends (``_request`` ends it
before returning a parsed Message; ``Stream.close`` ends it before closing the
body that tooltap taps), which would drop tooltap's last attributes. So anthropic
is handed a :class:`_HeldSpan` in ``call.span``: its ``end()`` is deferred until
the operation has ended, keeping anthropic's end time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import wrapt
from opentelemetry.trace import Span

from .._core.model import ErrorClass
from .._quietly import quietly
from .._telemetry.inference_span import adoptable
from .._telemetry.operation import Operation
from .._telemetry.telemetry import Telemetry
from .exchange import arg
from .patchset import Patch, PatchSet
from .sdk_call import Call, wrappers
from .sdk_request import describe_body
from .sdk_stream import reader_wrappers

__all__ = ["PATCHES"]


class _HeldSpan(wrapt.BaseObjectProxy[Span]):
    """anthropic's span as anthropic sees it: ``end()`` waits for tooltap's operation."""

    def __init__(self, span: Span) -> None:
        super().__init__(span)
        self._self_end_time: int | None = None
        self._self_released = False

    def end(self, end_time: int | None = None) -> None:
        """Remember anthropic's end time; end the span now only if tooltap is done."""
        if self._self_end_time is not None:
            return
        self._self_end_time = end_time if end_time is not None else time.time_ns()
        if self._self_released:
            self.__wrapped__.end(self._self_end_time)

    def is_recording(self) -> bool:
        """As anthropic expects: False once it has ended the span."""
        return self._self_end_time is None and bool(self.__wrapped__.is_recording())

    def release(self) -> None:
        """tooltap's operation ended: end the span if anthropic already asked to."""
        if self._self_released:
            return
        self._self_released = True
        if self._self_end_time is not None:
            self.__wrapped__.end(self._self_end_time)


class _AdoptedOperation(Operation):
    """An operation on anthropic's span; ending it releases that span to anthropic."""

    _tooltap_held: _HeldSpan | None = None

    def end(self, exc: BaseException | None = None, error: ErrorClass | None = None) -> None:
        """End the operation, then let anthropic's deferred ``end()`` through."""
        try:
            super().end(exc, error)
        finally:
            held = self._tooltap_held
            if held is not None:
                quietly(held.release)


@dataclass(slots=True)
class _AnthropicCall(Call):
    """A Messages call; ``api_call`` is anthropic's ``ApiCall`` when it traces the call."""

    api_call: Any = None

    def open(self, tel: Telemetry) -> Operation:
        """Adopt anthropic's span when it has one; otherwise start tooltap's own."""
        span = getattr(self.api_call, "span", None)
        if span is None or isinstance(span, _HeldSpan) or not adoptable(span, tel.tracer):
            return Call.open(self, tel)  # not super(): slots dataclasses break it
        op = _AdoptedOperation(
            tel,
            dialect=self.dialect,
            request_model=self.request_model,
            server_address=self.server_address,
            server_port=self.server_port,
            stream=self.stream,
            owner="sdk",
            span=span,
            span_content=getattr(self.api_call, "records_content", False) is True,
            provider_name=self.provider,
            params=self.params,
            request_body=self.body,
        )
        held = _HeldSpan(span)
        op._tooltap_held = held
        self.api_call.span = held
        return op


def _describe(instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Call | None:
    # _request(self, cast_to, options, *, stream, stream_cls, call=None)
    options = arg(args, kwargs, 1, "options")
    call = describe_body(
        str(options.method), str(options.url), options.json_data, instance.base_url, _AnthropicCall
    )
    if call is None:
        return None
    provider = getattr(instance, "_gen_ai_provider_name", None)
    if isinstance(provider, str) and provider:
        call.provider = provider
    call.api_call = kwargs.get("call")
    return call


_sync, _async = wrappers(_describe)
_read_sync, _read_async = reader_wrappers(lambda stream: stream.response.stream)

PATCHES = PatchSet(
    (
        Patch("anthropic._base_client", "SyncAPIClient._request", _sync, "SyncAPIClient.request"),
        Patch(
            "anthropic._base_client", "AsyncAPIClient._request", _async, "AsyncAPIClient.request"
        ),
        Patch("anthropic._streaming", "Stream.__stream__", _read_sync),
        Patch("anthropic._streaming", "AsyncStream.__stream__", _read_async),
    ),
    "anthropic >= 1.0, < 3",
)
