"""Vertex ``streamFunctionCallArguments``: rebuild a call's args from ``partialArgs`` pieces.

Each piece names a JSON path (``$.city``, ``$.stops[0].name``) and one scalar value; string
values for the same path arrive in several pieces and are concatenated. Shape taken from
google-genai's ``PartialArg`` type; no recorded stream was available to check it against.
"""

from __future__ import annotations

import json
import re
from itertools import pairwise
from typing import Any, Final

from ..model import Problem

__all__ = ["PartialCall"]

_STEP: Final = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]|\['([^']*)'\]")
_MAX_INDEX: Final = 10_000  # a list index above this is hostile input, not arguments
_MAX_DEPTH: Final = 64
_PREVIEW: Final = 256
_SCALARS: Final = (
    ("numberValue", "number_value"),
    ("boolValue", "bool_value"),
)


def _steps(path: Any) -> list[str | int] | None:
    """``$.a[0]['b']`` -> ``["a", 0, "b"]``; None when the path is not that simple form."""
    if not isinstance(path, str) or not path.startswith("$") or len(path) < 2:
        return None
    steps: list[str | int] = []
    pos = 1
    while pos < len(path):
        match = _STEP.match(path, pos)
        if match is None:
            return None
        key, number, quoted = match.groups()
        if number is not None:
            if int(number) > _MAX_INDEX:
                return None
            steps.append(int(number))
        else:
            steps.append(key if key is not None else quoted)
        pos = match.end()
        if len(steps) > _MAX_DEPTH:
            return None
    return steps


class PartialCall:
    """One call whose arguments are still arriving."""

    __slots__ = ("args", "call_id", "fault", "index", "name", "size")

    def __init__(self, index: int, name: Any, call_id: str | None) -> None:
        self.index = index
        self.name = name
        self.call_id = call_id
        self.args: dict[str, Any] = {}
        self.size = 0  # characters of values received, to enforce the argument limit
        self.fault = ""  # why the pieces could not be assembled, if they could not

    def apply(self, pieces: Any, limit: int) -> None:
        """Fold one ``partialArgs`` list into ``args``."""
        if not isinstance(pieces, list):
            self.fault = f"partialArgs is {type(pieces).__name__}, not a list"
            return
        for piece in pieces:
            if self.fault or self.size > limit:
                return
            if not isinstance(piece, dict):
                self.fault = f"partialArgs item is {type(piece).__name__}"
                return
            self._piece(piece)

    def result(self, limit: int) -> tuple[str, dict[str, Any]] | Problem:
        """The finished call's (name, args), or the Problem that keeps it from being a call."""
        name = self.name if isinstance(self.name, str) and self.name else None
        if self.size > limit:
            detail = f"over {limit} characters"
            preview = self.text()[:_PREVIEW]
            return Problem("oversized_arguments", self.index, self.call_id, detail, name, preview)
        if self.fault or name is None:
            detail = self.fault or "functionCall without a name"
            return Problem("unexpected_shape", self.index, self.call_id, detail, name, self.text())
        return name, self.args

    def cut(self) -> Problem:
        """The Problem for a call the stream never finished."""
        name = self.name if isinstance(self.name, str) else None
        detail = "stream ended inside the call's partialArgs"
        return Problem("truncated_json", self.index, self.call_id, detail, name, self.text())

    def text(self) -> str:
        """The arguments assembled so far, as JSON text."""
        return json.dumps(self.args, ensure_ascii=False)

    def _piece(self, piece: dict[str, Any]) -> None:
        steps = _steps(piece.get("jsonPath", piece.get("json_path")))
        text = piece.get("stringValue", piece.get("string_value"))
        if isinstance(text, str):
            self.size += len(text)
            self._set(steps, text, append=True)
            return
        for camel, snake in _SCALARS:
            value = piece.get(camel, piece.get(snake))
            if value is not None:
                self.size += 8
                self._set(steps, value, append=False)
                return
        if piece.get("nullValue", piece.get("null_value")) is not None:
            self._set(steps, None, append=False)
        # a piece with no value only carries willContinue for its path

    def _set(self, steps: list[str | int] | None, value: Any, *, append: bool) -> None:
        if not steps or not isinstance(steps[0], str):
            self.fault = "partialArgs jsonPath is not a simple $.key path (or too deep)"
            return
        node: Any = self.args
        for step, after in pairwise(steps):
            fresh: Any = [] if isinstance(after, int) else {}
            node = self._child(node, step, fresh)
            if node is None:
                return
        last = steps[-1]
        old = self._read(node, last)
        if append and isinstance(old, str):
            value = old + value
        self._write(node, last, value)

    def _child(self, node: Any, step: str | int, fresh: Any) -> Any:
        child = self._read(node, step)
        if isinstance(child, (dict, list)):
            return child
        return fresh if self._write(node, step, fresh) else None

    @staticmethod
    def _read(node: Any, step: str | int) -> Any:
        if isinstance(step, int):
            return node[step] if isinstance(node, list) and step < len(node) else None
        return node.get(step) if isinstance(node, dict) else None

    def _write(self, node: Any, step: str | int, value: Any) -> bool:
        if isinstance(step, int) and isinstance(node, list):
            node.extend([None] * (step + 1 - len(node)))
            node[step] = value
            return True
        if isinstance(step, str) and isinstance(node, dict):
            node[step] = value
            return True
        self.fault = "partialArgs jsonPath steps into a value of another type"
        return False
