"""A registry of tools: name, JSON schema, handler, side effects; and their declarations."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, overload

from .._core.dialects import DIALECTS, TABLE, valid_tool_name
from .._core.dialects import dialect as dialect_entry
from .._core.model import Parsed, RequestInfo, ToolCall
from .inflight import InFlight
from .ledger import Ledger, MemoryLedger
from .outcome import TurnResult
from .policy import NO_RETRY, RetryPolicy
from .position import history_position
from .run import Turn, run_turn
from .schema import schema_from_signature
from .tool import Tool

__all__ = ["Tool", "ToolRegistry", "check_tool_name"]

F = TypeVar("F", bound=Callable[..., Any])


def check_tool_name(name: str) -> str:
    """Return ``name`` if every provider accepts it; ValueError saying which rule it breaks."""
    rejected = [d for d in DIALECTS if not (isinstance(name, str) and valid_tool_name(name, d))]
    if rejected:
        rules = ", ".join(f"{d}: {TABLE[d].tool_name_rule.pattern}" for d in rejected)
        raise ValueError(
            f"invalid tool name {name!r}: use 1-64 ASCII letters, digits, '_' or '-', "
            f"starting with a letter or '_' (rejected by {rules})"
        )
    return name


class ToolRegistry:
    """Tools for an agent loop: declare them to any provider, run the calls a model makes.

    ``ledger`` remembers the calls of side-effecting tools by call id (and idempotency
    key) so none runs twice; read-only tools may run again and follow ``retry``.
    A call whose effect another run (thread, task or process sharing the ledger) holds
    waits up to ``peer_wait`` seconds (or the tool's ``timeout``, if longer) for that
    run's result, then is answered ``in_doubt``; it never runs a second time.
    """

    def __init__(
        self,
        *,
        ledger: Ledger | None = None,
        retry: RetryPolicy | None = None,
        peer_wait: float = 10.0,
    ) -> None:
        if peer_wait < 0:
            raise ValueError("peer_wait must be >= 0")
        self.ledger: Ledger = ledger if ledger is not None else MemoryLedger()
        self.retry = retry or RetryPolicy()
        self.peer_wait = peer_wait
        self._tools: dict[str, Tool] = {}
        self._inflight = InFlight()

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def get(self, name: str) -> Tool | None:
        """The tool registered under ``name``, if any."""
        return self._tools.get(name)

    def add(
        self,
        handler: Callable[..., Any],
        *,
        name: str | None = None,
        schema: Mapping[str, Any] | None = None,
        description: str | None = None,
        side_effects: bool = False,
        retry: RetryPolicy | None = None,
        idempotency_key: Callable[[dict[str, Any]], str] | None = None,
        timeout: float | None = None,
    ) -> Tool:
        """Register ``handler``; the schema defaults to one derived from its type hints.

        Tools with side effects run once unless they have an ``idempotency_key`` and an
        explicit ``retry`` (retrying them blindly could repeat the effect).
        ``timeout`` bounds each attempt: an async handler is cancelled; a sync one runs
        in its own thread, which is no longer waited for (a thread cannot be killed: it
        runs on, and a side-effecting one records its late outcome in the ledger).
        A read-only tool's timed-out attempt is retried per ``retry``; a side-effecting
        tool's is answered ``in_doubt``.
        """
        if timeout is not None and not timeout > 0:
            raise ValueError("timeout must be > 0 seconds")
        tool_name = check_tool_name(name or handler.__name__)
        if tool_name in self._tools:
            raise ValueError(f"tool {tool_name!r} is already registered")
        if side_effects and retry is not None and retry.attempts > 1 and idempotency_key is None:
            raise ValueError(
                f"tool {tool_name!r} has side effects: retrying it needs an idempotency_key"
            )
        if schema is None:
            schema = schema_from_signature(handler)
        elif schema.get("type", "object") != "object":
            raise ValueError(f"tool {tool_name!r}: the schema must describe an object")
        doc = inspect.getdoc(handler) or ""
        tool = Tool(
            name=tool_name,
            handler=handler,
            schema=dict(schema),
            description=description if description is not None else doc,
            side_effects=side_effects,
            retry=retry or (NO_RETRY if side_effects else self.retry),
            idempotency_key=idempotency_key,
            timeout=timeout,
        )
        self._tools[tool_name] = tool
        return tool

    @overload
    def tool(self, func: F, /) -> F: ...
    @overload
    def tool(
        self,
        name: str | None = None,
        *,
        schema: Mapping[str, Any] | None = None,
        description: str | None = None,
        side_effects: bool = False,
        retry: RetryPolicy | None = None,
        idempotency_key: Callable[[dict[str, Any]], str] | None = None,
        timeout: float | None = None,
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        name: str | Callable[..., Any] | None = None,
        *,
        schema: Mapping[str, Any] | None = None,
        description: str | None = None,
        side_effects: bool = False,
        retry: RetryPolicy | None = None,
        idempotency_key: Callable[[dict[str, Any]], str] | None = None,
        timeout: float | None = None,
    ) -> Any:
        """Decorator form of :meth:`add`: ``@registry.tool`` or ``@registry.tool("name", ...)``."""
        if callable(name):
            self.add(name)
            return name

        def register(func: F) -> F:
            self.add(
                func,
                name=name,
                schema=schema,
                description=description,
                side_effects=side_effects,
                retry=retry,
                idempotency_key=idempotency_key,
                timeout=timeout,
            )
            return func

        return register

    def declarations(self, dialect: str) -> list[dict[str, Any]]:
        """The request's ``tools`` value for ``dialect``, one entry per tool (Google: one)."""
        return dialect_entry(dialect).declarations(list(self._tools.values()))

    def request_info(self, dialect: str) -> RequestInfo:
        """What a request built from :meth:`declarations` declares, for validation."""
        return RequestInfo(dialect, tools={t.name: t.schema for t in self._tools.values()})

    async def run(
        self,
        calls: Parsed | Sequence[ToolCall],
        *,
        dialect: str | None = None,
        request_info: RequestInfo | None = None,
        concurrent: bool = True,
        conversation_id: str | None = None,
        history: Sequence[Any] | None = None,
    ) -> TurnResult:
        """Validate and run one response's calls; results come back in the provider's shape.

        Pass the ``Parsed`` response to also answer calls whose arguments did not parse.
        ``concurrent`` runs the calls together (sync handlers in worker threads).
        ``history`` (the request's messages/contents that produced the response) and
        ``conversation_id`` place calls without an id (Google) in their conversation:
        turn index and position in the turn become their ledger key, so a retried
        request does not repeat their side effects. Without ``conversation_id`` the
        history's digest names the conversation.
        """
        turn = Turn(
            tools=self._tools,
            ledger=self.ledger,
            inflight=self._inflight,
            peer_wait=self.peer_wait,
            position=history_position(conversation_id, history),
        )
        return await run_turn(
            turn, calls, dialect=dialect, request_info=request_info, concurrent=concurrent
        )

    def run_sync(
        self,
        calls: Parsed | Sequence[ToolCall],
        *,
        dialect: str | None = None,
        request_info: RequestInfo | None = None,
        concurrent: bool = True,
        conversation_id: str | None = None,
        history: Sequence[Any] | None = None,
    ) -> TurnResult:
        """:meth:`run` for synchronous code (not from inside a running event loop)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError("run_sync() called from a running event loop: await run()")
        return asyncio.run(
            self.run(
                calls,
                dialect=dialect,
                request_info=request_info,
                concurrent=concurrent,
                conversation_id=conversation_id,
                history=history,
            )
        )
