"""The transport tap: wrapt wrappers on ``send`` of httpx/httpx2 ``Client`` and ``AsyncClient``.

One implementation serves both libraries and both flavours; the sync and async
wrappers differ only in ``await``. Non-LLM traffic (``detect_dialect`` is None)
and suppressed contexts pass straight through. For LLM traffic the request body
is parsed, the attempt is recorded on the current SDK ``Operation`` (or on a new
transport-owned one), and the response is settled at once (error status, body
already read) or its ``stream`` is replaced by a tap proxy (``tap_stream``); a body
the client decodes is parsed from its own decoder's output (``TapState.decoding``).

Patching is lazy: post-import hooks wrap the classes when (if ever) the app
imports httpx or httpx2; importing tooltap imports neither. The app's call is
never inside our guards: its exceptions propagate as the same object.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from collections.abc import Callable, Mapping
from contextvars import ContextVar, Token
from types import ModuleType
from typing import Any, Final

import wrapt
from opentelemetry import context, trace
from opentelemetry.instrumentation.utils import is_instrumentation_enabled

from .._core.detect import detect_dialect, google_streaming
from .._core.errors import classify_error
from .._core.model import RequestInfo
from .._core.request import parse_request
from .._core.stream import parse_response
from .._forks import new_lock
from .._telemetry import semconv as sc
from .._telemetry.operation import Operation, current_operation
from .._telemetry.telemetry import Telemetry, get_telemetry
from .quietly import quietly, report
from .tap_stream import TapAsyncStream, TapState, TapSyncStream

__all__ = ["install", "uninstall"]

_MODULES: Final = ("httpx", "httpx2")
_GOOGLE_MODEL: Final = re.compile(r"/models/([^/:]+):")
_DEFAULT_PORTS: Final = {"https": 443, "http": 80}

#: True while this tap records an async send: a transport below httpx that sends through
#: aiohttp (``httpx_aiohttp``, openai's ``DefaultAioHttpClient``) is not recorded again.
in_send: ContextVar[bool] = ContextVar("tooltap_in_send", default=False)

_lock = new_lock()
_installed = False
_hooked: set[str] = set()
_handles: list[tuple[object, str, object]] = []  # (class, "send", wrapper) we installed


class _Exchange:
    """One LLM request/response through ``send``: the attempt's operation and request info."""

    __slots__ = ("info", "op", "token")

    def __init__(self, op: Operation, info: RequestInfo, token: Token[Any] | None) -> None:
        self.op = op
        self.info = info
        self.token = token

    def failed(self, exc: BaseException) -> None:
        """``send`` raised: a failed attempt; a transport-owned op ends with it."""
        self._detach()
        error = classify_error(None, {}, None, exc)
        self.op.attempt_failed(error)
        if self.op.owner == "transport":
            self.op.end(exc, error)

    def responded(self, response: Any, is_async: bool) -> Any:
        """Settle now or tap the body; always return ``response`` itself."""
        self._detach()
        op, info = self.op, self.info
        if op.tel is not get_telemetry():  # uninstrumented while the request was sent
            op.release()
            return response
        status = int(response.status_code)
        headers = response.headers
        read = hasattr(response, "_content")
        if not 200 <= status < 300:
            if read:
                error = classify_error(status, headers, response.content)
                op.attempt_failed(error)
                op.release(error=error)
                return response
            return self._tap(
                response, TapState(op, info, mode="error", status=status, headers=headers), is_async
            )
        if read:
            content = response.content
            body = _json(content) if op.tel.config.capture_any else None
            parsed = parse_response(content, info.dialect, limits=op.tel.config.limits)
            op.record_parsed(parsed, info, body=body)
            op.release()
            return response
        sse = headers.get("content-type", "").lower().startswith("text/event-stream")
        state = TapState(op, info, mode="sse" if sse else "body", status=status, headers=headers)
        if op.owner == "sdk":
            op.hold_until_stream_end()
        return self._tap(response, state, is_async)

    @staticmethod
    def _tap(response: Any, state: TapState, is_async: bool) -> Any:
        try:
            decoder = response._get_content_decoder()  # cached: the one the client will use
        except Exception:  # noqa: BLE001 - the client fails on this body too: nothing to parse
            state.stop()
        else:
            if type(decoder).__name__ != "IdentityDecoder":  # the client decodes this body
                response._decoder = state.decoding(decoder)
        proxy = TapAsyncStream if is_async else TapSyncStream
        response.stream = proxy(response.stream, state)
        return response

    def _detach(self) -> None:
        token, self.token = self.token, None
        if token is not None:
            context.detach(token)


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _begin(tel: Telemetry, request: Any, dialect: str) -> _Exchange:
    """Parse the request and start its attempt on the right operation."""
    url = request.url
    path: str = url.path
    try:
        content: bytes = request.content
    except Exception:  # noqa: BLE001 - a streaming request body: nothing to parse
        content = b""
    info = parse_request(content, dialect) if content else RequestInfo(dialect)
    if dialect == "google.genai":
        match = _GOOGLE_MODEL.search(path)
        model = info.model or (match.group(1) if match else None)
        info = dataclasses.replace(info, model=model, stream=google_streaming(path))
    host: str = url.host
    port = url.port or _DEFAULT_PORTS.get(url.scheme)
    op = current_operation.get()
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
    body = _json(content) if content and tel.config.capture_any else None
    op.begin_attempt(info, request.headers, url_host=host, url_path=path, body=body)
    # Last step (nothing after it can fail): the span is current while ``send`` runs.
    token = context.attach(trace.set_span_in_context(op.span)) if owned else None
    return _Exchange(op, info, token)


