"""The runnable snippets (a ```python block after ``<!-- runnable -->``) of README.md and
docs/*.md run as written; the documents README names exist."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
RUNNABLE = re.compile(r"<!-- runnable -->\n```python\n(.*?)```", re.DOTALL)
SNIPPETS = {
    f"{doc.stem}{i}": code
    for doc in DOCS
    for i, code in enumerate(RUNNABLE.findall(doc.read_text(encoding="utf-8")))
}


def test_the_readme_has_runnable_snippets() -> None:
    assert len(RUNNABLE.findall(README.read_text(encoding="utf-8"))) >= 2


def test_the_readme_is_short_and_its_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 170
    links = re.findall(r"\]\(((?:docs|examples|dashboards)/[^)#]+)\)", text)
    assert links and all((ROOT / link).exists() for link in links), links


@pytest.mark.parametrize("code", list(SNIPPETS.values()), ids=list(SNIPPETS))
def test_snippet_runs(code: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env |= {"OTEL_SDK_DISABLED": "true", "PYTHONWARNINGS": "error"}  # no exporters, no warnings
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
