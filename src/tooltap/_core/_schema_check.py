"""A fast yes-check for the JSON-schema subset tool declarations use, in front of jsonschema.

``compile_check(schema)`` turns a schema built only from supported keywords into a
closure tree, once. The closure is sound for True: ``check(x) is True`` only when
jsonschema (Draft 6 to 2020-12) finds no error in ``x``. False means "ask jsonschema":
it is returned for every invalid instance and for the few valid ones the closures do
not decide (values of other types than JSON's, an enum holding arrays or objects, NaN).

Every keyword value must have the shape its dialect's metaschema requires (a length a
whole number >= 0, ``required`` and a ``type`` list without repeats...), so a schema
``compile_check`` compiles is valid against its metaschema: it needs no ``check_schema``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

from jsonschema import Draft6Validator, Draft7Validator, Draft201909Validator, Draft202012Validator
from jsonschema.validators import validator_for

__all__ = ["Check", "compile_check"]

Check = Callable[[Any], bool]

#: Dialects in which every supported keyword means the same (Draft 4 differs on integer
#: and exclusive bounds, Draft 3 on required).
_DIALECTS: Final = (Draft6Validator, Draft7Validator, Draft201909Validator, Draft202012Validator)

#: Keywords that never affect validity, with the shape their value must have (None: any).
#: jsonschema asserts ``format`` only when given a format checker; validate gives none.
_ANNOTATIONS: Final[dict[str, type | None]] = {
    "description": str,
    "title": str,
    "$comment": str,
    "format": str,
    "default": None,
    "examples": list,
    "deprecated": bool,
    "readOnly": bool,
    "writeOnly": bool,
}

#: JSON Schema's type names.
_TYPE_NAMES: Final = frozenset(
    {"null", "boolean", "string", "integer", "number", "array", "object"}
)

#: The exact Python types of decoded JSON values: one handler each in a node's check.
_JSON_TYPES: Final = frozenset({type(None), bool, str, int, float, list, dict})

#: Keywords whose value is one number (a bound on the value).
_BOUNDS: Final = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
#: Keywords whose value is a whole number >= 0 (a bound on a length or a size).
_SIZES: Final = frozenset({"minLength", "maxLength", "minItems", "maxItems"})


class _Unsupported(Exception):
    """The schema uses a keyword or a value shape outside the subset."""


def compile_check(schema: Any) -> Check | None:
    """A checker for ``schema``, or None when a keyword (at any depth) is outside the subset.

    Supported: ``type``, ``properties``, ``required``, ``additionalProperties``, ``items``
    (a schema), ``enum``, ``const``, ``minimum``, ``maximum``, ``exclusiveMinimum``,
    ``exclusiveMaximum``, ``minLength``, ``maxLength``, ``minItems``, ``maxItems``, the
    annotations in ``_ANNOTATIONS`` and a root ``$schema`` naming Draft 6 to 2020-12.
    """
    if not isinstance(schema, dict):
        return None
    if "$schema" in schema and (
        not isinstance(schema["$schema"], str)
        or validator_for(schema, default=Draft202012Validator) not in _DIALECTS
    ):
        return None
    try:
        return _node(schema, root=True)
    except (_Unsupported, RecursionError):
        return None


def _always(value: Any) -> bool:
    return True


def _never(value: Any) -> bool:
    return False


def _node(schema: Any, root: bool = False) -> Check:
    """The check of one (sub)schema: one handler per exact Python type of the instance."""
    if schema is True:
        return _always
    if schema is False:
        return _never
    if type(schema) is not dict:
        raise _Unsupported
    keywords = _Keywords()
    for key, value in schema.items():
        if not (key == "$schema" and root):  # a root's dialect was checked by compile_check
            keywords.read(key, value)
    return _dispatch(keywords.handlers())


class _Keywords:
    """The supported keywords of one schema object, read one at a time."""

    __slots__ = ("bounds", "extra", "item", "members", "props", "required", "types")

    def __init__(self) -> None:
        self.types = set(_TYPE_NAMES)
        self.members: _Members | None = None
        self.props: dict[str, Check] = {}
        self.required: frozenset[str] = frozenset()
        self.extra: Check | None = None
        self.item: Check | None = None
        self.bounds: dict[str, int | float] = {}

    def read(self, key: str, value: Any) -> None:
        """Take one keyword; raise ``_Unsupported`` for one outside the subset or misshapen."""
        if key in _ANNOTATIONS:
            shape = _ANNOTATIONS[key]
            if shape is not None and type(value) is not shape:
                raise _Unsupported
        elif key == "type":
            self.types = _type_names(value)
        elif key in ("enum", "const"):
            if key == "enum" and type(value) is not list:
                raise _Unsupported
            found = _Members(value if key == "enum" else [value])
            self.members = found if self.members is None else self.members & found
        elif key == "properties":
            if type(value) is not dict or any(type(k) is not str for k in value):
                raise _Unsupported
            self.props = {name: _node(sub) for name, sub in value.items()}
        elif key == "required":
            if type(value) is not list or any(type(n) is not str for n in value):
                raise _Unsupported
            self.required = frozenset(value)
            if len(self.required) != len(value):  # the metaschema wants no repeats
                raise _Unsupported
        elif key == "additionalProperties":
            self.extra = _node(value)
        elif key == "items":
            self.item = _node(value)  # a list (Draft 7's tuple form) is unsupported
        elif (key in _BOUNDS and (type(value) is int or type(value) is float)) or (
            key in _SIZES and type(value) is int and value >= 0
        ):
            self.bounds[key] = value
        else:
            raise _Unsupported

    def handlers(self) -> dict[type, Check]:
        """The check for each exact Python type an instance may have."""
        types, members, bounds = self.types, self.members, self.bounds
        handlers: dict[type, Check] = {}
        if "null" in types and (members is None or members.none):
            handlers[type(None)] = _always
        if "boolean" in types:
            handlers[bool] = _always if members is None else members.bools.__contains__
        if "string" in types:
            handlers[str] = _string(
                None if members is None else members.strings,
                bounds.get("minLength"),
                bounds.get("maxLength"),
            )
        if "number" in types or "integer" in types:
            nums = None if members is None else members.numbers
            low, high = bounds.get("minimum"), bounds.get("maximum")
            above, below = bounds.get("exclusiveMinimum"), bounds.get("exclusiveMaximum")
            handlers[int] = _number(nums, False, low, high, above, below)
            handlers[float] = _number(nums, "number" not in types, low, high, above, below)
        if members is None:  # an enum or const never matches an array or object here
            if "array" in types:
                handlers[list] = _array(self.item, bounds.get("minItems"), bounds.get("maxItems"))
            if "object" in types:
                handlers[dict] = _object(self.props, self.required, self.extra)
        return handlers


def _type_names(value: Any) -> set[str]:
    """The names a ``type`` keyword allows: one name or a non-empty list of them."""
    names = [value] if type(value) is str else value
    if type(names) is not list or not names:
        raise _Unsupported
    if any(type(n) is not str or n not in _TYPE_NAMES for n in names):
        raise _Unsupported
    if len(set(names)) != len(names):  # the metaschema wants no repeats
        raise _Unsupported
    return set(names)


class _Members:
    """The scalars of an ``enum`` or ``const``, split the way jsonschema's ``equal`` compares.

    A string equals only a string; True and 1 differ, 1 and 1.0 are equal. Arrays,
    objects, NaN and non-JSON values are left out: an instance they would match gets False.
    """

    __slots__ = ("bools", "none", "numbers", "strings")

    def __init__(self, values: list[Any]) -> None:
        self.strings = frozenset(v for v in values if type(v) is str)
        self.numbers = frozenset(
            v for v in values if type(v) is int or (type(v) is float and not math.isnan(v))
        )
        self.bools = frozenset(v for v in values if type(v) is bool)
        self.none = any(v is None for v in values)

    def __and__(self, other: _Members) -> _Members:
        both = _Members([])
        both.strings = self.strings & other.strings
        both.numbers = self.numbers & other.numbers
        both.bools = self.bools & other.bools
        both.none = self.none and other.none
        return both


def _dispatch(handlers: dict[type, Check]) -> Check:
    if all(h is _always for h in handlers.values()):
        if len(handlers) == len(_JSON_TYPES):
            return _always
        accepted = frozenset(handlers)
        return lambda value: type(value) in accepted
    get = handlers.get

    def check(value: Any) -> bool:
        handler = get(type(value))
        return handler is not None and (handler is _always or handler(value))

    return check


def _string(members: frozenset[str] | None, low: float | None, high: float | None) -> Check:
    if members is None and low is None and high is None:
        return _always

    def check(value: str) -> bool:
        if members is not None and value not in members:
            return False
        # len() counts code points, as jsonschema does
        return (low is None or len(value) >= low) and (high is None or len(value) <= high)

    return check


def _number(
    members: frozenset[float] | None,
    integral: bool,
    low: float | None,
    high: float | None,
    above: float | None,
    below: float | None,
) -> Check:
    if members is None and not integral and (low, high, above, below) == (None,) * 4:
        return _always

    def check(value: float) -> bool:
        return (
            (members is None or value in members)
            and (not integral or value.is_integer())
            and (low is None or value >= low)
            and (high is None or value <= high)
            and (above is None or value > above)
            and (below is None or value < below)
        )

    return check


def _array(item: Check | None, low: float | None, high: float | None) -> Check:
    if item is _always:
        item = None
    if item is None and low is None and high is None:
        return _always

    def check(value: list[Any]) -> bool:
        if (low is not None and len(value) < low) or (high is not None and len(value) > high):
            return False
        if item is not None:
            for each in value:
                if not item(each):
                    return False
        return True

    return check


_ABSENT: Final = object()


def _object(props: dict[str, Check], required: frozenset[str], extra: Check | None) -> Check:
    if extra is _always:
        extra = None
    if not props and not required and extra is None:
        return _always
    if extra is None:  # undeclared properties unconstrained: only the constrained ones
        constrained = tuple((k, c) for k, c in props.items() if c is not _always)

        def declared(value: dict[Any, Any]) -> bool:
            if required and not value.keys() >= required:
                return False
            for key, sub in constrained:
                each = value.get(key, _ABSENT)
                if each is not _ABSENT and not sub(each):
                    return False
            return True

        return declared
    get = props.get

    def check(value: dict[Any, Any]) -> bool:
        if required and not value.keys() >= required:
            return False
        for key, each in value.items():
            sub = get(key, extra)  # an undeclared property meets additionalProperties
            if sub is not None and sub is not _always and not sub(each):
                return False
        return True

    return check
