"""The README's runnable snippets (a ```python block after ``<!-- runnable -->``) run as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).parents[1] / "README.md"
RUNNABLE = re.compile(r"<!-- runnable -->\n```python\n(.*?)```", re.DOTALL)
SNIPPETS = RUNNABLE.findall(README.read_text(encoding="utf-8"))


def test_the_readme_has_runnable_snippets() -> None:
    assert len(SNIPPETS) >= 2


@pytest.mark.parametrize("code", SNIPPETS, ids=[f"snippet{i}" for i in range(len(SNIPPETS))])
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
