"""`tooltap demo`, the main job, run as a user runs it: a subprocess, real SDKs, real sockets."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest


def _table(out: str, title: str) -> list[list[str]]:
    """The rows of the table under ``title``: cells cut at the dashes' columns, a wrapped
    cell's further lines joined to it."""
    lines = out.split(f"\n{title}\n", 1)[1].splitlines()
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", lines[1])]
    rows: list[list[str]] = []
    for line in lines[2:]:
        first = line[: spans[1][0]].strip()
        if not line.strip() or not (first.isdigit() or (rows and not first)):
            break  # the table ends: a blank line or its legend
        cells = [line[a : (spans[i + 1][0] if i + 1 < len(spans) else None)].strip()
                 for i, (a, _) in enumerate(spans)]  # fmt: skip
        if cells[0]:
            rows.append(cells)
        else:
            rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], cells, strict=True)]
    return rows


def _demo(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TOOLTAP_"))}
    return subprocess.run(
        [sys.executable, "-m", "tooltap", "demo", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env={**clean, **(env or {})},
    )


def test_demo_runs_every_scenario_and_reports_each_call_id() -> None:
    proc = _demo()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out, progress = proc.stdout, proc.stderr
    assert not re.search(r"^\[.*UNEXPECTED$", progress, re.MULTILINE)
    assert re.search(r"\[27/27\]", progress)
    assert "ok when that is how the scenario should end" in " ".join(progress.split())
    assert max(len(line) for line in (out + progress).splitlines()) <= 100
    conversations = _table(out, "Conversations")
    assert [row[0] for row in conversations] == [str(n) for n in range(1, 28)]
    labels = {row[0]: row[1] for row in conversations}
    assert "two conversations at once, both numbering ids call_0, call_1" in labels["15"]
    found = _table(out, "Tool calls, per call id")
    assert {tool for _, _, tool, *_ in found} == {"lookup_demo_value"}
    # each call sits in its conversation's trace: the scenario comes from the root span
    scenarios = {scenario for scenario, *_ in found}
    assert "?" not in scenarios and len(scenarios) >= 10
    assert all(t.endswith("until flush") for *_, o, t in found if o == "orphaned")
    assert all(re.fullmatch(r"not a call|\d+\.\d ms(?: until flush)?", t) for *_, t in found)
    rows = [(p, cid, o, t) for _, p, _, cid, o, t in found]
    outcomes = [outcome for _, _, outcome, _ in rows]
    assert outcomes.count("ok") >= 30
    # The abandoned pair, and the complete first call of each cut stream (openai.chat,
    # Converse): a correct harness runs nothing from a truncated response, so that call
    # is never answered.
    assert outcomes.count("orphaned") == 4
    # Truncated calls never fully arrived; the invalid-JSON call did: it has its span,
    # ended by the error result the harness sent under its id.
    assert outcomes.count("truncated_json") == 3
    assert [(o, t.endswith("ms")) for _, _, o, t in rows if "invalid_json" in o] == [
        ("error (invalid_json)", True)
    ]
    call_ids = [cid for _, cid, _, _ in rows if cid != "(no id)"]
    # One row per delivered call: two conversations at once numbering their ids the same
    # way each have their own call_0 and call_1, both ok; every other id is unique.
    shared = [(cid, o) for _, cid, o, _ in rows if re.fullmatch(r"call_\d", cid)]
    assert sorted(shared) == [("call_0", "ok")] * 2 + [("call_1", "ok")] * 2
    unique = [cid for cid in call_ids if not re.fullmatch(r"call_\d", cid)]
    assert len(unique) == len(set(unique)), "one row per call id"
    # Google and Ollama calls without ids
    assert {p for p, cid, _, _ in rows if cid == "(no id)"} == {"gcp.gemini", "ollama"}
    # Every SDK's agent: boto3 Converse and AnthropicBedrock as aws.bedrock, cohere, ollama
    providers = {"openai", "anthropic", "gcp.gemini", "aws.bedrock", "cohere", "ollama"}
    assert {p for p, _, _, _ in rows} == providers
    assert [o for p, _, o, _ in rows if p in ("aws.bedrock", "cohere", "ollama")].count("ok") == 10
    assert "unknown_call" not in out  # every result answered a call id tooltap knew
    assert "truncated_stream" in out and "overloaded_error" in out
    assert "bedrock.converse: truncated_stream stream ended before messageStop" in out
    assert re.search(r"stream_buffered \d+ events at once after 2\.\d+s", out)
    assert re.search(r"^  duplicate: lookup_demo_value call_\w+$", out, re.MULTILINE)
    # The summary counts what the exported metrics count, and agrees with the traces.
    summary = re.search(
        r"(\d+) model calls in the exported metrics \((\d+) failed, (\d+) retries\), "
        r"(\d+) inference spans in the traces",
        " ".join(out.split()),
    )
    assert summary, out
    operations, failed, retries, spans = map(int, summary.groups())
    assert operations == spans >= 40
    assert failed >= 5 and retries >= 2  # the anthropic retries and failures included


def test_version_flag_prints_the_package_version() -> None:
    import tooltap

    proc = subprocess.run(
        [sys.executable, "-m", "tooltap", "--version"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"tooltap {tooltap.__version__}"


BLOCK_SDK = """
import sys

import pytest
from importlib.abc import MetaPathFinder


class NoSdk(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry.sdk" or name.startswith("opentelemetry.sdk."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoSdk())
from tooltap._cli import main
main(["demo"])
"""


def test_demo_without_the_sdk_says_what_to_install() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", BLOCK_SDK], check=False, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert 'pip install ".[demo]"' in proc.stderr


def test_simulator_port_in_use_says_to_choose_another() -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "tooltap.simulator", "--port", str(port)],
            check=False, capture_output=True, text=True, timeout=30,
        )  # fmt: skip
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and "--port" in proc.stderr


def test_demo_otlp_sends_its_traces_and_metrics_under_a_service_name() -> None:
    from tests.ops.otlp_receiver import http_receiver

    with http_receiver() as (url, received):
        proc = _demo("--otlp", url)
    assert proc.returncode == 0, proc.stderr
    spans = received.spans()
    assert sum(1 for s in spans if s.name.startswith("conversation ")) == 27
    assert "tooltap.tool_calls" in received.metric_names()
    assert {r.get("service.name") for r in received.resources()} == {"tooltap-demo"}
    assert f"exported over OTLP to {url}" in proc.stdout


def test_serve_on_a_busy_port_names_the_port_option() -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        proc = _demo("--serve", "--port", str(port))
    assert proc.returncode == 0, proc.stderr
    assert f"No Prometheus endpoint could be started on port {port}" in proc.stdout
    assert "--port N" in proc.stdout and "run `tooltap demo --serve`" not in proc.stdout


def test_help_texts_are_plain_and_say_the_defaults() -> None:
    def help_of(*args: str) -> str:
        proc = subprocess.run([sys.executable, *args, "--help"], check=True,
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        return proc.stdout

    tooltap_help = help_of("-m", "tooltap")
    assert "``" not in tooltap_help and ":class:" not in tooltap_help
    simulator = help_of("-m", "tooltap.simulator")
    assert "(default: 8765)" in simulator and "x-tooltap-sim-fault" in simulator
    from tooltap.simulator import FAULT_KINDS

    assert all(f"\n  {kind}" in simulator for kind in FAULT_KINDS)


def _extra(extras: dict[str, list[str]], name: str) -> set[str]:
    """The requirement names an extra brings, its ``tooltap[...]`` references expanded."""
    found: set[str] = set()
    for requirement in extras[name]:
        base = re.split(r"[<>=!;\[ ]", requirement, maxsplit=1)[0].lower()
        if base == "tooltap":
            for inner in re.findall(r"\[(.*)\]", requirement)[0].split(","):
                found |= _extra(extras, inner.strip())
        else:
            found.add(base)
    return found


def test_scripts_demo_installs_the_demo_extra_alone() -> None:
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    demo = _extra(extras, "demo")
    assert {"openai", "anthropic", "google-genai", "opentelemetry-sdk"} <= demo
    assert not demo & {"ruff", "mypy", "pytest", "hypothesis", "opentelemetry-distro"}
    assert not [r for r in demo if r.startswith("opentelemetry-instrumentation")]
    assert demo <= _extra(extras, "dev")  # the tests' venv has what the demo needs
    script = (root / "scripts/demo").read_text()
    assert '-e ".[demo]"' in script and "VENV=.venv-demo" in script and "[dev]" not in script


def test_otlp_url_is_the_receivers_base_and_picks_the_protocol(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tooltap._demo.run import _use_otlp

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")  # restored afterwards
    for url, base, protocol in [
        ("http://127.0.0.1:6006/v1/traces", "http://127.0.0.1:6006", "http/protobuf"),
        ("http://127.0.0.1:4318/", "http://127.0.0.1:4318", "http/protobuf"),
        ("http://127.0.0.1:4317", "http://127.0.0.1:4317", "grpc"),
    ]:
        monkeypatch.delenv("OTEL_EXPORTER_OTLP_PROTOCOL", raising=False)
        _use_otlp(url)
        assert os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] == base
        assert os.environ["OTEL_EXPORTER_OTLP_PROTOCOL"] == protocol
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    _use_otlp("http://127.0.0.1:6006")
    assert os.environ["OTEL_EXPORTER_OTLP_PROTOCOL"] == "grpc"  # the user's own, kept
