"""Check one tool call against what its request declared: name, tool, JSON schema.

Validators are compiled once per distinct schema (keyed by its canonical JSON text,
in a bounded cache). ``$ref`` is resolved only inside the schema itself: an empty
``referencing`` registry means a remote reference is never fetched (no I/O).

A valid call usually costs a few µs: a schema object seen again is found by its id and
confirmed by a type-exact compare with what was compiled (so an app editing its schema
in place is noticed) without encoding it, and ``_schema_check`` accepts valid arguments
without jsonschema when the schema keeps to its subset. jsonschema still produces every
reported error.

Preparing a schema is bounded and kept off the stream. A schema within ``_schema_check``'s
subset is valid by construction; any other is checked against its metaschema (about 4 µs
a character, in jsonschema). ``prepare`` compiles a request's schemas when the request is
sent, and a schema over ``MAX_SCHEMA_CHARS`` is never checked nor compiled (each call of
that tool gets one ``schema_too_large`` problem); measuring it stops at the limit.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import lru_cache
from typing import Any, Final, NamedTuple

import referencing
from jsonschema import Draft202012Validator, SchemaError
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

from ._schema_check import Check, compile_check
from .dialects import TABLE
from .model import Problem, RequestInfo, ToolCall
from .problems import ProblemKind

__all__ = ["MAX_SCHEMA_CHARS", "prepare", "validate"]

#: Characters of JSON (about) above which a declared schema is not validated.
MAX_SCHEMA_CHARS: Final = 64 * 1024

_MAX_DETAIL: Final = 500
_NO_REMOTE: Final = referencing.Registry()
_MAX_SNAPSHOT_DEPTH: Final = 32
_MAX_BY_ID: Final = 256


class _Compiled(NamedTuple):
    """One distinct schema, compiled."""

    validator: Validator | str  # or why the schema is invalid
    check: Check | None  # None: outside ``_schema_check``'s subset
    snapshot: Any  # the schema compiled, for a type-exact ``==``; None if not plain JSON


#: id(schema) -> the _Compiled last used for the object with that id; tool name -> the
#: _Compiled last used for a tool of that name (a request parsed off the wire declares
#: new dicts every time, with the same names). Only hints, used once the snapshot equals
#: the schema, so a reused id or name or an edited schema is harmless and no app object
#: is kept alive. Each is cleared when full.
_BY_ID: dict[int, _Compiled] = {}
_BY_NAME: dict[str, _Compiled] = {}


def validate(call: ToolCall, request_info: RequestInfo) -> list[Problem]:
    """Problems of ``call`` given its request: ``invalid_tool_name``, ``undeclared_tool``,
    ``schema_violation`` (one per jsonschema error, path in the detail).

    A declared schema that is itself invalid never raises and never flags the call:
    it is reported once as ``unexpected_shape`` with the schema error in the detail.
    """
    problems: list[Problem] = []
    dialect = call.dialect or request_info.dialect
    entry = TABLE.get(dialect)
    if entry is not None and not entry.tool_name_rule.fullmatch(call.name):
        rule = entry.tool_name_rule.pattern
        _problem(
            problems, call, "invalid_tool_name", f"{call.name!r} does not match {rule} ({dialect})"
        )
    if call.toolset is not None:  # a toolset member: keyed by toolset, schema built in
        if call.name not in request_info.toolsets.get(call.toolset, ()):
            detail = f"{call.name!r} is not a member of the toolset {call.toolset!r}"
            _problem(problems, call, "undeclared_tool", detail)
        return problems
    if not request_info.tools:
        return problems
    schema = request_info.tools.get(call.name)
    if schema is None:
        detail = f"{call.name!r} is not among the {len(request_info.tools)} tools"
        _problem(problems, call, "undeclared_tool", detail)
        return problems
    if not schema:
        return problems
    try:
        compiled, check, _ = _compiled(schema, call.name)
        if compiled is _TOO_LARGE:
            detail = f"declared schema of {call.name!r} is over {MAX_SCHEMA_CHARS} characters"
            _problem(problems, call, "schema_too_large", detail)
            return problems
        if isinstance(compiled, str):
            detail = f"declared schema of {call.name!r} is invalid: {compiled}"
            _problem(problems, call, "unexpected_shape", detail)
            return problems
        if check is not None and _passes(check, call.args):
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
            _problem(problems, call, "schema_violation", _short(detail))
    except Exception as exc:  # noqa: BLE001 - e.g. an unresolvable $ref: not the call's fault
        detail = f"declared schema of {call.name!r} is unusable: {exc!r}"[:500]
        _problem(problems, call, "unexpected_shape", detail)
    return problems


def prepare(request_info: RequestInfo) -> None:
    """Compile the request's declared schemas now (when it is sent), not on its stream: each
    tool name's first (a schema edited under a known name is compiled when first used)."""
    for name, schema in request_info.tools.items():
        if schema and name not in _BY_NAME:
            try:
                _compiled(schema, name)
            except Exception:  # noqa: BLE001 - validate reports an unusable schema per call
                continue


