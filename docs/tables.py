"""``python docs/tables.py``: rewrite the generated tables of ``docs/REFERENCE.md``.

The metric table comes from ``tooltap._telemetry.semconv`` (``METRICS``, ``PROMETHEUS_NAMES``),
where every name is defined once; ``tests/test_docs.py`` checks that the file holds what
this writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tooltap._telemetry import semconv as sc

REFERENCE = Path(__file__).with_name("REFERENCE.md")
BEGIN = "<!-- metrics:begin (python docs/tables.py writes this table from semconv.py) -->"
END = "<!-- metrics:end -->"


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


def rewrite(text: str) -> str:
    """``text`` with the table between its markers replaced by the current one."""
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + metrics_table() + text[end:]


def main() -> int:
    REFERENCE.write_text(rewrite(REFERENCE.read_text()))
    print(f"{REFERENCE} rewritten", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
