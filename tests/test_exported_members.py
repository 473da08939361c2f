"""The public surface: every public name is in a sorted ``__all__``; nothing private leaks."""

from __future__ import annotations
import __future__

import pkgutil
import types

import tooltap

# Modules meant to be imported by users; every other module is ``_private``.
PUBLIC_MODULES = {"instrumentor", "simulator"}


def _public_names() -> list[str]:
    names = []
    for name, value in vars(tooltap).items():
        if name.startswith("_"):
            continue
        if isinstance(value, __future__._Feature):  # ``from __future__ import annotations``
            continue
        if isinstance(value, types.ModuleType) and name in PUBLIC_MODULES:
            continue
        names.append(name)
    return names


def test_all_imports_are_exported() -> None:
    assert tooltap.__all__ == sorted(_public_names())


def test_all_is_sorted_and_unique() -> None:
    assert tooltap.__all__ == sorted(set(tooltap.__all__))


def test_nothing_private_is_exported() -> None:
    assert [n for n in tooltap.__all__ if n.startswith("_")] == []
    for name in tooltap.__all__:
        value = getattr(tooltap, name)
        module = getattr(value, "__module__", None)
        if module is not None:
            # defined by tooltap itself, never a re-export of a dependency
            assert module == "tooltap" or module.startswith("tooltap."), (name, module)


def test_star_import_gives_exactly_all() -> None:
    namespace: dict[str, object] = {}
    exec("from tooltap import *", namespace)  # noqa: S102 - the star import under test
    assert sorted(k for k in namespace if k != "__builtins__") == tooltap.__all__


def test_only_intended_modules_are_public() -> None:
    found = {m.name for m in pkgutil.iter_modules(tooltap.__path__)}
    assert {m for m in found if not m.startswith("_")} == PUBLIC_MODULES
