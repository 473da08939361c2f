"""SDK operations: one wrapper pair runs each logical SDK call in one ``Operation``.

Each SDK module names the method that is *one logical call* in that SDK (the funnel
below every public helper and above the retry loop) and a ``describe`` function
that reads a :class:`Call` off that method's arguments, or returns None for traffic
tooltap leaves alone (``sdk_request`` reads them). :func:`wrappers` turns ``describe``
into the sync and async wrapt wrappers, which run the call inside one :class:`Operation`:

* the operation is current (``current_operation``) while the SDK sends, so the
  transport tap records every attempt on it (retries included) instead of opening
  a span per request;
* the app's exceptions leave as the same object (bare ``raise``); the wrapper reports
  them (``SDK_RAISED``), and a return as ``SDK_RETURNED`` (``SDK_RETURNED_IN_SCOPE``
  inside a parse scope); the settlement table decides whether the operation ends now
  or when its streamed body does. What the SDK returns is returned as is.

What the app got decides what counts as received: calls parsed while the SDK call
runs are received when it returns, and none of them when it raises.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.instrumentation.utils import is_instrumentation_enabled
from opentelemetry.util.types import AttributeValue

from .._quietly import quietly
from .._telemetry.operation import Operation, current_operation
from .._telemetry.settlement import Action, Event
from .._telemetry.telemetry import Telemetry, get_telemetry

__all__ = [
    "AsyncWrapper",
    "Call",
    "Describe",
    "Wrapper",
    "parse_scope",
    "parse_scope_wrappers",
    "wrappers",
]

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
