"""Generated documentation is current: the metric table of docs/REFERENCE.md is semconv's."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from tooltap._telemetry import semconv as sc

ROOT = Path(__file__).parents[1]


def _tables() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_tables", ROOT / "docs" / "tables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_metric_table_is_generated_from_semconv_and_current() -> None:
    tables = _tables()
    text = (ROOT / "docs" / "REFERENCE.md").read_text(encoding="utf-8")
    assert tables.metrics_table() in text, "run: python docs/tables.py"
    assert tables.rewrite(text) == text
    for name, prometheus in sc.PROMETHEUS_NAMES.items():
        assert f"| `{name}` | `{prometheus}` |" in tables.metrics_table()


def test_every_metric_has_its_labels_documented() -> None:
    text = (ROOT / "docs" / "REFERENCE.md").read_text(encoding="utf-8")
    labels = text.split("**Labels**", 1)[1]
    assert all(f"| `{name}`" in labels for name in sc.METRICS)