def _problem(problems: list[Problem], call: ToolCall, kind: ProblemKind, detail: str) -> None:
    problems.append(Problem(kind, call.index, call.call_id, detail, call.name))


def _compiled(schema: dict[str, Any], name: str) -> _Compiled:
    """``_compile`` of ``schema``'s canonical text; without encoding it when its id or its
    tool's name hints right.

    A hit needs the schema to equal the snapshot type-exactly, which implies the same
    canonical text (see ``_snapshot``).
    """
    key = id(schema)
    hint = _BY_ID.get(key)
    if hint is None or not _unchanged(hint.snapshot, schema):
        hint = _BY_NAME.get(name)
        if hint is None or not _unchanged(hint.snapshot, schema):
            if _larger(schema, MAX_SCHEMA_CHARS):
                return _TOO_LARGE_SCHEMA
            hint = _compile(json.dumps(schema, sort_keys=True, default=str))
            _BY_NAME[name] = hint
        _BY_ID[key] = hint
        if len(_BY_ID) > _MAX_BY_ID:
            _BY_ID.clear()
        if len(_BY_NAME) > _MAX_BY_ID:
            _BY_NAME.clear()
    return hint


_TOO_LARGE: Final = "too large"
_TOO_LARGE_SCHEMA: Final = _Compiled(_TOO_LARGE, None, None)


def _larger(schema: Any, limit: int) -> bool:
    """Whether ``schema`` as JSON is longer than about ``limit`` characters; the walk (depth
    first, so text is counted early) stops there, so a huge schema costs no more to measure
    than one at the limit."""
    size = 0
    stack: list[Iterator[Any]] = [iter((schema,))]
    while stack:
        value = next(stack[-1], _END)
        if value is _END:
            stack.pop()
            continue
        if isinstance(value, dict):
            size += 2 + 4 * len(value)  # quotes, colon, comma: then the keys, once bounded
            if size <= limit:
                size += sum(len(k) for k in value if isinstance(k, str))
            stack.append(iter(value.values()))
        elif isinstance(value, (list, tuple)):
            size += 2 + len(value)
            stack.append(iter(value))
        else:
            size += len(value) + 2 if isinstance(value, str) else 5
        if size > limit:
            return True
    return False


_END: Final = object()


def _unchanged(snapshot: Any, schema: dict[str, Any]) -> bool:
    """Whether ``schema`` equals ``snapshot`` (None: never)."""
    try:
        return snapshot is not None and bool(snapshot == schema)
    except Exception:  # noqa: BLE001 - a schema holding odd values: ask the text cache
        return False


@lru_cache(maxsize=256)
def _compile(text: str) -> _Compiled:
    """A validator, a fast check and a snapshot of the schema in ``text``, or why it is invalid."""
    schema: dict[str, Any] = json.loads(text)
    cls = validator_for(schema, default=Draft202012Validator)
    check = compile_check(schema)
    if check is None:  # within the subset a schema is valid by construction (_schema_check)
        try:
            cls.check_schema(schema)
        except SchemaError as exc:
            invalid = _short(f"{exc.message} at {exc.json_path}")
            return _Compiled(invalid, None, _snapshot(schema))
    return _Compiled(cls(schema, registry=_NO_REMOTE), check, _snapshot(schema))


def _passes(check: Check, args: Any) -> bool:
    """Whether the fast check accepts ``args``; if it raises, jsonschema decides."""
    try:
        return check(args)
    except Exception:  # noqa: BLE001 - e.g. a hand-built argument value that refuses comparison
        return False


class _Same:
    """A number or boolean in a snapshot: equal only to one of the same type and repr.

    So replacing ``1`` by ``True`` or ``1.0`` (``==`` to it, not the same schema to
    jsonschema nor in a problem's detail) is a change.
    """

    __slots__ = ("value",)

    def __init__(self, value: float) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        value = self.value
        return other is value or (type(other) is type(value) and repr(other) == repr(value))


def _snapshot(schema: dict[str, Any]) -> Any:
    """A deep copy of decoded JSON whose ``==`` is type-exact, or None when nested too deep.

    A value equal to it encodes to the same canonical text: dicts, lists and strings
    compare by content (subclasses encode as their content too), tuples never equal
    lists, numbers and booleans compare by type and repr (``_Same``). Depth is at most
    ``_MAX_SNAPSHOT_DEPTH``, so comparing with it never recurses far.
    """

    def copy(value: Any, depth: int) -> Any:
        if depth > _MAX_SNAPSHOT_DEPTH:
            raise RecursionError
        if type(value) is dict:
            return {k: copy(v, depth + 1) for k, v in value.items()}
        if type(value) is list:
            return [copy(v, depth + 1) for v in value]
        return value if value is None or type(value) is str else _Same(value)

    try:
        return copy(schema, 0)
    except RecursionError:
        return None


def _short(text: str) -> str:
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 1] + "…"
