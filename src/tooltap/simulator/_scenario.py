"""The scripted conversation: which calls the model makes, how results are checked, what it says.

Wire-neutral: the wire modules turn a request into a :class:`Turn` and a :class:`Reply`
into bytes. Conversation state is one registry of the call ids issued so far, so the
second turn is checked from the request alone, whatever dialect issued the calls.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from .._forks import new_lock

__all__ = [
    "ID_MODES",
    "LOOKUP_CALLS",
    "ConversationError",
    "IdStyle",
    "PlannedCall",
    "PriorCall",
    "Reply",
    "Scenario",
    "ToolResult",
    "Turn",
    "broken_json",
    "content_text",
    "token",
]

#: The default "lookup" scenario: two parallel calls to the same tool.
LOOKUP_CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("lookup_demo_value", {"key": "height"}),
    ("lookup_demo_value", {"key": "weight"}),
)
_LOOKUP_FINAL = "You are {0} tall and weigh {1}."
_PLAIN_TEXT = "Hello! This is the tooltap provider simulator."
_NO_TOOL_TEXT = "I can answer that without calling a tool."

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

#: How the simulated model spells call ids: ``unique`` (random, the default);
#: ``numbered`` per response (``call_0``, ``call_1``... as many OpenAI-compatible servers);
#: ``kimi``, numbered per conversation (``functions.<name>:<n>``); ``same_args``, numbered
#: per response with every call of a response identical (same name and arguments);
#: ``none``, no ids (Gemini; the other dialects keep theirs).
ID_MODES = ("unique", "numbered", "kimi", "same_args", "none")


def token(rng: random.Random, length: int, alphabet: str = _ALNUM) -> str:
    """A random identifier body of ``length`` characters."""
    return "".join(rng.choice(alphabet) for _ in range(length))


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One tool result carried by a request."""

    call_id: str | None
    name: str | None
    content: str


@dataclass(frozen=True, slots=True)
class PriorCall:
    """A tool call of the last model turn, as the request repeats it."""

    call_id: str | None
    name: str


