"""The telemetry floor (``benchmarks._floor``): the census holds what tooltap emitted for the
requests counted, and the SDK's count grows with what it is handed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchmarks import _floor
from benchmarks._sim import SimProcess

SMALL = {"calls": 2, "arg_bytes": 200, "fragment": 16}


def test_a_census_holds_the_spans_and_points_of_the_requests_counted() -> None:
    with SimProcess(**SMALL) as sim:
        found = _floor.census("google generate_content_stream", sim.url, requests=3)
    names = [name for name, _ in found.spans]
    # each request: its inference span and one span per call (2), none of the warm-up's
    assert names.count("generate_content gemini-2.5-flash") == 3
    assert len([n for n in names if n.startswith("execute_tool ")]) == 6
    assert all(attributes for _, attributes in found.spans)
    assert found.attributes == sum(len(a) for _, a in found.spans) > 6 * 5
    # the streamed request's duration, time to first chunk and two token counts
    assert len(found.points) == 3 * 4
    assert all(p["gen_ai.provider.name"] == "gcp.gemini" for p in found.points)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_the_sdks_count_grows_with_the_telemetry_it_is_handed(tmp_path: Path) -> None:
    def count(spans: int) -> int:
        path = tmp_path / f"census-{spans}.json"
        attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"}
        census = {"spans": [["execute_tool t", attributes]] * spans, "points": [], "requests": 1}
        path.write_text(json.dumps(census))
        return _floor._count_sdk(path, 20)

    one, three = count(1), count(3)
    assert one > 20 * 20_000  # a span started and ended costs the SDK tens of thousands
    assert 2.5 < three / one < 3.5
