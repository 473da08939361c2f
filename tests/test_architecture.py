"""The package's import contracts (import-linter, declared in ``pyproject.toml``) and where
dialects are named.

Layers, bottom up: the leaves ``_quietly`` and ``_forks`` (every module may import them),
``_core`` (sans-I/O), ``_telemetry``, ``_patch`` and the harness's ``_runner``, then
``instrumentor``, the simulator and the public re-exports, the demo and the command line.
The contracts are checked on grimp's graph of the installed package: every import counts,
inside functions and under ``TYPE_CHECKING`` too, and no module may sit in an import cycle.
"""

from __future__ import annotations

import ast
import copy
import re
from pathlib import Path
from typing import Any

import grimp
import pytest
from importlinter import api
from importlinter.contracts.acyclic_siblings import AcyclicSiblingsContract
from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.layers import LayersContract

import tooltap
from tooltap._core.dialects import DIALECTS

ROOT = Path(tooltap.__file__).parent
PYPROJECT = Path(__file__).parent.parent / "pyproject.toml"
_TYPES: dict[str, Any] = {
    "layers": LayersContract,
    "forbidden": ForbiddenContract,
    "acyclic_siblings": AcyclicSiblingsContract,
}
_CONFIG = api.read_configuration(str(PYPROJECT))
GRAPH = grimp.build_graph("tooltap", include_external_packages=True, cache_dir=None)


def contracts() -> list[Any]:
    """The contracts of ``pyproject.toml``."""
    return [
        _TYPES[options["type"]](
            name=options["name"],
            session_options=_CONFIG["session_options"],
            contract_options=options,
        )
        for options in _CONFIG["contracts_options"]
    ]


def broken(graph: grimp.ImportGraph) -> list[str]:
    """The names of the contracts ``graph`` breaks."""
    return [c.name for c in contracts() if not c.check(copy.deepcopy(graph), verbose=False).kept]


def with_import(importer: str, imported: str) -> grimp.ImportGraph:
    graph = copy.deepcopy(GRAPH)
    graph.add_import(importer=importer, imported=imported, line_number=1, line_contents="import")
    return graph


def test_the_graph_covers_the_package() -> None:
    assert len([m for m in GRAPH.modules if m.startswith("tooltap")]) >= 60
    assert len(contracts()) >= 8
    assert "tooltap._quietly" in GRAPH.find_modules_directly_imported_by("tooltap._patch.httpx_tap")
    lazy = GRAPH.find_modules_directly_imported_by("tooltap._patch.aiohttp_tap")
    assert "aiohttp" in lazy  # imports inside functions count


def test_every_module_keeps_its_contracts() -> None:
    assert broken(GRAPH) == []


def cycles(graph: grimp.ImportGraph) -> list[tuple[str, str]]:
    """Every import ``(a, b)`` of tooltap modules where ``b`` leads back to ``a``."""
    return [
        (a, b)
        for a in sorted(m for m in graph.modules if m.startswith("tooltap"))
        for b in sorted(graph.find_modules_directly_imported_by(a))
        if b.startswith("tooltap") and graph.chain_exists(importer=b, imported=a)
    ]


def test_no_module_is_in_an_import_cycle() -> None:
    """A package and its own modules too (the contracts' cycle check compares siblings)."""
    assert cycles(GRAPH) == []


def _imports(module: str) -> set[str]:
    """The tooltap modules ``module`` imports itself."""
    return {m for m in GRAPH.find_modules_directly_imported_by(module) if m.startswith("tooltap")}


def test_the_transport_taps_never_import_the_sdk_layer() -> None:
    """The SDK wrappers sit above the taps: a tap shares only the exchange with them."""
    sdk = {"sdk_call", "sdk_request", "sdk_stream", "sdk_openai", "sdk_anthropic", "sdk_google"}
    for tap in ("aiohttp_tap", "httpx_tap", "exchange", "tap_stream", "tap_settle", "tap_proxy"):
        imported = {t.rsplit(".", 1)[-1] for t in _imports(f"tooltap._patch.{tap}")}
        assert imported.isdisjoint(sdk), tap


def test_settlement_is_pure() -> None:
    assert _imports("tooltap._telemetry.settlement") == set()


def test_the_quietly_leaf_imports_nothing_from_tooltap() -> None:
    assert _imports("tooltap._quietly") == set()


