"""botocore: one operation per ``bedrock-runtime`` ``converse`` / ``converse_stream`` call.

boto3 sends through botocore and urllib3, which the httpx tap never sees, so this module
is both the SDK layer and the transport tap of Bedrock Converse:

* ``BaseClient._make_api_call`` is the logical call (every boto3 client method funnels
  into it, above botocore's retry loop): a ``Converse``/``ConverseStream`` call of a
  ``bedrock-runtime`` client runs in one :class:`Operation`; every other call passes
  straight through.
* ``Endpoint._send`` is one HTTP attempt (botocore's retries send again): while such an
  operation is current and the request's path is a Converse path, the attempt is begun
  on it. botocore reads every body but a stream's inside the send: that body is parsed
  at once. A stream's ``raw`` body (urllib3's) is replaced by a proxy that hands every
  chunk botocore reads to a ``TapState``, unchanged. A ConverseStream body is
  parsed as AWS event-stream; the ``EventStream`` the app iterates reads through the
  proxy, so what it yields is botocore's own parse of the same bytes. Its ``__iter__``,
  botocore's loop over the body, is wrapped (``reader_wrappers``): a stream botocore
  raises on (an exception event) settles with that failure, its calls not delivered.
* With a flight recorder, each response is recorded as the httpx tap records one: a
  body read in the send whole, a stream chunk by chunk (its framing, event-stream, kept).

A failed attempt is classed by its status, ``x-amzn-errortype`` and body; the operation
ends with the app's ``ClientError`` (classed by its ``Error.Code``) when botocore gives up.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final
from urllib.parse import quote, urlsplit

from .._core.detect import detect_dialect
from .._core.dialects import TABLE
from .._core.errors import classify_error
from .._core.stream import parse_response
from .._quietly import quietly
from .._telemetry.operation import Operation, current_operation
from .._telemetry.settlement import Event
from .._telemetry.telemetry import get_telemetry
from .exchange import Exchange, arg, json_body
from .patchset import Patch, PatchSet
from .sdk_call import Call, wrappers
from .sdk_request import filtering, observed, request_params, server_of
from .sdk_stream import reader_wrappers
from .tap_proxy import TapSyncStream, tap_sync
from .tap_stream import TapState

__all__ = ["PATCHES"]

_SERVICE: Final = "bedrock-runtime"
#: The operations observed, and whether each streams.
_OPERATIONS: Final = {"Converse": False, "ConverseStream": True}
_EVENTSTREAM: Final = "application/vnd.amazon.eventstream"


def _path(model: str, stream: bool) -> str:
    return f"/model/{quote(model, safe='')}/converse" + ("-stream" if stream else "")


def _describe(instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Call | None:
    # _make_api_call(self, operation_name, api_params)
    operation = arg(args, kwargs, 0, "operation_name")
    stream = _OPERATIONS.get(operation) if isinstance(operation, str) else None
    if stream is None or instance.meta.service_model.service_name != _SERVICE:
        return None
    params = arg(args, kwargs, 1, "api_params")
    params = params if isinstance(params, dict) else {}
    model = params.get("modelId")
    dialect = detect_dialect("POST", _path(model if isinstance(model, str) else "-", stream))
    if dialect is None:
        return None
    url = str(instance.meta.endpoint_url)
    address, port = server_of(url)
    if filtering() and not observed(address, url):
        return None
    return Call(
        dialect=dialect,
        request_model=model if isinstance(model, str) else None,
        server_address=address,
        server_port=port,
        stream=stream,
        params=request_params(dialect, params),
        body=params,
    )


def _begin(op: Operation, request: Any) -> Exchange | None:
    """The attempt of ``op`` this request is, or None for another request."""
    parts = urlsplit(str(request.url))
    dialect = detect_dialect(str(request.method), parts.path)
    if dialect != op.dialect:
        return None  # (credentials, a redirect...): not the Converse request itself
    info = op.request(dialect)
    if info is None:
        return None
    info = TABLE[dialect].from_path(info, parts.path)
    headers = {str(k).lower(): str(v) for k, v in request.headers.items()}
    body = request.body
    decoded = json_body(body) if op.tel.config.capture_any and isinstance(body, bytes) else None
    op.begin_attempt(info, headers, url_host=parts.hostname, url_path=parts.path, body=decoded)
    return Exchange(op, info, None)


def _responded(exchange: Exchange, response: Any) -> None:
    """Settle a body botocore has read already, or tap its raw body (read later)."""
    op, info = exchange.op, exchange.info
    status = int(response.status_code)
    headers = {str(k).lower(): str(v) for k, v in response.headers.items()}
    content = getattr(response, "_content", None)
    flight, path = op.tel.flight, urlsplit(str(response.url)).path
    if isinstance(content, bytes):  # read in the send (every response but a stream's)
        if not 200 <= status < 300:
            error = classify_error(status, headers, content)
            op.attempt_failed(error)
            if flight is not None:
                quietly(flight.whole, op, path, status, headers, content, error=error)
            op.report(Event.BODY_ENDED, error=error)
            return
        body = json_body(content) if op.tel.config.capture_any else None
        parsed = parse_response(content, info.dialect, limits=op.tel.config.limits)
        op.record_parsed(parsed, info, body=body)
        if flight is not None:
            quietly(flight.whole, op, path, status, headers, content, parsed=parsed)
        op.report(Event.BODY_ENDED)
        return
    if not 200 <= status < 300:
        state = TapState(op, info, mode="error", status=status, headers=headers)
    elif headers.get("content-type", "").startswith(_EVENTSTREAM):
        state = TapState(
            op, info, mode="sse", status=status, headers=headers, framing="eventstream"
        )
        op.report(Event.BODY_UNREAD)
    else:
        state = TapState(op, info, mode="body", status=status, headers=headers)
        op.report(Event.BODY_UNREAD)
    if flight is not None:
        state.flight = quietly(flight.begin, op, path, status, headers)
    response.raw = _TapRaw(response.raw, state)


def _send(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    op = current_operation.get()
    if op is None or op.ended or op.tel is not get_telemetry():
        return wrapped(*args, **kwargs)
    request = arg(args, kwargs, 0, "request")
    exchange = quietly(_begin, op, request)
    if exchange is None:
        return wrapped(*args, **kwargs)
    try:
        response = wrapped(*args, **kwargs)
    except BaseException as exc:
        quietly(exchange.failed, exc)
        raise
    quietly(_responded, exchange, response)
    return response


class _TapRaw(TapSyncStream):
    """urllib3's response as botocore reads it: ``stream()`` chunks pass through the tap
    (the httpx body tap's own loop), ``close()`` settles it."""

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[bytes]:
        """The wrapped ``stream()``, every chunk seen by the tap first."""
        state = self._self_state
        loop = tap_sync(self.__wrapped__.stream(*args, **kwargs), state)
        state.looped(loop)
        return loop


_sync, _ = wrappers(_describe)
_read_sync, _ = reader_wrappers(lambda stream: stream._raw_stream)

PATCHES = PatchSet(
    (
        Patch("botocore.client", "BaseClient._make_api_call", _sync),
        Patch("botocore.endpoint", "Endpoint._send", _send),
        Patch("botocore.eventstream", "EventStream.__iter__", _read_sync),
    )
)
