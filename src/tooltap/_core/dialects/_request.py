"""What the request readers of every dialect share: the collector, the walk of the history.

Only the tail of the history is read: the tool results after the last model turn are
new, and the calls they answer are looked up in that model turn; everything before it
is history already accounted. So the cost is the tools and the tail, not the history.

Objects are tested ``type(x) is dict or isinstance(x, Mapping)``: decoded bodies are dicts,
and the ABC check alone costs several times the type compare (the readers make dozens).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from .._json import loads_str
from ..model import Problem, ToolResultRef

__all__ = [
    "Call",
    "DeclaredTool",
    "Reader",
    "assistant",
    "described",
    "get",
    "items",
    "result_text",
    "tail",
]


class DeclaredTool(Protocol):
    """A tool as a request declares it (``ToolRegistry``'s tools are ones)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def schema(self) -> Mapping[str, Any]: ...


#: A call of the last model turn: (position in the turn, name, arguments as sent).
Call = tuple[int, Any, Any]


class Reader:
    """Collects what a dialect's request reader finds."""

    __slots__ = ("dialect", "problems", "results", "tool_choice", "tools")

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self.tools: dict[str, dict[str, Any]] = {}
        self.tool_choice: str | None = None
        self.results: list[ToolResultRef] = []
        self.problems: list[Problem] = []

    def problem(self, detail: str) -> None:
        self.problems.append(Problem("unexpected_shape", detail=detail))

    def tool(self, name: Any, schema: Any, where: str) -> None:
        if not isinstance(name, str):
            self.problem(f"{where}: tool without a string name")
        elif schema is not None and not (type(schema) is dict or isinstance(schema, Mapping)):
            self.problem(f"{where}: schema of {name!r} is not an object")
            self.tools[name] = {}
        else:
            self.tools[name] = dict(schema or {})

    def result(
        self, call_id: Any, is_error: bool, content: Any, call: Call | None, name: Any = None
    ) -> None:
        """One new result; ``call``: the (position, name, args) it answers in the model turn."""
        position, call_name, args = call if call is not None else (None, name, None)
        self.results.append(
            ToolResultRef(
                call_id=call_id if isinstance(call_id, str) else None,
                name=call_name if isinstance(call_name, str) else None,
                is_error=is_error,
                index=len(self.results),
                call_args=_args(args),
                position=position,
                digest=_digest(content),
            )
        )


def _args(value: Any) -> dict[str, Any] | None:
    """Arguments as the history carries them (an object, or JSON text) as a dict."""
    if isinstance(value, str):
        try:
            value = loads_str(value)
        except (ValueError, RecursionError):
            return None
    return dict(value) if (type(value) is dict or isinstance(value, Mapping)) else None


def _digest(content: Any) -> int:
    """A hash of a result's content (the same content gives the same digest)."""
    if isinstance(content, str):
        return hash(content)
    try:
        return hash(json.dumps(content, sort_keys=True, default=str))
    except (TypeError, ValueError, RecursionError):
        return hash(repr(content))


def tail(
    values: Any, r: Reader, where: str, is_model: Callable[[Mapping[str, Any]], bool]
) -> tuple[Mapping[str, Any] | None, list[Mapping[str, Any]], int]:
    """(the last model turn, the object items after it, its index): a walk from the end."""
    if values is None:
        return None, [], -1
    if not isinstance(values, list):
        r.problem(f"{where} is {type(values).__name__}, not a list")
        return None, [], -1
    after: list[Mapping[str, Any]] = []
    skipped = 0
    for i in range(len(values) - 1, -1, -1):
        item = values[i]
        if not (type(item) is dict or isinstance(item, Mapping)):
            skipped += 1
        elif is_model(item):
            after.reverse()
            _skipped(r, where, skipped)
            return item, after, i
        else:
            after.append(item)
    after.reverse()
    _skipped(r, where, skipped)
    return None, after, -1


def _skipped(r: Reader, where: str, count: int) -> None:
    if count:
        r.problem(f"{where}: {count} item(s) are not objects")


def items(value: Any, reader: Reader, where: str) -> list[Mapping[str, Any]]:
    """The object items of a list field; a non-list or non-object item is a problem."""
    if value is None:
        return []
    if not isinstance(value, list):
        reader.problem(f"{where} is {type(value).__name__}, not a list")
        return []
    out = [v for v in value if (type(v) is dict or isinstance(v, Mapping))]
    if len(out) != len(value):
        reader.problem(f"{where}: {len(value) - len(out)} item(s) are not objects")
    return out


def get(obj: Mapping[str, Any], camel: str, snake: str) -> Any:
    """A key spelt camelCase (the wire) or snake_case (SDK dicts)."""
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


def assistant(msg: Mapping[str, Any]) -> bool:
    """Whether a message is a model turn (``role: "assistant"``)."""
    return msg.get("role") == "assistant"


def result_text(output: Any) -> str:
    """A tool's output as the text an API takes (non-strings JSON-encoded, non-ASCII kept)."""
    if isinstance(output, str):
        return output
    return json.dumps(output, ensure_ascii=False, default=str)


def described(tool: DeclaredTool, **schema: Any) -> dict[str, Any]:
    """``name``, ``description`` (if any) and the dialect's schema key, for a declaration."""
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out.update(schema)
    return out