def _start(request: Any) -> _Exchange | None:
    """The exchange to record for a POST, or None to pass the call through untouched."""
    try:
        tel = get_telemetry()
        if tel is None:
            return None
        dialect = detect_dialect("POST", request.url.path)
        if dialect is None or not is_instrumentation_enabled():
            return None
        return _begin(tel, request, dialect)
    except Exception as exc:  # noqa: BLE001 - what quietly() does, without its extra call
        report(exc, "httpx_tap")
        return None


def _send(
    wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    # Inline, cheapest test first: most traffic that is not LLM traffic stops at the method.
    request = args[0] if args else kwargs.get("request")
    if getattr(request, "method", None) != "POST":
        return wrapped(*args, **kwargs)
    exchange = _start(request)
    if exchange is None:
        return wrapped(*args, **kwargs)
    try:
        response = wrapped(*args, **kwargs)
    except BaseException as exc:
        quietly(exchange.failed, exc)
        raise
    return quietly(exchange.responded, response, False, default=response)


async def _send_async(
    wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    request = args[0] if args else kwargs.get("request")
    if getattr(request, "method", None) != "POST":
        return await wrapped(*args, **kwargs)
    exchange = _start(request)
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
    return quietly(exchange.responded, response, True, default=response)


def _patch(module: ModuleType) -> None:
    """Post-import hook: wrap ``send`` of this module's clients (once, only while installed)."""
    with _lock:
        if not _installed:
            return
        for cls_name, wrapper in (("Client", _send), ("AsyncClient", _send_async)):
            cls = getattr(module, cls_name, None)
            if cls is None or any(owner is cls for owner, _, _ in _handles):
                continue  # missing, or the same class seen through an alias (alias_httpx)
            handle = wrapt.wrap_function_wrapper(cls, "send", wrapper)
            _handles.append((cls, "send", handle))


def _on_import(module: ModuleType) -> None:
    quietly(_patch, module)


def install() -> None:
    """Wrap httpx/httpx2 now if imported, else when they are imported."""
    global _installed
    with _lock:
        _installed = True
        hooks = [m for m in _MODULES if m not in _hooked]
        _hooked.update(hooks)
    for name in hooks:
        wrapt.register_post_import_hook(_on_import, name)
    for name in _MODULES:
        module = sys.modules.get(name)
        if module is not None:
            _patch(module)


def uninstall() -> None:
    """Remove our wrappers only (others' wrappers stay); hooks stay inert until install."""
    global _installed
    with _lock:
        _installed = False
        handles, _handles[:] = list(_handles), []
    for cls, attribute, handle in handles:
        quietly(wrapt.unwrap_object, cls, attribute, handle, missing_ok=True)


def installed_handles() -> Mapping[object, object]:
    """The classes currently wrapped, for tests: class -> wrapper."""
    return {cls: handle for cls, _, handle in _handles}
