"""A registry of tools: name, JSON schema, handler, side effects; and their declarations."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, overload

from .._core.model import DIALECTS, Parsed, RequestInfo, ToolCall
from .._core.request import TOOL_NAME_RULES, valid_tool_name
from .ledger import Ledger, MemoryLedger
from .outcome import TurnResult
from .policy import NO_RETRY, RetryPolicy
from .run import run_turn
from .schema import schema_from_signature

__all__ = ["Tool", "ToolRegistry", "check_tool_name"]

F = TypeVar("F", bound=Callable[..., Any])


def check_tool_name(name: str) -> str:
    """Return ``name`` if every provider accepts it; ValueError saying which rule it breaks."""
    rejected = [d for d in DIALECTS if not (isinstance(name, str) and valid_tool_name(name, d))]
    if rejected:
        rules = ", ".join(f"{d}: {TOOL_NAME_RULES[d].pattern}" for d in rejected)
        raise ValueError(
            f"invalid tool name {name!r}: use 1-64 ASCII letters, digits, '_' or '-', "
            f"starting with a letter or '_' (rejected by {rules})"
        )
    return name


@dataclass(frozen=True, slots=True)
class Tool:
    """One registered tool. ``handler(**args)`` may be sync or async."""

    name: str
    handler: Callable[..., Any]
    schema: dict[str, Any] = field(hash=False)
    description: str = ""
    side_effects: bool = False
    retry: RetryPolicy = NO_RETRY
    #: Maps validated args to a key naming the effect, so a re-sent call under a new
    #: call id (same key) is not executed twice either.
    idempotency_key: Callable[[dict[str, Any]], str] | None = None

    @property
    def is_async(self) -> bool:
        """Whether the handler is a coroutine function."""
        return inspect.iscoroutinefunction(self.handler)


class ToolRegistry:
    """Tools for an agent loop: declare them to any provider, run the calls a model makes.

    ``ledger`` remembers the calls of side-effecting tools by call id (and idempotency
    key) so none runs twice; read-only tools may run again and follow ``retry``.
    """

    def __init__(
        self,
        *,
        ledger: Ledger | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.ledger: Ledger = ledger if ledger is not None else MemoryLedger()
        self.retry = retry or RetryPolicy()
        self._tools: dict[str, Tool] = {}
        self._inflight: dict[str, asyncio.Future[Any]] = {}

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
    ) -> Tool:
        """Register ``handler``; the schema defaults to one derived from its type hints.

        Tools with side effects run once unless they have an ``idempotency_key`` and an
        explicit ``retry`` (retrying them blindly could repeat the effect).
        """
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
            )
            return func

        return register

    def declarations(self, dialect: str) -> list[dict[str, Any]]:
        """The request's ``tools`` value for ``dialect``, one entry per tool (Google: one)."""
        tools = list(self._tools.values())
        if dialect == "openai.chat":
            return [
                {"type": "function", "function": _described(t, parameters=t.schema)} for t in tools
            ]
        if dialect == "openai.responses":
            return [
                {"type": "function", **_described(t, parameters=t.schema), "strict": False}
                for t in tools
            ]
        if dialect == "anthropic.messages":
            return [_described(t, input_schema=t.schema) for t in tools]
        if dialect == "google.genai":
            decls = [_described(t, parametersJsonSchema=t.schema) for t in tools]
            return [{"functionDeclarations": decls}] if decls else []
        raise ValueError(f"unknown dialect {dialect!r}; expected one of {DIALECTS}")

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
    ) -> TurnResult:
        """Validate and run one response's calls; results come back in the provider's shape.

        Pass the ``Parsed`` response to also answer calls whose arguments did not parse.
        ``concurrent`` runs the calls together (sync handlers in worker threads).
        """
        return await run_turn(
            self, calls, dialect=dialect, request_info=request_info, concurrent=concurrent
        )

    def run_sync(
        self,
        calls: Parsed | Sequence[ToolCall],
        *,
        dialect: str | None = None,
        request_info: RequestInfo | None = None,
        concurrent: bool = True,
    ) -> TurnResult:
        """:meth:`run` for synchronous code (not from inside a running event loop)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError("run_sync() called from a running event loop: await run()")
        return asyncio.run(
            self.run(calls, dialect=dialect, request_info=request_info, concurrent=concurrent)
        )


def _described(tool: Tool, **schema: Any) -> dict[str, Any]:
    """``name``, ``description`` (if any) and the dialect's schema key."""
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out.update(schema)
    return out
