"""Anthropic Messages' tool blocks: what arrived for one becomes a call, a server call or a Problem.

``Block`` is one open ``*_tool_use`` content block of a stream; ``BlockCalls`` is the part
of ``anthropic.Reducer`` that closes blocks (streamed, or whole in a body) into its calls,
server calls and problems.
"""

from __future__ import annotations

from typing import Any, Final

from ..args import coerce_args, decode_arguments, oversized_value
from ..model import Limits, Problem, ServerCall, ToolCall
from ..problems import ProblemKind
from ._fragments import Fragments

__all__ = ["DIALECT", "PROVIDER", "Block", "BlockCalls"]

DIALECT: Final = "anthropic.messages"
PROVIDER: Final = "anthropic"
_PREVIEW: Final = 256


class Block:
    """One open ``*_tool_use`` content block of a stream."""

    __slots__ = (
        "call_id",
        "fragments",
        "kind",
        "name",
        "ordinal",
        "oversized",
        "start_input",
        "toolset",
    )

    def __init__(
        self,
        kind: str,
        call_id: str | None,
        name: Any,
        ordinal: int | None,
        start_input: Any,
        toolset: str | None = None,
    ) -> None:
        self.kind = kind
        self.toolset = toolset
        self.call_id = call_id
        self.name = name
        self.ordinal = ordinal  # position among client tool_use blocks; None for server blocks
        self.start_input = start_input
        self.fragments = Fragments()
        self.oversized = False  # over limits.max_argument_bytes: fragments no longer kept

    def fork(self) -> Block:
        """An independent copy: what either takes later leaves the other as it is."""
        twin = Block.__new__(Block)
        twin.kind, twin.toolset, twin.call_id = self.kind, self.toolset, self.call_id
        twin.name, twin.ordinal, twin.start_input = self.name, self.ordinal, self.start_input
        twin.fragments, twin.oversized = self.fragments.fork(), self.oversized
        return twin

    def add(self, fragment: str, limit: int) -> None:
        """Append one decoded fragment; past ``limit`` the block is ``oversized`` (it keeps
        that one)."""
        if self.oversized:
            return
        fragments = self.fragments
        if fragments.size + len(fragment) > limit:
            fragments.exact()
        fragments.add(fragment)
        if fragments.size > limit:
            self.oversized = True

    def text(self) -> str:
        return self.fragments.text()


class BlockCalls:
    """The calls, server calls and problems of ``anthropic.Reducer`` (which holds them)."""

    __slots__ = ()

    _calls: list[ToolCall]
    _server: list[ServerCall]
    _problems: list[Problem]
    _limits: Limits
    _measure: bool

    def _close(self, block: Block) -> list[ToolCall]:
        """A block is over: turn what arrived into a call, a server call or a Problem."""
        index, limits, text = block.ordinal, self._limits, block.text()
        if block.oversized:
            detail = f"over {limits.max_argument_bytes} characters"
            oversized = Problem(
                "oversized_arguments",
                index,
                block.call_id,
                detail,
                _str(block.name),
                text[:_PREVIEW],
            )
            return self._add(block.kind, block.call_id, block.name, index, oversized, None)
        if text.strip():
            args = decode_arguments(
                text, limits=limits, index=index, call_id=block.call_id, name=_str(block.name)
            )
            return self._add(block.kind, block.call_id, block.name, index, args, text,
                             block.toolset)  # fmt: skip
        return self._take(block.kind, block.call_id, block.name, index, block.start_input,
                          block.toolset)  # fmt: skip

    def _take(
        self,
        kind: str,
        call_id: str | None,
        name: Any,
        index: int | None,
        value: Any,
        toolset: str | None = None,
    ) -> list[ToolCall]:
        """A block whose input arrived as a decoded value (a body, or a start with no deltas)."""
        args = coerce_args(value, index=index, call_id=call_id, name=_str(name))
        if self._measure and not isinstance(args, Problem):
            oversized = oversized_value(
                args, limits=self._limits, index=index, call_id=call_id, name=_str(name)
            )
            args = oversized or args
        return self._add(kind, call_id, name, index, args, None, toolset)

    def _add(
        self,
        kind: str,
        call_id: str | None,
        name: Any,
        index: int | None,
        args: dict[str, Any] | Problem,
        raw: str | None,
        toolset: str | None = None,
    ) -> list[ToolCall]:
        if not isinstance(args, Problem) and not (isinstance(name, str) and name):
            args = Problem("unexpected_shape", index, call_id, f"{kind} block without a name")
        if isinstance(args, Problem):
            if kind != "tool_use":
                args = _server_problem(args, kind)
            self._problems.append(args)
            return []
        if kind != "tool_use":
            self._server.append(ServerCall(name, args, call_id, kind, len(self._server)))
            return []
        call = ToolCall(name, args, PROVIDER, call_id, len(self._calls), raw or None, DIALECT,
                        toolset)  # fmt: skip
        self._calls.append(call)
        return [call]

    def _cut(self, block: Block) -> Problem:
        """The Problem for a block the stream never finished."""
        kind: ProblemKind = "oversized_arguments" if block.oversized else "truncated_json"
        text = block.text()
        problem = Problem(
            kind,
            block.ordinal,
            block.call_id,
            "stream ended inside the block",
            _str(block.name),
            text[:_PREVIEW] if block.oversized else text,
        )
        return problem if block.kind == "tool_use" else _server_problem(problem, block.kind)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _server_problem(problem: Problem, kind: str) -> Problem:
    """Server blocks are not client calls: no ``call_index``, block type in ``detail``."""
    return Problem(
        problem.kind,
        None,
        problem.call_id,
        f"{kind}: {problem.detail}",
        problem.name,
        problem.received,
    )
