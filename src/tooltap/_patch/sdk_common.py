"""What the three SDK layers share: one wrapper pair, request attributes (patches: ``patchset``).

Each SDK module names the method that is *one logical call* in that SDK (the funnel
below every public helper and above the retry loop) and a ``describe`` function
that reads a :class:`Call` off that method's arguments, or returns None for traffic
tooltap leaves alone. :func:`wrappers` turns ``describe`` into the sync and async
wrapt wrappers, which run the call inside one :class:`Operation`:

* the operation is current (``current_operation``) while the SDK sends, so the
  transport tap records every attempt on it (retries included) instead of opening
  a span per request;
* the app's exceptions leave as the same object (bare ``raise``); the operation
  ends with them;
* a streamed body is still unread when the SDK returns: the tap has then called
  ``op.hold_until_stream_end()`` and ends the operation when the body ends, so the
  wrapper leaves a held operation alone. What the SDK returns is returned as is.

What the app got decides what counts as received: calls parsed while the SDK call
runs are received when it returns (``op.handing`` / ``op.handed``), and none of them
when it raises (``op.not_delivered``). :func:`reader_wrappers` wrap the SDK's own
loop over a streamed body the same way: when that loop raises, the body settles with
the SDK's failure and the response's calls are not delivered.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Mapping, Sequence
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final, TypeVar, overload
from urllib.parse import urlsplit

from opentelemetry.instrumentation.utils import is_instrumentation_enabled
from opentelemetry.util.types import AttributeValue

from .._core.detect import detect_dialect
from .._core.dialects import TABLE
from .._quietly import quietly
from .._telemetry import semconv as sc
from .._telemetry.operation import Operation, current_operation
from .._telemetry.settlement import Action, Event
from .._telemetry.telemetry import Telemetry, get_telemetry
from .tap_stream import TapState

__all__ = [
    "Call",
    "Describe",
    "arg",
    "describe_body",
    "filtering",
    "parse_scope",
    "parse_scope_wrappers",
    "reader_wrappers",
    "request_params",
    "server_of",
    "wrappers",
]

_log = logging.getLogger("tooltap")

Wrapper = Callable[[Callable[..., Any], Any, tuple[Any, ...], dict[str, Any]], Any]
AsyncWrapper = Callable[
    [Callable[..., Awaitable[Any]], Any, tuple[Any, ...], dict[str, Any]], Awaitable[Any]
]


@dataclass(slots=True)
class Call:
    """One logical inference call, as read off the SDK method's arguments."""

    dialect: str
    request_model: str | None
    server_address: str | None
    server_port: int | None
    stream: bool
    params: dict[str, AttributeValue] = field(default_factory=dict)
    #: ``gen_ai.provider.name`` when the URL tells more than the dialect (Google's backends).
    provider: str | None = None
    #: The request body object the SDK is about to serialize (read once, not decoded again).
    body: Mapping[str, Any] | None = None

    def open(self, tel: Telemetry) -> Operation:
        """Start the call's operation (its inference span) with the request attributes."""
        op = Operation(
            tel,
            dialect=self.dialect,
            request_model=self.request_model,
            server_address=self.server_address,
            server_port=self.server_port,
            stream=self.stream,
            owner="sdk",
            provider_name=self.provider,
            params=self.params,
            request_body=self.body,
        )
        return op


#: Reads a :class:`Call` off ``(instance, args, kwargs)``; None = not an inference call.
Describe = Callable[[Any, tuple[Any, ...], dict[str, Any]], "Call | None"]


def _enter(
    describe: Describe, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Operation, Token[Operation | None]] | None:
    tel = get_telemetry()
    if tel is None or current_operation.get() is not None or not is_instrumentation_enabled():
        return None
    call = describe(instance, args, kwargs)
    if call is None:
        return None
    op = call.open(tel)
    return op, current_operation.set(op)


#: Set by :func:`parse_scope_wrappers` around an SDK method that parses what the logical
#: call returned: operations settled inside wait for that method (its errors are theirs).
parse_scope: ContextVar[list[Operation] | None] = ContextVar("tooltap_parse_scope", default=None)


def _returned(op: Operation) -> None:
    """The SDK call returned: the app has its response (or the stream it reads later)."""
    scope = parse_scope.get()
    if scope is None:
        op.report(Event.SDK_RETURNED)
    elif Action.JOIN_SCOPE in op.report(Event.SDK_RETURNED_IN_SCOPE):
        scope.append(op)


def _close_scope(ops: list[Operation], exc: BaseException | None) -> None:
    for op in ops:
        op.report(Event.SCOPE_CLOSED, exc)


