"""The public surface: every public name is in a sorted ``__all__``; nothing private leaks."""

from __future__ import annotations
import __future__

import pkgutil
import types

import pytest

import tooltap
import tooltap.core
import tooltap.harness
import tooltap.simulator

# Modules meant to be imported by users; every other module is ``_private``.
PUBLIC_MODULES = {"core", "harness", "instrumentor", "simulator"}
SURFACES = [tooltap, tooltap.core, tooltap.harness, tooltap.simulator]
#: Surfaces made only of re-exports (the simulator also holds its own helpers' imports).
FACADES = [tooltap, tooltap.core, tooltap.harness]


def _public_names(module: types.ModuleType) -> list[str]:
    names = []
    for name, value in vars(module).items():
        if name.startswith("_"):
            continue
        if isinstance(value, __future__._Feature):  # ``from __future__ import annotations``
            continue
        if isinstance(value, types.ModuleType) and name in PUBLIC_MODULES:
            continue
        names.append(name)
    return names


surfaces = pytest.mark.parametrize("module", SURFACES, ids=lambda m: m.__name__)


def _isort_key(name: str) -> tuple[int, str]:
    """The order ruff's RUF022 keeps: CONSTANTS, then Classes, then functions."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


@pytest.mark.parametrize("module", FACADES, ids=lambda m: m.__name__)
def test_all_imports_are_exported(module: types.ModuleType) -> None:
    assert sorted(module.__all__) == sorted(_public_names(module))


@surfaces
def test_all_is_sorted_and_unique(module: types.ModuleType) -> None:
    assert module.__all__ == sorted(set(module.__all__), key=_isort_key)


@surfaces
def test_nothing_private_is_exported(module: types.ModuleType) -> None:
    assert [n for n in module.__all__ if n.startswith("_")] == []
    for name in module.__all__:
        value = getattr(module, name)
        defined_in = getattr(value, "__module__", None)
        if defined_in is not None:
            # defined by tooltap itself, never a re-export of a dependency
            assert defined_in == "tooltap" or defined_in.startswith("tooltap."), (name, defined_in)


@surfaces
def test_star_import_gives_exactly_all(module: types.ModuleType) -> None:
    namespace: dict[str, object] = {}
    exec(f"from {module.__name__} import *", namespace)  # noqa: S102 - the star import under test
    assert sorted(k for k in namespace if k != "__builtins__") == sorted(module.__all__)


def test_only_intended_modules_are_public() -> None:
    found = {m.name for m in pkgutil.iter_modules(tooltap.__path__)}
    assert {m for m in found if not m.startswith("_")} == PUBLIC_MODULES


def test_the_root_is_the_small_api() -> None:
    assert set(tooltap.__all__) == {
        "Config",
        "ConfigError",
        "conversation",
        "Parsed",
        "Problem",
        "ToolCall",
        "ToolCallProblem",
        "ToolCallReceived",
        "ToolResultRef",
        "ToolResultSent",
        "TooltapInstrumentor",
        "flush",
        "instrument",
        "uninstrument",
    }
    assert tooltap.ToolCall is tooltap.core.ToolCall
    assert issubclass(tooltap.ConfigError, ValueError)  # what strict mode raises


def test_version_comes_from_the_package_metadata() -> None:
    import importlib.metadata

    assert tooltap.__version__ == importlib.metadata.version("tooltap")
