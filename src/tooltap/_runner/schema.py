"""Derive a tool's JSON schema from its handler's signature (when none is given)."""

from __future__ import annotations

import enum
import inspect
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union

__all__ = ["schema_from_signature"]

_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def schema_from_signature(func: Callable[..., Any]) -> dict[str, Any]:
    """An object schema with one property per parameter; defaulted ones are optional.

    Unknown annotations become ``{}`` (any value). ``*args``/``**kwargs`` are ignored;
    ``**kwargs`` alone allows additional properties.
    """
    hints = typing.get_type_hints(func)
    properties: dict[str, Any] = {}
    required: list[str] = []
    extra = False
    for name, param in inspect.signature(func).parameters.items():
        if param.kind is param.VAR_KEYWORD:
            extra = True
            continue
        if param.kind is param.VAR_POSITIONAL:
            continue
        properties[name] = _type_schema(hints.get(name, Any))
        if param.default is param.empty:
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if not extra:
        schema["additionalProperties"] = False
    return schema


def _type_schema(tp: Any) -> dict[str, Any]:
    """The JSON schema of one annotation, as far as it maps cleanly."""
    if tp in _SCALARS:
        return {"type": _SCALARS[tp]}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [m.value for m in tp]}
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if len(options) == 1:
            inner = _type_schema(options[0])
            return {"anyOf": [inner, {"type": "null"}]} if inner else {}
        return {"anyOf": [_type_schema(a) for a in args]}
    if tp in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset):
        return {"type": "array", "items": _type_schema(args[0])} if args else {"type": "array"}
    if tp is dict or origin is dict:
        return {"type": "object"}
    return {}
