"""Helpers for the ops tests: tool paths, free ports, processes stopped by pid, Prometheus."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import yaml

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".tools"
DASHBOARDS = ROOT / "dashboards"
PROM_BIN = TOOLS / "prometheus" / "usr" / "bin"
PYTHON = sys.executable
T = TypeVar("T")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def poll(check: Callable[[], T | None], timeout: float, step: float = 0.2) -> T | None:
    """Call ``check`` until it returns something truthy, for ``timeout`` seconds at most."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(step)


def wait_for(check: Callable[[], T | None], timeout: float, what: str, step: float = 0.2) -> T:
    """Like ``poll``, but failing after ``timeout`` seconds."""
    value = poll(check, timeout, step)
    if not value:
        raise AssertionError(f"timed out after {timeout}s waiting for {what}")
    return value


def http_json(url: str, data: bytes | None = None, timeout: float = 5.0) -> Any:
    """GET (or POST ``data``) and decode JSON; None when unreachable."""
    try:
        with urllib.request.urlopen(url, data=data, timeout=timeout) as response:
            return json.loads(response.read())
    except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError):
        return None


@contextmanager
def process(args: list[str], **kwargs: Any) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``args``; on exit stop that process (by its pid), TERM then KILL, bounded."""
    proc = subprocess.Popen(args, **kwargs)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def ensure_tool(script: str, path: Path) -> Path:
    """Fetch a tool with its ``scripts/`` installer (idempotent) and return its path."""
    if not path.exists():
        subprocess.run(["bash", str(ROOT / "scripts" / script)], check=True, timeout=900)
    assert path.exists(), f"scripts/{script} did not provide {path}"
    return path


def shortened_rules(dest: Path, for_duration: str = "2s") -> Path:
    """``dashboards/alerts.yml`` with every ``for:`` shortened, for a real-time test."""
    rules = yaml.safe_load((DASHBOARDS / "alerts.yml").read_text())
    for group in rules["groups"]:
        for rule in group["rules"]:
            if "alert" in rule:
                rule["for"] = "0s" if rule.get("for") in ("0m", "0s") else for_duration
    dest.write_text(yaml.safe_dump(rules, sort_keys=False))
    return dest


@contextmanager
def prometheus(
    binary: Path, workdir: Path, target_port: int, rules: Path, job: str
) -> Iterator[str]:
    """A real Prometheus on 127.0.0.1 scraping ``target_port`` every second; yields its URL."""
    port = free_port()
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(rules)],
        "scrape_configs": [
            {"job_name": job, "static_configs": [{"targets": [f"127.0.0.1:{target_port}"]}]}
        ],
    }
    (workdir / "prometheus.yml").write_text(yaml.safe_dump(config))
    log = (workdir / "prometheus.log").open("wb")
    args = [
        str(binary),
        f"--config.file={workdir / 'prometheus.yml'}",
        f"--storage.tsdb.path={workdir / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--log.level=warn",
    ]
    url = f"http://127.0.0.1:{port}"
    with log, process(args, stdout=log, stderr=subprocess.STDOUT):
        wait_for(lambda: _ready(url), 30, "Prometheus to be ready")
        yield url


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/-/ready", timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def prom_query(url: str, expr: str) -> list[dict[str, Any]]:
    """Instant query; the result vector (raises when Prometheus reports an error)."""
    body = http_json(f"{url}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    assert body is not None and body.get("status") == "success", (expr, body)
    result: list[dict[str, Any]] = body["data"]["result"]
    return result


def promtool_run(
    promtool: Path, *args: str, cwd: Path = DASHBOARDS
) -> subprocess.CompletedProcess[str]:
    """Run promtool (in ``cwd``) and capture its output."""
    return subprocess.run(
        [str(promtool), *args], check=False, capture_output=True, text=True, timeout=120, cwd=cwd
    )


GRAFANA_VARS = {
    "$__rate_interval": "1m",
    "$__range": "5m",
    "$job": "tooltap-agent",
    "$provider": ".*",
    "$tool": ".*",
}


def dashboard_targets() -> list[tuple[str, str]]:
    """(panel title / refId, PromQL) of every panel target, Grafana variables substituted."""
    board = json.loads((DASHBOARDS / "tooltap.json").read_text())
    found = []
    for panel in board["panels"]:
        for target in panel.get("targets", []):
            expr = target["expr"]
            for name, value in GRAFANA_VARS.items():
                expr = expr.replace(name, value)
            assert "$" not in expr, f"unsubstituted variable in {expr}"
            found.append((f"{panel['title']} / {target['refId']}", expr))
    return found