@dataclass(frozen=True, slots=True)
class Turn:
    """What one request asks for, in dialect-neutral terms."""

    model: str
    stream: bool = False
    tools: tuple[str, ...] = ()
    choice: str = "auto"  # auto | none | any | tool
    forced_name: str | None = None
    results: tuple[ToolResult, ...] = ()
    prior_calls: tuple[PriorCall, ...] = ()
    include_usage: bool = False
    input_chars: int = 0
    #: Tool calls the request's history carries (numbers ``kimi`` ids per conversation).
    history_calls: int = 0
    echo: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PlannedCall:
    """A tool call the simulated model makes."""

    name: str
    args: dict[str, Any]
    arguments: str  # the JSON text sent; deliberately broken with ``invalid_json_args``
    call_id: str
    item_id: str  # the Responses ``fc_`` item id; equal to ``call_id`` elsewhere

    @property
    def valid(self) -> bool:
        """Whether ``arguments`` is the JSON encoding of ``args``."""
        return self.arguments == json.dumps(self.args, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class Reply:
    """The simulated model's answer: tool calls, or text."""

    model: str
    response_id: str
    calls: tuple[PlannedCall, ...] = ()
    text: str = ""
    input_tokens: int = 1
    output_tokens: int = 1
    created: int = 0


class ConversationError(Exception):
    """The request broke the tool-call contract; the provider answers 400 with this message."""


class IdStyle(Protocol):
    """How one dialect spells its ids."""

    def call_ids(self, rng: random.Random) -> tuple[str, str]:
        """A fresh (call_id, item_id) pair."""
        ...

    def response_id(self, rng: random.Random) -> str:
        """A fresh response/message id."""
        ...


@dataclass(frozen=True, slots=True)
class _Issued:
    name: str
    group: int
    index: int


def broken_json(args: dict[str, Any]) -> str:
    """Complete but invalid JSON for ``args``: string values lose their quotes."""
    parts = [
        f"{json.dumps(k)}: {v if isinstance(v, str) else json.dumps(v)}" for k, v in args.items()
    ]
    text = "{" + ", ".join(parts) + "}"
    if not any(isinstance(v, str) for v in args.values()):
        text = text[:-1] + ",}"
    return text


def content_text(value: Any) -> str:
    """The text of a tool result's content, whatever shape the API gave it."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [p.get("text") for p in value if isinstance(p, dict)]
        return "".join(t for t in texts if isinstance(t, str))
    if isinstance(value, dict) and len(value) == 1:
        (inner,) = value.values()
        if isinstance(inner, str | int | float):
            return str(inner)
    return json.dumps(value, ensure_ascii=False)


class Scenario:
    """Plays the model's side of a tool-calling conversation; thread-safe."""

    def __init__(
        self,
        calls: list[tuple[str, dict[str, Any]]] | None,
        final_text: str | None,
        seed: int,
        ids: str = "unique",
    ) -> None:
        if ids not in ID_MODES:
            raise ValueError(f"unknown id mode {ids!r}; expected one of {ID_MODES}")
        self.ids = ids
        self._calls = tuple(calls) if calls is not None else LOOKUP_CALLS
        self._template = _LOOKUP_FINAL if calls is None else None
        self._final_text = final_text
        self._rng = random.Random(seed)
        self._lock = new_lock()
        self._issued: dict[str, _Issued] = {}
        self._groups = 0

    def reset(self) -> None:
        """Forget every issued call id (the random sequence goes on, so ids stay unique)."""
        with self._lock:
            self._issued.clear()

    def answer(
        self,
        turn: Turn,
        ids: IdStyle,
        *,
        ignore_tool_choice: bool = False,
        invalid_json_index: int | None = None,
    ) -> Reply:
        """The reply to ``turn``; ConversationError when its tool results are wrong."""
        with self._lock:
            if turn.results:
                return self._reply(turn, ids, text=self._final(turn))
            if not turn.tools or turn.choice == "none":
                return self._reply(turn, ids, text=_PLAIN_TEXT if not turn.tools else _NO_TOOL_TEXT)
            if ignore_tool_choice and turn.choice in ("any", "tool"):
                return self._reply(turn, ids, text=_NO_TOOL_TEXT)
            specs = list(self._calls)
            if turn.choice == "tool" and turn.forced_name:
                specs = [s for s in specs if s[0] == turn.forced_name] or [(turn.forced_name, {})]
            if self.ids == "same_args":
                specs = [specs[0]] * len(specs)
            calls = self._issue(specs, ids, invalid_json_index, turn.history_calls)
            return self._reply(turn, ids, calls=calls)

    def _issue(
        self, specs: list[tuple[str, dict[str, Any]]], ids: IdStyle, bad: int | None, before: int
    ) -> tuple[PlannedCall, ...]:
        self._groups += 1
        planned = []
        for index, (name, args) in enumerate(specs):
            call_id, item_id = ids.call_ids(self._rng)
            if self.ids in ("numbered", "same_args"):
                prefix = call_id.split("_", 1)[0] if "_" in call_id else "call"
                call_id = f"{prefix}_{index}"
            elif self.ids == "kimi":
                call_id = f"functions.{name}:{before + index}"
            item_id = item_id if item_id.startswith("fc_") else call_id
            text = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
            if bad is not None and index == bad % len(specs):
                text = broken_json(args)
            self._issued[call_id] = _Issued(name, self._groups, index)
            planned.append(PlannedCall(name, dict(args), text, call_id, item_id))
        return tuple(planned)

    def _final(self, turn: Turn) -> str:
        contents = self._ordered_contents(turn)
        if self._final_text is not None:
            return self._final_text
        if self._template is not None and len(contents) == 2:
            return self._template.format(*contents)
        return "Tool results: " + "; ".join(contents) + "."

    def _ordered_contents(self, turn: Turn) -> list[str]:
        if not all(r.call_id for r in turn.results):
            return _check_by_position(turn.results, turn.prior_calls)
        if self.ids == "unique":
            return self._check_by_id(turn.results)
        return _check_against_prior(turn.results, turn.prior_calls)  # ids reused: per request

    def _check_by_id(self, results: tuple[ToolResult, ...]) -> list[str]:
        seen: dict[str, ToolResult] = {}
        for result in results:
            call_id = result.call_id or ""
            if call_id not in self._issued:
                raise ConversationError(f"tool result for unknown tool call id '{call_id}'")
            if call_id in seen:
                raise ConversationError(f"duplicate tool result for tool call id '{call_id}'")
            seen[call_id] = result
        groups = {self._issued[i].group for i in seen}
        expected = sorted(
            (i for i, v in self._issued.items() if v.group in groups),
            key=lambda i: (self._issued[i].group, self._issued[i].index),
        )
        missing = [i for i in expected if i not in seen]
        if missing:
            raise ConversationError(
                "tool call ids without a tool result: " + ", ".join(f"'{i}'" for i in missing)
            )
        return [seen[i].content for i in expected]

    def _reply(
        self, turn: Turn, ids: IdStyle, *, text: str = "", calls: tuple[PlannedCall, ...] = ()
    ) -> Reply:
        produced = len(text) + sum(len(c.arguments) + len(c.name) for c in calls)
        return Reply(
            model=turn.model,
            response_id=ids.response_id(self._rng),
            calls=calls,
            text=text,
            input_tokens=max(1, turn.input_chars // 4),
            output_tokens=max(1, produced // 4 + 5 * len(calls)),
            created=int(time.time()),
        )


def _check_by_position(results: tuple[ToolResult, ...], prior: tuple[PriorCall, ...]) -> list[str]:
    """Results without ids (Google) answer the previous turn's calls by name and order."""
    if len(results) != len(prior):
        raise ConversationError(
            "Please ensure that the number of function response parts is equal to the number "
            f"of function call parts of the function call turn ({len(results)} != {len(prior)})."
        )
    for position, (result, call) in enumerate(zip(results, prior, strict=True)):
        if result.name is not None and result.name != call.name:
            raise ConversationError(
                f"function response {position} is named '{result.name}' but answers "
                f"a call to '{call.name}'"
            )
    return [r.content for r in results]


def _check_against_prior(
    results: tuple[ToolResult, ...], prior: tuple[PriorCall, ...]
) -> list[str]:
    """Results answer the previous turn's calls by id, each exactly once."""
    order = [c.call_id for c in prior]
    seen: dict[str, ToolResult] = {}
    for result in results:
        call_id = result.call_id or ""
        if call_id not in order:
            raise ConversationError(f"tool result for unknown tool call id '{call_id}'")
        if call_id in seen:
            raise ConversationError(f"duplicate tool result for tool call id '{call_id}'")
        seen[call_id] = result
    missing = [i for i in order if i not in seen]
    if missing:
        raise ConversationError(
            "tool call ids without a tool result: " + ", ".join(f"'{i}'" for i in missing)
        )
    return [seen[i].content for i in order if i is not None]
