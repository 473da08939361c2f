"""Traces over OTLP (http/protobuf and grpc) reach a real backend, Arize Phoenix.

Phoenix runs from its own virtual environment (``scripts/get-phoenix``), bound to
127.0.0.1 (HTTP and gRPC). Fault-heavy traffic exports to it; the inference and
``execute_tool`` spans are read back from ``GET /v1/projects/{name}/spans``. Phoenix
does not store span links (its span model has none), so links are checked on the
wire in test_otlp.py; here the parent/child structure and the call ids are.
"""

from __future__ import annotations

import os
import subprocess
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ops.support import (
    PYTHON,
    ROOT,
    TOOLS,
    ensure_tool,
    free_port,
    http_json,
    process,
    wait_for,
)
from tooltap._demo.scenarios import SCENARIOS

pytestmark = pytest.mark.slow

SERVE = Path(__file__).with_name("phoenix_serve.py")
LOOPBACK = {"0100007F", "0000000000000000FFFF00000100007F", "00000000000000000000000001000000"}


def listeners(port: int) -> set[str]:
    """Hex local addresses of the sockets listening on ``port`` (from /proc/net)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.add(address)
    return found


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    python = ensure_tool("get-phoenix", TOOLS / "phoenix-venv" / "bin" / "python")
    http_port, grpc_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_"))}
    env.update(
        PHOENIX_HOST="127.0.0.1",
        PHOENIX_PORT=str(http_port),
        PHOENIX_GRPC_PORT=str(grpc_port),
        PHOENIX_WORKING_DIR=str(tmp_path_factory.mktemp("phoenix")),
        PHOENIX_TELEMETRY_ENABLED="false",
    )
    log = (tmp_path_factory.mktemp("phoenix-log") / "phoenix.log").open("wb")
    url = f"http://127.0.0.1:{http_port}"
    with log, process([str(python), str(SERVE)], env=env, stdout=log, stderr=subprocess.STDOUT):
        wait_for(lambda: http_json(url + "/v1/projects") is not None, 120, "Phoenix to start")
        wait_for(lambda: listeners(grpc_port), 30, "Phoenix's gRPC listener")
        yield {"url": url, "http_port": http_port, "grpc_port": grpc_port}


def test_phoenix_listens_on_loopback_only(phoenix: dict[str, Any]) -> None:
    for port in (phoenix["http_port"], phoenix["grpc_port"]):
        addresses = listeners(port)
        assert addresses and addresses <= LOOPBACK, (port, addresses)


def spans_of(url: str, project: str) -> list[dict[str, Any]]:
    spans: list[dict[str, Any]] = []
    cursor = None
    while True:
        query = {"limit": "1000", **({"cursor": cursor} if cursor else {})}
        body = http_json(f"{url}/v1/projects/{project}/spans?{urllib.parse.urlencode(query)}")
        if body is None:
            return spans
        spans += body["data"]
        cursor = body.get("next_cursor")
        if not cursor:
            return spans


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_spans_arrive_with_call_ids(phoenix: dict[str, Any], protocol: str) -> None:
    project = "tooltap-" + protocol.replace("/", "-")
    port = phoenix["http_port"] if protocol != "grpc" else phoenix["grpc_port"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TOOLTAP_"))}
    env.update(
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=f"http://127.0.0.1:{port}"
        + ("/v1/traces" if protocol != "grpc" else ""),
        OTEL_EXPORTER_OTLP_PROTOCOL=protocol,
        OTEL_SERVICE_NAME="tooltap-phoenix-test",
        OTEL_RESOURCE_ATTRIBUTES=f"openinference.project.name={project}",
    )
    args = [PYTHON, str(ROOT / "tests/ops/traffic.py"), "--mix", "faults", "--pace", "0"]
    result = subprocess.run(args, env=env, capture_output=True, text=True, timeout=180, check=False)
    assert result.returncode == 0, result.stderr

    def complete() -> list[dict[str, Any]] | None:
        """All spans are in: ingestion is asynchronous, and the orphans are exported last."""
        spans = spans_of(phoenix["url"], project)
        tools = [s for s in spans if s["name"].startswith("execute_tool")]
        orphans = [t for t in tools if t["attributes"].get("tooltap.result") == "orphaned"]
        return spans if len(tools) >= 40 and len(orphans) >= 4 else None

    spans = wait_for(complete, 60, "the spans in Phoenix")
    by_id = {s["context"]["span_id"]: s for s in spans}
    inference = [
        s
        for s in spans
        if s["attributes"].get("gen_ai.operation.name") in ("chat", "generate_content")
    ]
    tools = [s for s in spans if s["name"] == "execute_tool lookup_demo_value"]
    assert {"openai", "anthropic"} <= {s["attributes"]["gen_ai.provider.name"] for s in inference}
    assert "chat gpt-4o-mini" in {s["name"] for s in inference}
    call_ids = [t["attributes"]["gen_ai.tool.call.id"] for t in tools]
    assert all(call_ids) and len(set(call_ids)) == len(call_ids)
    for tool in tools:
        parent = by_id[tool["parent_id"]]
        assert parent in inference
        assert tool["context"]["trace_id"] == parent["context"]["trace_id"]
    results = {t["attributes"]["tooltap.result"] for t in tools}
    assert {"ok", "orphaned"} <= results
    errored = [s for s in inference if s["status_code"] == "ERROR"]
    assert errored and all(s["attributes"].get("error.type") for s in errored)
    assert "truncated_stream" in {s["attributes"]["error.type"] for s in errored}


def _demo(phoenix: dict[str, Any], project: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``tooltap demo --otlp`` at Phoenix's HTTP port, as README's first trace does."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TOOLTAP_"))}
    clean.update(OTEL_RESOURCE_ATTRIBUTES=f"openinference.project.name={project}", **env)
    args = [PYTHON, "-m", "tooltap", "demo", "--otlp", phoenix["url"]]
    return subprocess.run(args, env=clean, capture_output=True, text=True, timeout=180, check=False)


def test_demo_sends_one_trace_per_conversation_to_phoenix(phoenix: dict[str, Any]) -> None:
    result = _demo(phoenix, "tooltap-demo", OTEL_METRICS_EXPORTER="none")
    assert result.returncode == 0, result.stderr
    assert "Failed to export" not in result.stdout + result.stderr  # no 405 for metrics

    def complete() -> list[dict[str, Any]] | None:
        spans = spans_of(phoenix["url"], "tooltap-demo")
        roots = [s for s in spans if s["name"].startswith("conversation ")]
        orphans = [s for s in spans if s["attributes"].get("tooltap.result") == "orphaned"]
        done = len(roots) == len(SCENARIOS) and len(orphans) == 4  # the last ones
        return spans if done else None

    spans = wait_for(complete, 60, "the demo's spans in Phoenix")
    roots = {s["context"]["trace_id"] for s in spans if s["name"].startswith("conversation ")}
    assert {s["context"]["trace_id"] for s in spans} == roots  # one trace per conversation
    inference = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "chat"]
    anthropic = [s for s in inference if s["attributes"]["gen_ai.provider.name"] == "anthropic"]
    assert len(anthropic) >= 7 and all(s["name"].startswith("chat claude-") for s in anthropic)


def test_demo_mistakes_against_phoenix_end_in_a_message_naming_the_fix(
    phoenix: dict[str, Any],
) -> None:
    metrics_on = _demo(phoenix, "tooltap-demo-metrics")
    assert metrics_on.returncode == 0, metrics_on.stderr
    assert metrics_on.stderr.count("OTEL_METRICS_EXPORTER=none") == 1, metrics_on.stderr
    grpc = _demo(
        phoenix,
        "tooltap-demo-grpc",
        OTEL_EXPORTER_OTLP_PROTOCOL="grpc",
        OTEL_METRICS_EXPORTER="none",
        OTEL_EXPORTER_OTLP_TIMEOUT="2",
    )
    assert grpc.returncode == 0, grpc.stderr
    assert grpc.stderr.count("Set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf") == 1, grpc.stderr


def test_readmes_first_trace_lines_show_an_agent_in_phoenix(phoenix: dict[str, Any]) -> None:
    """README's launcher lines for Phoenix, with an example agent: its spans, no export error."""
    from tooltap.simulator import Simulator

    project = "tooltap-readme"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TOOLTAP_"))}
    with Simulator() as sim:
        env.update(
            OTEL_SERVICE_NAME="my-agent",
            OTEL_METRICS_EXPORTER="none",
            OTEL_LOGS_EXPORTER="none",
            OTEL_EXPORTER_OTLP_ENDPOINT=phoenix["url"],
            OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf",
            OTEL_RESOURCE_ATTRIBUTES=f"openinference.project.name={project}",
            ANTHROPIC_BASE_URL=sim.anthropic_base_url,
        )
        launcher = str(Path(PYTHON).with_name("opentelemetry-instrument"))
        args = [launcher, PYTHON, str(ROOT / "examples/agents/anthropic_agent.py")]
        result = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "Failed to export" not in result.stderr and "go nowhere" not in result.stderr

    def arrived() -> list[dict[str, Any]] | None:
        spans = spans_of(phoenix["url"], project)
        tools = [s for s in spans if s["name"] == "execute_tool lookup_demo_value"]
        return spans if len(tools) == 2 else None

    spans = wait_for(arrived, 60, "the agent's spans in Phoenix")
    inference = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "chat"]
    assert len(inference) == 2  # anthropic's own call spans, adopted: one per call
    tools = [s for s in spans if s["name"] == "execute_tool lookup_demo_value"]
    assert {t["parent_id"] for t in tools} <= {s["context"]["span_id"] for s in inference}
