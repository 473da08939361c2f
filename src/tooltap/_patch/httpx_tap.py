"""The transport tap: wrapt wrappers on ``send`` of httpx/httpx2 ``Client`` and ``AsyncClient``.

One implementation serves both libraries and both flavours; the sync and async
wrappers differ only in ``await``. Non-LLM traffic (``detect_dialect`` is None, and
every GET but those reading a stored response back: ``detect_retrieve``) and suppressed
contexts pass straight through. For LLM traffic the request body is parsed, the attempt
is recorded on the current SDK ``Operation`` (or on a new transport-owned one), and the
response is settled at once (error status, body already read) or its ``stream`` is
replaced by a tap proxy (``tap_proxy``); a body the client decodes is parsed from its own
decoder's output (``TapState.decoding``).

Patching is lazy (``PATCHES``, a ``PatchSet``): post-import hooks wrap the classes when
(if ever) the app imports httpx or httpx2; importing tooltap imports neither; a class
both names reach (``httpx2.alias_httpx``) is wrapped once. The app's call is
never inside our guards: its exceptions propagate as the same object.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from opentelemetry.instrumentation.utils import is_instrumentation_enabled

from .._core.detect import detect_dialect, detect_retrieve, plausible_request
from .._core.errors import classify_error
from .._core.stream import framing_of, parse_response
from .._quietly import quietly, report
from .._telemetry.operation import Operation, current_operation
from .._telemetry.settlement import Event
from .._telemetry.telemetry import get_telemetry
from .exchange import Exchange, begin, in_send, json_body, request_content
from .httpx_compat import body_read, check, content_decoder, decodes, replace_decoder
from .patchset import Patch, PatchSet
from .tap_proxy import TapAsyncStream, TapSyncStream
from .tap_stream import TapState

__all__ = ["PATCHES"]

_checked: set[str] = set()  # libraries whose private details were checked


def _check_once(response: Any) -> None:
    """Check the private details of ``response``'s library, the first time it answers."""
    name = type(response).__module__.partition(".")[0]
    if name not in _checked:
        _checked.add(name)
        module = sys.modules.get(name)
        if module is not None:
            check(module)


def _responded(exchange: Exchange, response: Any, is_async: bool) -> Any:
    """Settle now or tap the body; always return ``response`` itself."""
    exchange.detach()
    _check_once(response)
    op, info = exchange.op, exchange.info
    if op.tel is not get_telemetry():  # uninstrumented while the request was sent
        op.report(Event.BODY_ENDED)
        return response
    status = int(response.status_code)
    headers = response.headers
    read = body_read(response)
    if not 200 <= status < 300:
        if read:
            error = classify_error(status, headers, response.content)
            op.attempt_failed(error)
            _record_whole(response, op, error=error)
            op.report(Event.BODY_ENDED, error=error)
            return response
        return _tap(
            response, TapState(op, info, mode="error", status=status, headers=headers), is_async
        )
    if read:
        content = response.content
        body = json_body(content) if op.tel.config.capture_any else None
        parsed = parse_response(content, info.dialect, limits=op.tel.config.limits)
        op.record_parsed(parsed, info, body=body)
        _record_whole(response, op, parsed=parsed)
        op.report(Event.BODY_ENDED)
        return response
    framing = framing_of(headers.get("content-type", ""))
    if framing is None:
        state = TapState(op, info, mode="body", status=status, headers=headers)
    else:
        state = TapState(op, info, mode="sse", status=status, headers=headers, framing=framing)
    op.report(Event.BODY_UNREAD)
    return _tap(response, state, is_async)


def _record_whole(response: Any, op: Operation, **outcome: Any) -> None:
    """A response read whole, for the flight recorder (when one is configured)."""
    flight = op.tel.flight
    if flight is not None:
        path, status = response.request.url.path, response.status_code
        quietly(flight.whole, op, path, status, response.headers, response.content, **outcome)


def _tap(response: Any, state: TapState, is_async: bool) -> Any:
    flight = state.op.tel.flight
    if flight is not None:
        path = response.request.url.path
        state.flight = quietly(flight.begin, state.op, path, state.status, state.headers)
    try:
        decoder = content_decoder(response)  # cached: the one the client will use
    except AttributeError:  # a renamed detail (httpx_compat warned): plain bodies still parse
        if response.headers.get("content-encoding", "").strip().lower() not in ("", "identity"):
            state.stop()
    except Exception:  # noqa: BLE001 - the client fails on this body too: nothing to parse
        state.stop()
    else:
        if decodes(decoder):  # the client decodes this body
            replace_decoder(response, state.decoding(decoder))
    proxy = TapAsyncStream if is_async else TapSyncStream
    response.stream = proxy(response.stream, state)
    return response


def _start(request: Any, method: str = "POST") -> Exchange | None:
    """The exchange to record for a POST (or a GET reading a stored response back), or
    None to pass the call through untouched."""
    try:
        tel = get_telemetry()
        if tel is None:
            return None
        url = request.url
        path: str = url.path
        post = method == "POST"
        dialect = detect_dialect(method, path) if post else detect_retrieve(method, path)
        if dialect is None or not is_instrumentation_enabled():
            return None
        config = tel.config
        if (config.hosts or config.exclude) and not config.observes(url.host, path):
            return None
        op = current_operation.get()
        if (
            post
            and (op is None or op.ended)
            and not plausible_request(dialect, request_content(request), path)
        ):
            return None  # not an SDK's call, and not a body of that API: someone else's POST
        return begin(tel, request, dialect, path)
    except Exception as exc:  # noqa: BLE001 - what quietly() does, without its extra call
        report(exc, "httpx_tap")
        return None


def _path(request: Any) -> str:
    """A GET's URL path (only a GET of ``/responses/{id}`` may be LLM traffic)."""
    path: str = request.url.path
    return path


def _send(
    wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    # Inline, cheapest test first: most traffic that is not LLM traffic stops at the method.
    request = args[0] if args else kwargs.get("request")
    method = getattr(request, "method", None)
    if method != "POST" and (method != "GET" or "/responses/" not in _path(request)):
        return wrapped(*args, **kwargs)
    exchange = _start(request, method)
    if exchange is None:
        return wrapped(*args, **kwargs)
    try:
        response = wrapped(*args, **kwargs)
    except BaseException as exc:
        quietly(exchange.failed, exc)
        raise
    return quietly(_responded, exchange, response, False, default=response)


async def _send_async(
    wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    request = args[0] if args else kwargs.get("request")
    method = getattr(request, "method", None)
    if method != "POST" and (method != "GET" or "/responses/" not in _path(request)):
        return await wrapped(*args, **kwargs)
    exchange = _start(request, method)
    if exchange is None:
        return await wrapped(*args, **kwargs)
    token = in_send.set(True)
    try:
        response = await wrapped(*args, **kwargs)
    except BaseException as exc:
        quietly(exchange.failed, exc)
        raise
    finally:
        in_send.reset(token)
    return quietly(_responded, exchange, response, True, default=response)


PATCHES = PatchSet(
    (
        Patch("httpx", "Client.send", _send),
        Patch("httpx", "AsyncClient.send", _send_async),
        Patch("httpx2", "Client.send", _send),
        Patch("httpx2", "AsyncClient.send", _send_async),
    )
)
