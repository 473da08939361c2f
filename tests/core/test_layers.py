"""The core is sans-I/O: no module under src/tooltap/_core imports an I/O or telemetry library."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import tooltap._core

CORE = Path(tooltap._core.__file__).parent
FORBIDDEN = frozenset(
    {
        "httpx",
        "httpx2",
        "wrapt",
        "opentelemetry",
        "aiohttp",
        "requests",
        "anyio",
        "asyncio",
        "socket",
    }
)
# Relative imports may not climb out of _core into the I/O layers.
FORBIDDEN_SIBLINGS = frozenset({"_patch", "_telemetry", "_runner", "instrumentor", "simulator"})


def violations(source: str, depth: int) -> list[str]:
    """Forbidden imports in ``source``; ``depth`` is the module's package depth below _core."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                names = [node.module]
            elif node.level > depth + 1:  # climbs above _core: "from .. import _patch"
                targets = [node.module] if node.module else [a.name for a in node.names]
                names = [f"tooltap.{t}" for t in targets]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, (ast.Name, ast.Attribute))
            and (getattr(node.func, "id", None) or getattr(node.func, "attr", None))
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names = [node.args[0].value]
        for name in names:
            parts = name.split(".")
            if parts[0] in FORBIDDEN or (
                parts[0] == "tooltap"
                and len(parts) > 1
                and parts[1].split(".")[0] in FORBIDDEN_SIBLINGS
            ):
                found.append(f"line {node.lineno}: {name}")
    return found


MODULES = sorted(CORE.rglob("*.py"))


def test_the_core_has_modules() -> None:
    assert len(MODULES) >= 8


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(CORE)))
def test_core_module_is_sans_io(path: Path) -> None:
    depth = len(path.relative_to(CORE).parts) - 1
    assert violations(path.read_text(encoding="utf-8"), depth) == []


@pytest.mark.parametrize(
    "source",
    [
        "import httpx",
        "import opentelemetry.trace as t",
        "from wrapt import wrap_function_wrapper",
        "from asyncio.streams import StreamReader",
        "def f():\n    import socket",
        "import importlib\nimportlib.import_module('aiohttp')",
        "__import__('requests')",
        "from .. import _patch",
        "from .._telemetry import spans",
        "from tooltap._patch import tap",
    ],
)
def test_the_check_catches_violations(source: str) -> None:
    assert violations(source, depth=0)


@pytest.mark.parametrize(
    "source",
    [
        "import json",
        "from .model import Problem",
        "from ..model import Limits",
        "import httpx_like",
    ],
)
def test_the_check_allows_pure_imports(source: str) -> None:
    depth = 1 if source.startswith("from ..") else 0
    assert violations(source, depth) == []
