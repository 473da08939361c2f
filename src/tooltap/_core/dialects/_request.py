"""What the request readers of every dialect share: the collector, the walk of the history.

Only the tail of the history is read (``_history.window``): from the end back to the
oldest turn that still holds an open call of the request's conversation, and at least to
the last model turn. Each result found there is told the model turn of the call it
answers (the nearest earlier turn holding that call), wherever it stands after it. So the
cost is the tools and the tail, not the history.

Objects are tested ``type(x) is dict or isinstance(x, Mapping)``: decoded bodies are dicts,
and the ABC check alone costs several times the type compare (the readers make dozens).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeGuard

from .._json import loads_str
from ..model import ModelTurn, Problem, ToolResultRef
from ._history import fingerprint, window

__all__ = [
    "Call",
    "DeclaredTool",
    "Horizon",
    "Reader",
    "assistant",
    "described",
    "function_declarations",
    "get",
    "is_map",
    "items",
    "one_message_each",
    "result_text",
]


class DeclaredTool(Protocol):
    """A tool as a request declares it (``ToolRegistry``'s tools are ones)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def schema(self) -> Mapping[str, Any]: ...


#: A call of a model turn: (position in the turn, name, arguments as sent).
Call = tuple[int, Any, Any]
#: The oldest history index still holding an open call of a conversation (by fingerprint).
Horizon = Callable[[int], "int | None"]


class Reader:
    """Collects what a dialect's request reader finds.

    ``horizon``: how far back the history is wanted, given the conversation's fingerprint
    (None: only the tail after the last model turn).
    """

    __slots__ = ("_calls", "_last", "dialect", "fingerprint", "horizon", "length",
                 "problems", "results", "system", "tool_choice", "tools", "toolsets",
                 "turns")  # fmt: skip

    def __init__(self, dialect: str, horizon: Horizon | None = None) -> None:
        self.dialect = dialect
        self.horizon = horizon
        self.tools: dict[str, dict[str, Any]] = {}
        self.toolsets: dict[str, set[str]] = {}
        self.tool_choice: str | None = None
        self.results: list[ToolResultRef] = []
        self.problems: list[Problem] = []
        self.fingerprint: int | None = None
        self.system: int | None = None
        self.length: int | None = None
        self.turns: list[ModelTurn] = []
        self._calls: dict[str, tuple[int, Call]] = {}  # call id -> (turn index, call)
        self._last = -1

    def history(
        self,
        values: Any,
        where: str,
        is_model: Callable[[Mapping[str, Any]], bool],
        system: Any = None,
        runs: bool = False,
    ) -> list[tuple[int, Mapping[str, Any], bool]]:
        """The items of the history list ``values`` to read, oldest first (``window``;
        ``runs``: a model turn is a run of model items); sets the conversation's
        fingerprints (its first user turn; ``system`` and the items before that turn)
        and length."""
        if values is None:
            return []
        if not isinstance(values, list):
            self.problem(f"{where} is {type(values).__name__}, not a list")
            return []
        self.fingerprint, self.system = fingerprint(system, values)
        self.length = len(values)
        horizon = None
        if self.horizon is not None and self.fingerprint is not None:
            horizon = self.horizon(self.fingerprint)
        read, skipped, self._last = window(values, horizon, is_model, runs)
        if skipped:
            self.problem(f"{where}: {skipped} item(s) are not objects")
        return read

    def model_turn(
        self, index: int, calls: list[tuple[Any, Any, Any]], content: Any = None
    ) -> None:
        """A model turn at ``index`` of the history with ``calls`` (id, name, arguments):
        later results answer them; ``content``: its text, kept (bounded) when it has no
        calls."""
        kept: list[tuple[str | None, str | None, dict[str, Any] | None]] = []
        for position, (call_id, name, args) in enumerate(calls):
            cid = call_id if isinstance(call_id, str) else None
            if cid is not None:
                self._calls[cid] = (index, (position, name, args))
            kept.append((cid, name if isinstance(name, str) else None,
                         None if cid is not None else _args(args)))  # fmt: skip
        text = "" if kept else _text(content, [_TEXT_CHARS])
        self.turns.append(ModelTurn(index, tuple(kept), text))

    def answered(self, call_id: Any) -> tuple[int, Call] | tuple[None, None]:
        """(turn index, call) of the nearest earlier model turn holding ``call_id``."""
        found = self._calls.get(call_id) if isinstance(call_id, str) else None
        return (None, None) if found is None else found

    def problem(self, detail: str) -> None:
        self.problems.append(Problem("unexpected_shape", detail=detail))

    def member(self, toolset: str, name: str) -> None:
        """A member of a toolset: declared under the toolset, and by name unless a tool of
        that name is declared (its own schema stays)."""
        self.toolsets.setdefault(toolset, set()).add(name)
        self.tools.setdefault(name, {})

    def removed(self, name: Any) -> None:
        """A tool withdrawn from here on (Anthropic's ``tool_removal``)."""
        if isinstance(name, str):
            self.tools.pop(name, None)

    def tool(self, name: Any, schema: Any, where: str) -> None:
        if not isinstance(name, str):
            self.problem(f"{where}: tool without a string name")
        elif schema is not None and not (type(schema) is dict or isinstance(schema, Mapping)):
            self.problem(f"{where}: schema of {name!r} is not an object")
            self.tools[name] = {}
        else:
            self.tools[name] = dict(schema or {})

    def result(
        self,
        call_id: Any,
        is_error: bool,
        content: Any,
        call: Call | None,
        name: Any = None,
        *,
        at: int = -1,
        turn: int | None = None,
    ) -> None:
        """One result at history index ``at``; ``call``: the (position, name, args) it
        answers in the model turn at index ``turn``."""
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
                turn=turn if call is not None else None,
                history=0 <= at < self._last,
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


#: Characters of a model turn's text kept when it has no calls (calls named as text).
_TEXT_CHARS = 8192


def _text(content: Any, budget: list[int]) -> str:
    """The strings of ``content``, joined, at most the budget's characters."""
    if isinstance(content, str):
        piece = content[: budget[0]]
        budget[0] -= len(piece)
        return piece
    if isinstance(content, list):
        return "".join(_text(part, budget) for part in content if budget[0] > 0)
    if type(content) is dict or isinstance(content, Mapping):
        return "".join(_text(v, budget) for v in content.values() if budget[0] > 0)
    return ""


#: Keys of a one-key object that wraps a result's value (Gemini's ``{"result": ...}``).
_WRAPPERS = frozenset({"result", "output", "content"})


def _digest(content: Any) -> int:
    """A hash of a result's content, the same whichever dialect carried it: text parts
    joined, a one-key ``result``/``output``/``content`` wrapper unwrapped, JSON text and
    objects as canonical JSON."""
    value = _plain(content)
    if isinstance(value, str):
        if value[:1] in ("{", "["):
            try:
                value = _plain(json.loads(value))
            except (ValueError, RecursionError):
                return hash(value)
        if isinstance(value, str):
            return hash(value)
    try:
        return hash(json.dumps(value, sort_keys=True, separators=(",", ":"), default=str))
    except (TypeError, ValueError, RecursionError):
        return hash(repr(value))


def _plain(content: Any) -> Any:
    """``content`` without what only its dialect adds: text parts, a wrapper object."""
    for _ in range(4):
        if (
            isinstance(content, list)
            and content
            and all(
                (type(p) is dict or isinstance(p, Mapping)) and isinstance(p.get("text"), str)
                for p in content
            )
        ):
            return "".join(p["text"] for p in content)
        if (type(content) is dict or isinstance(content, Mapping)) and len(content) == 1:
            ((key, inner),) = content.items()
            if key in _WRAPPERS:
                content = inner
                continue
        break
    return content


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


def is_map(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """Whether a decoded JSON value is an object (a dict, or any Mapping an SDK dumps)."""
    return type(value) is dict or isinstance(value, Mapping)


def one_message_each(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``result_messages`` of a dialect whose every result is a message of its own."""
    return results


def function_declarations(tools: Sequence[DeclaredTool]) -> list[dict[str, Any]]:
    """OpenAI-shaped ``tools``: one ``{"type": "function", "function": {...}}`` per tool."""
    return [{"type": "function", "function": described(t, parameters=t.schema)} for t in tools]


def described(tool: DeclaredTool, **schema: Any) -> dict[str, Any]:
    """``name``, ``description`` (if any) and the dialect's schema key, for a declaration."""
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out.update(schema)
    return out
