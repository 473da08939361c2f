"""The compose stack's files parse, reference files that exist, and wire up consistently.

There is no container engine here: this checks the files, and runs promtool on the
Prometheus config (with the rules path mapped to the repository's file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.ops.support import DASHBOARDS, ROOT, promtool_run

COMPOSE = ROOT / "examples" / "compose"


def load(name: str) -> Any:
    return yaml.safe_load((COMPOSE / name).read_text())


def mounts() -> dict[str, Path]:
    """Container path -> host path of every bind mount in compose.yaml."""
    found = {}
    for service in load("compose.yaml")["services"].values():
        for volume in service.get("volumes", []):
            host, container = volume.split(":")[:2]
            found[container] = (COMPOSE / host).resolve()
    return found


def test_every_bind_mount_exists() -> None:
    paths = mounts()
    assert len(paths) == 6
    for container, host in paths.items():
        assert host.is_file(), f"{container} <- {host}"
    assert paths["/etc/prometheus/alerts.yml"] == DASHBOARDS / "alerts.yml"
    assert paths["/var/lib/grafana/dashboards/tooltap.json"] == DASHBOARDS / "tooltap.json"


def test_ports_bind_to_loopback_only() -> None:
    for name, service in load("compose.yaml")["services"].items():
        for port in service.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), (name, port)


def test_collector_pipelines_use_defined_components() -> None:
    config = load("otel-collector.yaml")
    for pipeline in config["service"]["pipelines"].values():
        for kind in ("receivers", "processors", "exporters"):
            assert set(pipeline.get(kind, [])) <= set(config[kind]), (kind, pipeline)
    exporters = config["service"]["pipelines"]["traces"]["exporters"]
    assert config["exporters"][exporters[0]]["endpoint"] == "jaeger:4317"
    assert config["exporters"]["prometheus"]["enable_open_metrics"] is True


def test_prometheus_scrapes_the_collector_and_loads_the_rules(
    promtool: Path, tmp_path: Path
) -> None:
    config = load("prometheus.yml")
    targets = [
        t for job in config["scrape_configs"] for s in job["static_configs"] for t in s["targets"]
    ]
    exporter = load("otel-collector.yaml")["exporters"]["prometheus"]["endpoint"]
    assert f"otel-collector:{exporter.rsplit(':', 1)[1]}" in targets
    rules = mounts()
    config["rule_files"] = [str(rules[path]) for path in config["rule_files"]]
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    result = promtool_run(promtool, "check", "config", str(tmp_path / "prometheus.yml"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "8 rules found" in result.stdout


def test_jaeger_is_a_pinned_v2_image() -> None:
    image = load("compose.yaml")["services"]["jaeger"]["image"]
    name, _, tag = image.partition(":")
    assert name == "jaegertracing/jaeger"
    assert tag.split(".")[0] == "2" and len(tag.split(".")) == 3, image


def test_the_run_recipe_exports_and_the_scraped_app_binds_all_interfaces() -> None:
    """Plain ``python`` exports nothing; the host app's /metrics must be reachable from Docker."""
    readme = (COMPOSE / "README.md").read_text()
    recipe = readme[readme.index("```bash") : readme.index("```", readme.index("```bash") + 3)]
    runs = [line for line in recipe.splitlines() if "agents/" in line]
    assert runs and all("opentelemetry-instrument python" in line for line in runs), runs
    assert "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf" in recipe  # :4318 is OTLP/HTTP
    scraped = next(
        j for j in load("prometheus.yml")["scrape_configs"] if j["job_name"] == "tooltap-agent"
    )
    assert scraped["static_configs"][0]["targets"] == ["host.docker.internal:9464"]
    assert "TOOLTAP_PROMETHEUS_HOST=0.0.0.0" in readme
    assert "TOOLTAP_PROMETHEUS_HOST=0.0.0.0" in (COMPOSE / "prometheus.yml").read_text()


def test_grafana_provisioning_points_at_the_dashboard_and_datasources() -> None:
    providers = load("grafana/dashboards.yml")["providers"]
    folder = providers[0]["options"]["path"]
    assert any(c.startswith(folder + "/") for c in mounts())
    sources = {s["uid"]: s for s in load("grafana/datasources.yml")["datasources"]}
    assert sources["prometheus"]["type"] == "prometheus" and sources["prometheus"]["isDefault"]
    destination = sources["prometheus"]["jsonData"]["exemplarTraceIdDestinations"][0]
    assert destination["datasourceUid"] in sources
    assert sources["jaeger"]["url"].endswith(":16686")
