"""Fixtures for the ops tests: the Prometheus binaries, fetched on first use."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ops.support import PROM_BIN, ensure_tool


@pytest.fixture(scope="session")
def promtool() -> Path:
    return ensure_tool("get-prometheus", PROM_BIN / "promtool")


@pytest.fixture(scope="session")
def prometheus_bin() -> Path:
    return ensure_tool("get-prometheus", PROM_BIN / "prometheus")
