"""Hooks where agent frameworks start their own tool spans, so tooltap adopts them.

Each hook sees the framework's span as it starts, with the call id the framework has
in scope, and hands both to ``foreign_tool_span.adopt``; the framework's result,
exceptions and span are passed on untouched.

- pydantic-ai (``instrument=True`` or logfire): its instrumentation capability opens
  its spans (the agent run, ``execute_tool {name}``, also for arguments that failed
  validation) through ``start_as_current_span``, a tool's with ``gen_ai.tool.call.id``
  among the start attributes.
- strands-agents: its ``Tracer._start_span`` opens every span (agent, cycle, model,
  ``execute_tool {name}``) and sets the start attributes on it; a tool's carry
  ``gen_ai.tool.call.id`` (the model's ``toolUseId``).
- google-adk: ``record_agent_invocation`` opens ``invoke_agent {name}`` (its context
  published on the scope it yields), ``record_tool_execution`` opens
  ``execute_tool {name}`` as the current span; the call id is set only when the tool
  has returned, so the call is matched by the tool's name and arguments.
- OpenInference's LangChain instrumentor: ``OpenInferenceTracer._start_trace`` opens a
  span per run (chain, model, tool); a TOOL run's ``extra`` holds LangChain's
  ``tool_call_id``.

Every span a hook sees start is reported (``framework_span``): while one records into
tooltap's provider, tooltap's own tool spans wait (``adoption``, ``pending_span``) until
a framework span is adopted or the span is needed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any

from opentelemetry.trace import get_current_span

from .._quietly import quietly
from .._telemetry import semconv as sc
from .._telemetry.adoption import set_framework_probe
from .._telemetry.foreign_tool_span import adopt, framework_span
from .patchset import Patch, PatchSet

__all__ = ["PATCHES"]


class _Adopting:
    """``manager`` (a span's context manager): reports the span it enters, and adopts it
    when it is a tool run's (``call_id``)."""

    __slots__ = ("_call_id", "_manager", "_name")

    def __init__(self, manager: Any, call_id: object, name: object) -> None:
        self._manager, self._call_id, self._name = manager, call_id, name

    def __enter__(self) -> Any:
        span = self._manager.__enter__()
        quietly(framework_span, span)
        if self._call_id:
            quietly(adopt, span, self._call_id, self._name)
        return span

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        result: bool | None = self._manager.__exit__(kind, value, traceback)
        return result


def _pydantic_ai_span(
    wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    manager = wrapped(*args, **kwargs)
    attributes = kwargs.get("attributes")
    if not isinstance(attributes, Mapping):
        attributes = {}
    call_id = None
    if attributes.get(sc.GEN_AI_OPERATION_NAME) == sc.OPERATION_EXECUTE_TOOL:
        call_id = attributes.get(sc.GEN_AI_TOOL_CALL_ID)
    return _Adopting(manager, call_id, attributes.get(sc.GEN_AI_TOOL_NAME))


class _AdoptingAsync:
    """``manager`` (google-adk's async telemetry scope): reports the span it opens, and
    adopts it when it is a tool's (named ``name``, called with ``args``)."""

    __slots__ = ("_args", "_manager", "_name")

    def __init__(self, manager: Any, name: object = None, args: object = None) -> None:
        self._manager, self._name, self._args = manager, name, args

    async def __aenter__(self) -> Any:
        scope = await self._manager.__aenter__()
        quietly(_adopt_adk, scope, self._name, self._args)
        return scope

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        result: bool | None = await self._manager.__aexit__(kind, value, traceback)
        return result


def _adopt_adk(scope: Any, name: object, args: object) -> None:
    # an agent's scope publishes its context; a tool's span is the current one
    span = get_current_span(getattr(scope, "otel_context", None))
    framework_span(span)
    if name is not None:
        adopt(span, None, name, args)


def _adk_agent(
    wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    return _AdoptingAsync(wrapped(*args, **kwargs))


def _adk_tool(
    wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    manager = wrapped(*args, **kwargs)
    tool = args[0] if args else kwargs.get("tool")
    arguments = args[2] if len(args) > 2 else kwargs.get("function_args")
    return _AdoptingAsync(manager, getattr(tool, "name", None), arguments)


def _strands_span(
    wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    span = wrapped(*args, **kwargs)
    quietly(_adopt_strands, span, kwargs.get("attributes"))
    return span


def _adopt_strands(span: Any, attributes: object) -> None:
    framework_span(span)
    if not isinstance(attributes, Mapping):
        return
    if attributes.get(sc.GEN_AI_OPERATION_NAME) != sc.OPERATION_EXECUTE_TOOL:
        return
    call_id = attributes.get(sc.GEN_AI_TOOL_CALL_ID)
    if call_id:
        adopt(span, call_id, attributes.get(sc.GEN_AI_TOOL_NAME))


def _openinference_run(
    wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    result = wrapped(*args, **kwargs)
    run = args[0] if args else kwargs.get("run")
    quietly(_adopt_run, instance, run)
    return result


def _adopt_run(tracer: Any, run: Any) -> None:
    span = tracer.get_span(run.id)
    if span is None:
        return
    framework_span(span)
    if str(getattr(run, "run_type", "")).lower() != "tool":
        return
    extra = getattr(run, "extra", None)
    call_id = extra.get("tool_call_id") if isinstance(extra, Mapping) else None
    if not call_id:
        return
    serialized = getattr(run, "serialized", None)
    name = serialized.get("name") if isinstance(serialized, Mapping) else None
    adopt(span, call_id, name)


PATCHES = PatchSet(
    [
        Patch(
            "pydantic_ai.capabilities.instrumentation", "start_as_current_span", _pydantic_ai_span
        ),
        Patch("strands.telemetry.tracer", "Tracer._start_span", _strands_span),
        Patch("google.adk.telemetry._instrumentation", "record_agent_invocation", _adk_agent),
        Patch("google.adk.telemetry._instrumentation", "record_tool_execution", _adk_tool),
        Patch(
            "openinference.instrumentation.langchain._tracer",
            "OpenInferenceTracer._start_trace",
            _openinference_run,
        ),
    ]
)

#: tooltap's own tool spans wait for a framework's only while one of these hooks is in place.
set_framework_probe(lambda: PATCHES.any_applied)
