"""One LLM request/response on a transport: parse the request, start its attempt, settle a failure.

Shared by the transport taps (httpx/httpx2 and aiohttp). ``begin`` reads ``url``
(with ``path``, ``host``, ``port``, ``scheme``), ``content`` and ``headers`` of a
request; each tap settles the response its own library returns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextvars import ContextVar, Token
from typing import Any, Final

from opentelemetry import context, trace

from .._core._json import loads
from .._core.dialects import TABLE
from .._core.errors import classify_error
from .._core.model import RequestInfo
from .._core.request import parse_request
from .._telemetry import semconv as sc
from .._telemetry.operation import Operation, current_operation
from .._telemetry.settlement import Event
from .._telemetry.telemetry import Telemetry

__all__ = ["Exchange", "arg", "begin", "in_send", "json_body", "request_content"]

_DEFAULT_PORTS: Final = {"https": 443, "http": 80}

#: True while the httpx tap records an async send: a transport below httpx that sends through
#: aiohttp (``httpx_aiohttp``, openai's ``DefaultAioHttpClient``) is not recorded again.
in_send: ContextVar[bool] = ContextVar("tooltap_in_send", default=False)


class Exchange:
    """One LLM request/response: the attempt's operation and request info."""

    __slots__ = ("info", "op", "token")

    def __init__(self, op: Operation, info: RequestInfo, token: Token[Any] | None) -> None:
        self.op = op
        self.info = info
        self.token = token

    def failed(self, exc: BaseException) -> None:
        """The send raised: a failed attempt, or (not an ``Exception``) the app cancelled it;
        a transport-owned op ends with it."""
        self.detach()
        if not isinstance(exc, Exception):
            self.op.cancelled()
            self.op.report(Event.SEND_FAILED)
            return
        error = classify_error(None, {}, None, exc)
        self.op.attempt_failed(error)
        self.op.report(Event.SEND_FAILED, exc, error)

    def detach(self) -> None:
        """Leave the transport-owned span's context (once; later calls do nothing)."""
        token, self.token = self.token, None
        if token is not None:
            context.detach(token)


def arg(args: Sequence[Any], kwargs: Mapping[str, Any], index: int, name: str) -> Any:
    """The argument passed at ``index`` or as ``name`` (None when absent)."""
    if len(args) > index:
        return args[index]
    return kwargs.get(name)


def json_body(body: bytes) -> Any:
    """``body`` as JSON, or None when it is not JSON."""
    try:
        return loads(body)
    except ValueError:
        return None


def request_content(request: Any) -> bytes:
    """The request's body bytes; empty for a streaming body (nothing to parse)."""
    try:
        content: bytes = request.content
    except Exception:  # noqa: BLE001 - a streaming request body: nothing to parse
        return b""
    return content


def begin(tel: Telemetry, request: Any, dialect: str, path: str | None = None) -> Exchange:
    """Parse the request and start its attempt on the right operation (``path``: the
    URL's, when the caller has it already)."""
    url = request.url
    if path is None:
        path = str(url.path)
    op = current_operation.get()
    prepared = op.request(dialect) if op is not None and not op.ended else None
    capture = tel.config.capture_any
    content = request_content(request) if prepared is None or capture else b""
    if prepared is not None:  # the SDK's own body object: no bytes to decode again
        info = prepared
    else:
        horizon = tel.lifecycle.horizon
        info = parse_request(content, dialect, horizon) if content else RequestInfo(dialect)
    info = TABLE[dialect].from_path(info, path)
    host: str = url.host
    port = url.port or _DEFAULT_PORTS.get(url.scheme)
    owned = op is None or op.ended
    if op is None or op.ended:
        op = Operation(
            tel,
            dialect=dialect,
            request_model=info.model,
            server_address=host or None,
            server_port=port,
            stream=info.stream,
            owner="transport",
            provider_name=sc.provider_name(dialect, host, path),
        )
    body = json_body(content) if content and capture else None
    op.begin_attempt(info, request.headers, url_host=host, url_path=path, body=body)
    # Last step (nothing after it can fail): the span is current while the send runs.
    token = context.attach(trace.set_span_in_context(op.span)) if owned else None
    return Exchange(op, info, token)
