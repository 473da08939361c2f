"""``python docs/tables.py``: rewrite the generated tables of ``docs/REFERENCE.md``.

The metric table and the labels table come from ``tooltap._telemetry.semconv``
(``METRICS``, ``PROMETHEUS_NAMES``, ``METRIC_LABELS``), where every name is defined once;
``tests/test_docs.py`` checks that the file holds what this writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tooltap._telemetry import semconv as sc

REFERENCE = Path(__file__).with_name("REFERENCE.md")
BEGIN = "<!-- metrics:begin (python docs/tables.py writes this table from semconv.py) -->"
END = "<!-- metrics:end -->"
LABELS_BEGIN = "<!-- labels:begin (python docs/tables.py writes this table from semconv.py) -->"
LABELS_END = "<!-- labels:end -->"


def metrics_table() -> str:
    """Every metric tooltap records: its names, instrument, unit and meaning."""
    rows = [
        "| OpenTelemetry | Prometheus | instrument | unit | what it counts |",
        "|---|---|---|---|---|",
    ]
    for name, (kind, unit, description) in sc.METRICS.items():
        prometheus = sc.PROMETHEUS_NAMES[name]
        rows.append(f"| `{name}` | `{prometheus}` | {kind} | `{unit}` | {description} |")
    return f"{BEGIN}\n" + "\n".join(rows) + f"\n{END}"


def labels_table() -> str:
    """Every metric's point attributes (its labels in Prometheus)."""
    rows = ["| OpenTelemetry | Prometheus | attributes |", "|---|---|---|"]
    for name, (_, unit, _) in sc.METRICS.items():
        seconds = " (s)" if unit == "s" else ""
        labels = sc.METRIC_LABELS[name]
        rows.append(f"| `{name}`{seconds} | `{sc.PROMETHEUS_NAMES[name]}` | {labels} |")
    return f"{LABELS_BEGIN}\n" + "\n".join(rows) + f"\n{LABELS_END}"


def _replace(text: str, begin: str, end: str, table: str) -> str:
    start, stop = text.index(begin), text.index(end) + len(end)
    return text[:start] + table + text[stop:]


def rewrite(text: str) -> str:
    """``text`` with the tables between their markers replaced by the current ones."""
    text = _replace(text, BEGIN, END, metrics_table())
    return _replace(text, LABELS_BEGIN, LABELS_END, labels_table())


def main() -> int:
    REFERENCE.write_text(rewrite(REFERENCE.read_text()))
    print(f"{REFERENCE} rewritten", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