def parse_scope_wrappers() -> tuple[Wrapper, AsyncWrapper]:
    """Wrappers for the method above the logical call that parses its response.

    The call's operation ends when that method returns, or with its exception: an SDK
    that fails to parse a 2xx response fails the inference (``error.type``, ERROR).
    """

    def sync_wrapper(
        wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        if parse_scope.get() is not None or get_telemetry() is None:
            return wrapped(*args, **kwargs)
        ops: list[Operation] = []
        token = parse_scope.set(ops)
        try:
            result = wrapped(*args, **kwargs)
        except BaseException as exc:
            quietly(_close_scope, ops, exc)
            raise
        finally:
            parse_scope.reset(token)
        quietly(_close_scope, ops, None)
        return result

    async def async_wrapper(
        wrapped: Callable[..., Awaitable[Any]],
        instance: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        if parse_scope.get() is not None or get_telemetry() is None:
            return await wrapped(*args, **kwargs)
        ops: list[Operation] = []
        token = parse_scope.set(ops)
        try:
            result = await wrapped(*args, **kwargs)
        except BaseException as exc:
            quietly(_close_scope, ops, exc)
            raise
        finally:
            parse_scope.reset(token)
        quietly(_close_scope, ops, None)
        return result

    return sync_wrapper, async_wrapper


def tapped(obj: object) -> TapState | None:
    """The tap of a body proxy (``response.stream``, aiohttp's ``response.content``)."""
    state = getattr(obj, "_self_state", None)
    return state if isinstance(state, TapState) else None


def _reading(state: TapState, reader: Generator[Any, Any, Any]) -> Generator[Any, Any, Any]:
    try:
        result = yield from reader
    except BaseException as exc:
        quietly(state.read_done, exc)
        raise
    quietly(state.read_done, None)
    return result


async def _areading(state: TapState, reader: AsyncGenerator[Any]) -> AsyncGenerator[Any]:
    try:
        async for item in reader:
            yield item
    except BaseException as exc:
        if isinstance(exc, GeneratorExit):  # closed: close the SDK's loop, as it would be
            await reader.aclose()
        quietly(state.read_done, exc)
        raise
    quietly(state.read_done, None)


def reader_wrappers(body_of: Callable[[Any], object]) -> tuple[Wrapper, Wrapper]:
    """Wrappers for SDK methods that return the generator (sync) or async generator that
    reads a streamed body: ``body_of(instance)`` is the tapped body proxy, if any.

    The generator is handed back wrapped (``yield from``: no step is delayed) and
    registered with the tap (``TapState.read_by``), so that a body ending inside one
    of its steps settles with what that step raised."""

    def sync_wrapper(
        wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        reader = wrapped(*args, **kwargs)
        state = quietly(_reader_state, body_of, instance, reader, "gi_running")
        if state is None:
            return reader
        outer = _reading(state, reader)
        state.read_by(outer)
        return outer

    def async_wrapper(
        wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        reader = wrapped(*args, **kwargs)
        state = quietly(_reader_state, body_of, instance, reader, "ag_running")
        if state is None:
            return reader
        outer = _areading(state, reader)
        state.read_by(outer)
        return outer

    return sync_wrapper, async_wrapper


def _reader_state(
    body_of: Callable[[Any], object], instance: Any, reader: object, flag: str
) -> TapState | None:
    if not hasattr(reader, flag):  # not the generator it should be: left alone
        return None
    return tapped(body_of(instance))


def wrappers(describe: Describe) -> tuple[Wrapper, AsyncWrapper]:
    """The sync and async wrapt wrappers that run each described call in one operation."""

    def sync_wrapper(
        wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        entered = quietly(_enter, describe, instance, args, kwargs)
        if entered is None:
            return wrapped(*args, **kwargs)
        op, token = entered
        try:
            result = wrapped(*args, **kwargs)
        except BaseException as exc:
            quietly(op.report, Event.SDK_RAISED, exc)
            raise
        finally:
            quietly(current_operation.reset, token)
        quietly(_returned, op)
        return result

    async def async_wrapper(
        wrapped: Callable[..., Awaitable[Any]],
        instance: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        entered = quietly(_enter, describe, instance, args, kwargs)
        if entered is None:
            return await wrapped(*args, **kwargs)
        op, token = entered
        try:
            result = await wrapped(*args, **kwargs)
        except BaseException as exc:
            quietly(op.report, Event.SDK_RAISED, exc)
            raise
        finally:
            quietly(current_operation.reset, token)
        quietly(_returned, op)
        return result

    return sync_wrapper, async_wrapper


# --- reading the SDK's arguments -------------------------------------------------------


def arg(args: Sequence[Any], kwargs: Mapping[str, Any], index: int, name: str) -> Any:
    """The argument passed at ``index`` or as ``name`` (None when absent)."""
    if len(args) > index:
        return args[index]
    return kwargs.get(name)


def server_of(url: object) -> tuple[str | None, int | None]:
    """``server.address`` and ``server.port`` of a base URL (an httpx URL or a string)."""
    global _last_server
    last = _last_server
    if last[0] is url:  # a client's own base URL object again (httpx URLs are immutable)
        return last[1]
    server = _server_of(str(url))
    _last_server = (url, server)
    return server


#: The URL object ``server_of`` was last given, and its answer: ``str()`` of an httpx URL
#: is rebuilt from its parts on every call.
_last_server: tuple[object, tuple[str | None, int | None]] = (None, (None, None))


@lru_cache(maxsize=64)  # a client's base URL: split once, not on every call
def _server_of(url: str) -> tuple[str | None, int | None]:
    parts = urlsplit(url)
    if not parts.hostname:
        return None, None
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.hostname, port


_Path = tuple[str, ...]

#: The ``gen_ai.request.*`` attributes a dialect's ``request_params`` may name, by suffix.
_REQUEST_ATTRIBUTES: Final = {
    name.removeprefix("gen_ai.request."): name
    for name in (
        sc.GEN_AI_REQUEST_MAX_TOKENS,
        sc.GEN_AI_REQUEST_TEMPERATURE,
        sc.GEN_AI_REQUEST_TOP_P,
        sc.GEN_AI_REQUEST_TOP_K,
        sc.GEN_AI_REQUEST_SEED,
        sc.GEN_AI_REQUEST_STOP_SEQUENCES,
    )
}
#: Per dialect: (semconv request attribute, where the request body keeps it: one top-level
#: key, or paths, first found).
_PARAMS: Final[dict[str, tuple[tuple[str, str | tuple[_Path, ...]], ...]]] = {
    d.name: tuple(
        (_REQUEST_ATTRIBUTES[k], paths[0][0] if len(paths) == 1 and len(paths[0]) == 1 else paths)
        for k, paths in d.request_params.items()
    )
    for d in TABLE.values()
}


def _dig(body: Mapping[str, Any], path: _Path) -> object:
    value: object = body
    for key in path:
        if not (type(value) is dict or isinstance(value, Mapping)):
            return None
        value = value.get(key)
    return value


def _attribute(name: str, value: object) -> AttributeValue | None:
    """``value`` as attribute ``name`` takes it; None for a value of another type."""
    if name == sc.GEN_AI_REQUEST_STOP_SEQUENCES:
        if isinstance(value, str):
            return [value]  # one stop sequence, as a list like several
        if isinstance(value, Sequence) and value and all(isinstance(v, str) for v in value):
            return [str(v) for v in value]
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return None


def request_params(dialect: str, body: object) -> dict[str, AttributeValue]:
    """The ``gen_ai.request.*`` attributes a request body sets (max_tokens, temperature...)."""
    if not (type(body) is dict or isinstance(body, Mapping)):
        return {}
    params: dict[str, AttributeValue] = {}
    for name, where in _PARAMS.get(dialect, ()):
        if isinstance(where, str):  # one top-level key: most parameters of most dialects
            found = body.get(where)
            if found is not None and (value := _attribute(name, found)) is not None:
                params[name] = value
            continue
        for path in where:
            found = body.get(path[0]) if len(path) == 1 else _dig(body, path)
            if found is None:  # absent: most parameters of most requests
                continue
            value = _attribute(name, found)
            if value is not None:
                params[name] = value
                break
    return params


_C = TypeVar("_C", bound=Call)


@overload
def describe_body(method: str, url: str, body: object, base_url: object) -> Call | None: ...
@overload
def describe_body(
    method: str, url: str, body: object, base_url: object, kind: type[_C]
) -> _C | None: ...
def describe_body(
    method: str, url: str, body: object, base_url: object, kind: type[Call] = Call
) -> Call | None:
    """The :class:`Call` (or ``kind`` of it) of a Stainless-style request (openai,
    anthropic): path + JSON body."""
    dialect = detect_dialect(method, url)
    if dialect is None:
        return None
    fields: Mapping[str, Any] = body if (type(body) is dict or isinstance(body, Mapping)) else {}
    model = fields.get("model")
    address, port = server_of(base_url)
    if filtering():
        full = url if "://" in url else f"{base_url}".rstrip("/") + "/" + url.lstrip("/")
        if not observed(address, full):
            return None
    return kind(
        dialect=dialect,
        request_model=model if isinstance(model, str) else None,
        server_address=address,
        server_port=port,
        stream=fields.get("stream") is True,
        params=request_params(dialect, fields),
        body=body if (type(body) is dict or isinstance(body, Mapping)) else None,
    )


def filtering() -> bool:
    """Whether the ``hosts`` / ``exclude`` options leave any traffic out."""
    tel = get_telemetry()
    return tel is not None and bool(tel.config.hosts or tel.config.exclude)


def observed(host: str | None, url: str) -> bool:
    """Whether the ``hosts`` / ``exclude`` options let tooltap observe a call to ``host``."""
    tel = get_telemetry()
    return tel is None or tel.config.observes(host, urlsplit(url).path)
