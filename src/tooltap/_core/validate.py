"""Check one tool call against what its request declared: name, tool, JSON schema.

Validators are compiled once per distinct schema (keyed by its canonical JSON text,
in a bounded cache). ``$ref`` is resolved only inside the schema itself: an empty
``referencing`` registry means a remote reference is never fetched (no I/O).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Final

import referencing
from jsonschema import Draft202012Validator, SchemaError
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

from .model import Problem, RequestInfo, ToolCall
from .request import TOOL_NAME_RULES, valid_tool_name

__all__ = ["validate"]

_MAX_DETAIL: Final = 500
_NO_REMOTE: Final = referencing.Registry()


def validate(call: ToolCall, request_info: RequestInfo) -> list[Problem]:
    """Problems of ``call`` given its request: ``invalid_tool_name``, ``undeclared_tool``,
    ``schema_violation`` (one per jsonschema error, path in the detail).

    A declared schema that is itself invalid never raises and never flags the call:
    it is reported once as ``unexpected_shape`` with the schema error in the detail.
    """
    problems: list[Problem] = []
    dialect = call.dialect or request_info.dialect

    def problem(kind: str, detail: str) -> None:
        problems.append(Problem(kind, call.index, call.call_id, detail, call.name))

    if dialect in TOOL_NAME_RULES and not valid_tool_name(call.name, dialect):
        rule = TOOL_NAME_RULES[dialect].pattern
        problem("invalid_tool_name", f"{call.name!r} does not match {rule} ({dialect})")
    if not request_info.tools:
        return problems
    schema = request_info.tools.get(call.name)
    if schema is None:
        problem(
            "undeclared_tool", f"{call.name!r} is not among the {len(request_info.tools)} tools"
        )
        return problems
    if not schema:
        return problems
    try:
        compiled = _compile(json.dumps(schema, sort_keys=True, default=str))
        if isinstance(compiled, str):
            problem("unexpected_shape", f"declared schema of {call.name!r} is invalid: {compiled}")
            return problems
        errors = sorted(compiled.iter_errors(call.args), key=lambda e: list(map(str, e.path)))
        for error in errors:
            # Name the rule from the schema, never quote the value: arguments may hold secrets.
            rule = json.dumps(error.validator_value, ensure_ascii=False, default=str)
            detail = f"{error.json_path}: violates {error.validator} {rule}"
            if error.validator == "required":  # names only the schema's own property
                detail = f"{error.json_path}: {error.message}"
            elif error.validator == "additionalProperties" and isinstance(error.instance, dict):
                schema = error.schema if isinstance(error.schema, dict) else {}
                allowed = schema.get("properties") or {}
                extra = sorted(str(k) for k in error.instance if k not in allowed)
                detail += f" (unexpected: {', '.join(extra)})"
            problem("schema_violation", _short(detail))
    except Exception as exc:  # noqa: BLE001 - e.g. an unresolvable $ref: not the call's fault
        problem("unexpected_shape", f"declared schema of {call.name!r} is unusable: {exc!r}"[:500])
    return problems


@lru_cache(maxsize=256)
def _compile(text: str) -> Validator | str:
    """A validator for the schema in ``text``, or why the schema is invalid."""
    schema: dict[str, Any] = json.loads(text)
    cls = validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        return _short(f"{exc.message} at {exc.json_path}")
    return cls(schema, registry=_NO_REMOTE)


def _short(text: str) -> str:
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 1] + "…"