def test_the_cycle_check_finds_a_package_importing_its_importer() -> None:
    graph = with_import("tooltap._core.dialects.anthropic", "tooltap._core.dialects")
    assert ("tooltap._core.dialects.anthropic", "tooltap._core.dialects") in cycles(graph)


def test_the_source_imports_nothing_by_name_at_run_time() -> None:
    """The graph sees every edge: only optional exporters are imported by a computed name."""
    found = [
        str(path.relative_to(ROOT))
        for path in sorted(ROOT.rglob("*.py"))
        if re.search(r"\bimport_module\(|__import__\(", path.read_text(encoding="utf-8"))
    ]
    assert found == ["_telemetry/export.py"]


@pytest.mark.parametrize(
    ("importer", "imported", "contract"),
    [
        ("tooltap._core.model", "tooltap._telemetry.semconv", "Layers"),
        ("tooltap._core.model", "tooltap._patch.httpx_tap", "Layers"),
        ("tooltap._telemetry.semconv", "tooltap._patch.httpx_tap", "Layers"),
        ("tooltap._runner.run", "tooltap._patch.httpx_tap", "Layers"),
        ("tooltap._runner.run", "tooltap.instrumentor", "Layers"),
        ("tooltap._patch.exchange", "tooltap._runner.run", "Layers"),
        ("tooltap._quietly", "tooltap._core.model", "Layers"),
        ("tooltap._core.model", "tooltap", "Layers"),
        ("tooltap.simulator._engine", "tooltap._telemetry.semconv", "The simulator"),
        ("tooltap.core", "tooltap._runner.run", "The simulator"),
        ("tooltap._core.model", "httpx", "The core is sans-I/O"),
        ("tooltap._core.sse", "opentelemetry", "The core is sans-I/O"),
        ("tooltap._core.sse", "wrapt", "The core is sans-I/O"),
        ("tooltap._core.sse", "asyncio", "The core is sans-I/O"),
        ("tooltap._core.sse", "socket", "The core is sans-I/O"),
        ("tooltap.harness", "tooltap._telemetry.semconv", "tooltap.harness"),
        ("tooltap._demo.run", "tooltap._patch.httpx_tap", "The demo"),
        ("tooltap._replay", "tooltap._telemetry.semconv", "tooltap replay"),
        ("tooltap._replay", "tooltap._patch.httpx_tap", "tooltap replay"),
        ("tooltap._demo.run", "tooltap._replay", "Layers"),
        ("tooltap._replay", "opentelemetry", "tooltap replay"),
        ("tooltap._cli", "tooltap._core.model", "The command line"),
        ("tooltap", "tooltap._replay", "The root package"),
        ("tooltap", "tooltap._patch.httpx_tap", "The root package"),
        ("tooltap", "tooltap._runner", "The root package"),
        ("tooltap._core.sse", "tooltap._core.dialects.anthropic", "No import cycles"),
        ("tooltap._telemetry.semconv", "tooltap._telemetry.operation", "No import cycles"),
    ],
)
def test_the_contracts_catch_violations(importer: str, imported: str, contract: str) -> None:
    found = broken(with_import(importer, imported))
    assert [name for name in found if name.startswith(contract)], found


@pytest.mark.parametrize(
    ("importer", "imported"),
    [
        ("tooltap._core.model", "tooltap._quietly"),
        ("tooltap._core.model", "json"),
        ("tooltap._telemetry.semconv", "tooltap._core.model"),
        ("tooltap._patch.httpx_tap", "tooltap._telemetry.semconv"),
        ("tooltap._demo.run", "tooltap.simulator"),
        ("tooltap._replay", "tooltap.simulator"),
        ("tooltap._replay", "tooltap._core.flight"),
        ("tooltap._cli", "tooltap._replay"),
    ],
)
def test_the_contracts_allow_the_leaves_and_lower_layers(importer: str, imported: str) -> None:
    assert broken(with_import(importer, imported)) == []


#: Where a dialect's name may be spelt: its own modules and the table (``_core/dialects``);
#: the simulator, a fake provider per dialect kept independent of the parsers it checks;
#: the demo's scenarios and agents, fixtures that each drive one SDK in one dialect.
NAMED_DIALECTS_IN = ("_core/dialects/", "simulator/", "_demo/scenarios.py", "_demo/agents")


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
