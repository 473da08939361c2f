"""Generated documentation is current: the metric and labels tables of docs/REFERENCE.md are
semconv's, README's trace tree is a real run's, the docs say the protocol of HTTP endpoints."""

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


def test_every_metric_has_its_labels_in_semconv_and_the_generated_table() -> None:
    assert set(sc.METRIC_LABELS) == set(sc.METRICS)  # no metric without its labels
    table = _tables().labels_table()
    assert all(f"| `{name}`" in table for name in sc.METRICS)
    assert table in (ROOT / "docs" / "REFERENCE.md").read_text(encoding="utf-8")


def test_the_readmes_trace_tree_is_what_a_real_run_prints() -> None:
    """README's picture is docs/trace_tree.py's output (durations aside): a real conversation."""
    import re
    import subprocess
    import sys

    run = subprocess.run([sys.executable, str(ROOT / "docs" / "trace_tree.py")], check=True,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("root_span=True)`):\n\n```\n", 1)[1].split("```", 1)[0]

    def shape(text: str) -> list[str]:
        return [re.sub(r"\s+\d+ ms$", "", line).rstrip() for line in text.splitlines()]

    assert shape(run.stdout) == shape(block)
    assert len(block.splitlines()) == 5  # the root, two requests, the two tool calls


def test_every_http_otlp_endpoint_in_the_docs_says_its_protocol() -> None:
    """An endpoint on an HTTP port (4318, Phoenix's 6006) shown without the protocol is the
    launcher's gRPC default sent to an HTTP server: each is followed by http/protobuf."""
    import re

    pages = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "examples").rglob("*.md")]
    for page in pages:
        lines = page.read_text(encoding="utf-8").splitlines()
        for n, line in enumerate(lines):
            if re.search(r"OTLP_(?:TRACES_)?ENDPOINT=\S*:(?:4318|6006)", line):
                near = " ".join(lines[n : n + 3])
                assert "http/protobuf" in near, f"{page.name}:{n + 1}: {line}"
