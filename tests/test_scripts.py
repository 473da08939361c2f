"""The README's two commands: CI runs exactly ``scripts/test``, which with no arguments runs all."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_ci_runs_scripts_test_with_no_arguments() -> None:
    commands = [
        line.strip()
        for line in (ROOT / ".ci/run").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith(("#", "set ", "cd "))
    ]
    assert commands == ["bash scripts/test"]


def test_scripts_test_filters_only_when_asked_fast() -> None:
    script = (ROOT / "scripts/test").read_text()
    fast, everything = script.split('say "fetching the real servers', 1)
    assert 'if [ "${1:-}" = "--fast" ]' in fast and '-m "not slow and not long"' in fast
    assert "pytest -q -m" not in everything and "--ignore" not in everything
    assert re.search(r'pytest -q "\$@"', everything)
    assert "scripts/test-old-sdks" in everything and "get-phoenix" in everything


def test_the_readme_gives_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## The two commands", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    assert [line.split()[0] for line in block.splitlines()] == ["scripts/demo", "scripts/test"]
    assert "scripts/test --fast" in readme
