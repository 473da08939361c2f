"""The package's layer contract and import graph, checked over every module's source.

Layers, bottom up: ``_core`` < ``_telemetry`` < ``_patch`` < ``instrumentor``. The harness
(``_runner``) stands on ``_core`` and ``_telemetry`` only; the simulator on ``_core`` only.
``_quietly`` and ``_forks`` are leaves every module may import. The public modules (``tooltap``,
``tooltap.core``, ``tooltap.harness``) re-export; the demo and the command line sit on top.

Every import counts, including imports inside functions and under ``TYPE_CHECKING``:
an import that only type checkers run still ties the two modules together.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

import tooltap
from tooltap._core.dialects import DIALECTS

ROOT = Path(tooltap.__file__).parent

#: Leaves every module may import (containment, fork safety); they import nothing of tooltap.
LEAVES = frozenset({"_quietly", "_forks"})
#: component -> the components its modules may import (besides itself and the leaves).
ALLOWED: Mapping[str, frozenset[str]] = {
    "_quietly": frozenset(),
    "_forks": frozenset(),
    "_core": frozenset(),
    "_telemetry": frozenset({"_core"}),
    "_patch": frozenset({"_core", "_telemetry"}),
    "instrumentor": frozenset({"_core", "_telemetry", "_patch"}),
    "_runner": frozenset({"_core", "_telemetry"}),
    "simulator": frozenset({"_core"}),
    "core": frozenset({"_core"}),
    "harness": frozenset({"_core", "_runner"}),
    "tooltap": frozenset({"_core", "_telemetry", "instrumentor", "core", "harness"}),
    "_demo": frozenset({"tooltap", "core", "harness", "simulator", "_telemetry"}),
    "_cli": frozenset({"tooltap", "_demo"}),
    "__main__": frozenset({"_cli"}),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def component(module: str) -> str:
    """``tooltap._patch.httpx_tap`` -> ``_patch``; the root package is ``tooltap``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def imports(source: str, module: str, is_package: bool) -> Iterator[tuple[int, str]]:
    """``(line, target)`` of every ``tooltap`` import in ``source``, relative ones resolved.

    ``from .pkg import name`` yields ``...pkg.name`` (the caller keeps it only if that is
    a module, else falls back to ``...pkg``).
    """
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                yield node.lineno, f"{target}.{alias.name}"


def graph(sources: Mapping[str, tuple[str, bool]]) -> dict[str, dict[str, int]]:
    """module -> {imported tooltap module: first line}, over ``{module: (source, is_package)}``."""
    edges: dict[str, dict[str, int]] = {}
    for module, (source, is_package) in sources.items():
        found = edges.setdefault(module, {})
        for line, target in imports(source, module, is_package):
            while target and target not in sources:  # ``from .pkg import name``: the name
                target = target.rpartition(".")[0]
            if target.startswith("tooltap") and target != module:
                found.setdefault(target, line)
    return edges


def layer_violations(edges: Mapping[str, Mapping[str, int]]) -> list[str]:
    found = []
    for module, targets in sorted(edges.items()):
        mine = component(module)
        allowed = ALLOWED.get(mine)
        if allowed is None:
            found.append(f"{module}: component {mine!r} has no place in the layer contract")
            continue
        for target, line in sorted(targets.items()):
            theirs = component(target)
            if theirs not in allowed | {mine} | LEAVES:
                found.append(f"{module}:{line} imports {target} ({mine} may not use {theirs})")
    return found


