"""The instruction counts' replay (``benchmarks._replay``): a case recorded once over the
socket reads the same chunks again from a process with no server, one event per chunk, each
response with tool calls of its own ids (else tooltap would see history re-sends, a cheaper
path)."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from benchmarks._instructions import _case
from benchmarks._replay import record
from benchmarks._sim import SimProcess

ROOT = Path(__file__).resolve().parent.parent
READ = """
import json, warnings
from pathlib import Path
warnings.simplefilter("ignore")
from benchmarks._replay import install
install(Path({path!r}))
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
import tooltap
from benchmarks._instructions import _case
exporter, provider = InMemorySpanExporter(), TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
tooltap.instrument(tracer_provider=provider)
case = _case({name!r})
client = case.make("http://127.0.0.1:9")  # nothing listens there: the replay answers
items = [case.run(client)[0] for _ in range(3)]
tooltap.flush()
ids = [s.attributes["gen_ai.tool.call.id"] for s in exporter.get_finished_spans()
       if s.name.startswith("execute_tool")]
print(json.dumps({{"items": items, "ids": ids}}))
"""


CASES = [
    "anthropic create",
    "openai.chat create",
    "openai.responses .stream",
    "anthropic not streamed",
]


@pytest.mark.parametrize("name", CASES)
def test_recorded_responses_replay_with_fresh_call_ids(tmp_path: Path, name: str) -> None:
    warnings.simplefilter("ignore")
    path = tmp_path / "responses.pickle"
    with SimProcess(fragment=64) as sim:
        case = _case(name)
        client = case.make(sim.url)
        live = case.run(client)[0]
        record(case, sim.url, path)
    for _, headers, chunks in pickle.loads(path.read_bytes()).values():
        if dict(headers).get("content-type", "").startswith("text/event-stream"):
            assert all(c.count(b"\n\n") == 1 and c.endswith(b"\n\n") for c in chunks)
    code = textwrap.dedent(READ.format(path=str(path), name=name))
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=120, check=False)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout)
    assert seen["items"] == [live] * 3  # the app reads what it read over the socket
    assert len(seen["ids"]) == 9 == len(set(seen["ids"]))  # 3 calls a response, all new