def cycles(edges: Mapping[str, Mapping[str, int]]) -> frozenset[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in edges.get(node, {}):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            members = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.add(member)
                if member == node:
                    break
            if len(members) > 1:
                found.add(frozenset(members))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return frozenset(found)


def package_sources() -> dict[str, tuple[str, bool]]:
    return {
        module_name(path): (path.read_text(encoding="utf-8"), path.name == "__init__.py")
        for path in sorted(ROOT.rglob("*.py"))
    }


EDGES = graph(package_sources())


def test_the_graph_covers_the_package() -> None:
    assert len(EDGES) >= 60
    assert "tooltap._quietly" in EDGES["tooltap._patch.httpx_tap"]
    assert "tooltap._telemetry.semconv" in EDGES["tooltap._patch.exchange"]  # from .. import x


def test_every_module_keeps_to_its_layer() -> None:
    assert layer_violations(EDGES) == []


def test_no_import_cycles_beyond_the_known_ones() -> None:
    assert cycles(EDGES) == frozenset()


def test_the_transport_taps_never_import_the_sdk_layer() -> None:
    """The SDK wrappers sit above the taps: a tap shares only the exchange with them."""
    sdk = {"sdk_call", "sdk_request", "sdk_stream", "sdk_openai", "sdk_anthropic", "sdk_google"}
    for tap in ("aiohttp_tap", "httpx_tap", "exchange", "tap_stream", "tap_proxy"):
        imported = {t.rsplit(".", 1)[-1] for t in EDGES[f"tooltap._patch.{tap}"]}
        assert imported.isdisjoint(sdk), tap


def test_settlement_is_pure() -> None:
    assert set(EDGES["tooltap._telemetry.settlement"]) == set()


def test_the_quietly_leaf_imports_nothing_from_tooltap() -> None:
    assert EDGES["tooltap._quietly"] == {}


def _sources(**modules: str) -> dict[str, tuple[str, bool]]:
    return {name.replace("__", "."): (src, False) for name, src in modules.items()}


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("tooltap._core.model", "from .._telemetry import semconv"),
        ("tooltap._core.model", "from tooltap._patch.httpx_tap import install"),
        ("tooltap._telemetry.semconv", "from .._patch import httpx_tap"),
        ("tooltap._runner.run", "def f():\n    from .._patch import httpx_tap"),
        ("tooltap._runner.run", "from tooltap import instrumentor"),
        ("tooltap.simulator._engine", "import tooltap._telemetry.semconv"),
        ("tooltap._core.model", "import tooltap"),
    ],
)
def test_the_layer_check_catches_violations(module: str, source: str) -> None:
    packages = {"tooltap", "tooltap._telemetry", "tooltap._patch"}
    modules = {"tooltap._telemetry.semconv", "tooltap._patch.httpx_tap", "tooltap.instrumentor"}
    sources = {m: ("", m in packages) for m in packages | modules} | {module: (source, False)}
    assert layer_violations(graph(sources))


def test_the_layer_check_allows_the_leaf_and_lower_layers() -> None:
    sources = _sources(
        tooltap___quietly="",
        tooltap___core__model="from .._quietly import quietly",
        tooltap___telemetry__semconv="from .._core.model import Limits",
        tooltap___patch__tap="from .._telemetry import semconv\nfrom .._core import model",
    )
    assert layer_violations(graph(sources)) == []


def test_the_cycle_check_finds_direct_and_indirect_cycles() -> None:
    sources = _sources(
        tooltap__a="from . import b",
        tooltap__b="from .c import x",
        tooltap__c="from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A",
        tooltap__d="import tooltap.e",
        tooltap__e="import tooltap.d",
        tooltap__f="import tooltap.a",
    )
    assert cycles(graph(sources)) == {
        frozenset({"tooltap.a", "tooltap.b", "tooltap.c"}),
        frozenset({"tooltap.d", "tooltap.e"}),
    }


#: Where a dialect's name may be spelt: its own modules and the table (``_core/dialects``);
#: the simulator, a fake provider per dialect kept independent of the parsers it checks;
#: the demo's scenarios and agents, fixtures that each drive one SDK in one dialect.
NAMED_DIALECTS_IN = ("_core/dialects/", "simulator/", "_demo/scenarios.py", "_demo/agents.py")


def dialect_names(source: str) -> list[tuple[int, str]]:
    """``(line, name)`` of every string literal that is a dialect name."""
    return [
        (node.lineno, node.value)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and node.value in DIALECTS
    ]


def test_dialects_are_named_only_in_the_table_and_their_modules() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {name!r}"
        for path in sorted(ROOT.rglob("*.py"))
        if not str(path.relative_to(ROOT)).startswith(NAMED_DIALECTS_IN)
        for line, name in dialect_names(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_dialect_name_check_finds_names() -> None:
    source = 'X = 1\nif d == "google.genai":\n    y = {"openai.chat": 1, "openai": 2}\n'
    assert dialect_names(source) == [(2, "google.genai"), (3, "openai.chat")]
