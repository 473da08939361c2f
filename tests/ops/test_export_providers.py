"""``tooltap._telemetry.export``: the providers tooltap uses, the private ones it builds, exit.

Global providers can be set once per process, so each case runs in a fresh interpreter.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import textwrap
import threading
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.ops.support import PYTHON, free_port
from tooltap._telemetry import export

OTEL_ENV = ("OTEL_", "TOOLTAP_")


def run_python(
    code: str, env: dict[str, str] | None = None, timeout: float = 60
) -> tuple[Any, float, str]:
    """Run ``code`` in a fresh interpreter; (its last stdout line as JSON, seconds, stderr)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(OTEL_ENV)}
    started = time.monotonic()
    result = subprocess.run(
        [PYTHON, "-c", textwrap.dedent(code)],
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1]), elapsed, result.stderr


SETUP = textwrap.dedent("""
    import json, time
    from opentelemetry import metrics, trace
    from tooltap._telemetry import export
    tp, mp = export.private_providers()
""")
RECORD = textwrap.dedent("""
    started = time.monotonic()
    tracer = tp.get_tracer("t")
    counter = mp.get_meter("t").create_counter("tooltap.tool_calls")
    for _ in range(200):
        with tracer.start_as_current_span("s"):
            counter.add(1)
    work = time.monotonic() - started
""")


def _instrumented(code: str, env: dict[str, str] | None = None) -> tuple[Any, str]:
    """Run ``code`` after ``tooltap.instrument``; ``tel`` is its Telemetry."""
    head = textwrap.dedent("""
        import json
        from opentelemetry import metrics, trace
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.trace import TracerProvider
        import tooltap
        from tooltap._telemetry import export
        from tooltap._telemetry.telemetry import get_telemetry
    """)
    out, _, err = run_python(head + textwrap.dedent(code), env)
    return out, err


def test_explicit_providers_are_used_as_given(monkeypatch: pytest.MonkeyPatch) -> None:
    out, _ = _instrumented(
        """
        mine = TracerProvider(), MeterProvider()
        tooltap.instrument(tracer_provider=mine[0], meter_provider=mine[1], export=True)
        tel = get_telemetry()
        print(json.dumps([tel.tracer_provider is mine[0], tel.meter_provider is mine[1],
                          export.prometheus_address()]))
        """,
        {"TOOLTAP_PROMETHEUS_PORT": "0", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"},
    )
    assert out == [True, True, None]


def test_by_default_nothing_is_built_and_no_global_is_set() -> None:
    out, err = _instrumented(
        """
        tooltap.instrument()
        tel = get_telemetry()
        print(json.dumps([tel.tracer_provider, tel.meter_provider,
                          type(trace.get_tracer_provider()).__name__, export.prometheus_address()]))
        """,
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "TOOLTAP_PROMETHEUS_PORT": "0"},
    )
    assert out == [None, None, "ProxyTracerProvider", None]
    assert "export is off" in err  # the port alone does not turn export on


def test_the_apps_providers_set_after_instrument_are_accepted_and_used() -> None:
    out, err = _instrumented(
        """
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        tooltap.instrument()
        exporter = InMemorySpanExporter()
        mine = TracerProvider()
        mine.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(mine)
        get_telemetry().tracer.start_span("probe").end()
        print(json.dumps([trace.get_tracer_provider() is mine,
                          [s.instrumentation_scope.name for s in exporter.get_finished_spans()]]))
        """
    )
    assert out == [True, ["tooltap"]]
    assert "Overriding of current TracerProvider is not allowed" not in err


@pytest.mark.parametrize("how", ["option", "env"])
def test_export_builds_private_providers_and_sets_no_global(how: str) -> None:
    call = "tooltap.instrument(export=True)" if how == "option" else "tooltap.instrument()"
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "TOOLTAP_PROMETHEUS_PORT": "0"}
    if how == "env":
        env["TOOLTAP_EXPORT"] = "1"
    out, _ = _instrumented(
        f"""
        {call}
        tel = get_telemetry()
        mine = TracerProvider()
        trace.set_tracer_provider(mine)
        print(json.dumps([type(tel.tracer_provider).__module__,
                          type(tel.meter_provider).__module__,
                          trace.get_tracer_provider() is mine,
                          tel.tracer_provider is not mine,
                          export.prometheus_address() is not None]))
        """,
        env,
    )
    assert out[0].startswith("opentelemetry.sdk.trace")
    assert out[1].startswith("opentelemetry.sdk.metrics")
    assert out[2:] == [True, True, True]


def test_under_the_distro_tooltap_uses_the_global_providers() -> None:
    code = textwrap.dedent("""
        import json
        from opentelemetry import trace
        from tooltap._telemetry.telemetry import get_telemetry
        tel = get_telemetry()
        print(json.dumps([tel is not None, tel.tracer_provider,
                          type(trace.get_tracer_provider()).__module__]))
    """)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(OTEL_ENV)}
    env = {
        **clean,
        "OTEL_TRACES_EXPORTER": "console",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
    }
    result = subprocess.run(
        [os.path.join(os.path.dirname(PYTHON), "opentelemetry-instrument"), PYTHON, "-c", code],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    line = next(x for x in result.stdout.splitlines() if x.startswith("["))
    assert json.loads(line) == [True, None, "opentelemetry.sdk.trace"]


def test_nothing_configured_builds_nothing() -> None:
    out, _, _ = run_python(SETUP + "print(json.dumps([tp, mp]))")
    assert out == [None, None]


def test_sdk_disabled_adds_nothing() -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_SDK_DISABLED": "true"}
    out, _, _ = run_python(SETUP + "print(json.dumps(tp))", env)
    assert out is None


@pytest.mark.parametrize(
    ("endpoint", "protocol", "warned"),
    [
        ("http://127.0.0.1:4318", "grpc", True),
        ("http://127.0.0.1:4317", "http/protobuf", True),
        ("http://127.0.0.1:4317", None, True),  # tooltap's default is http/protobuf
        ("http://127.0.0.1:4318", "http/protobuf", False),
        ("http://127.0.0.1:4317", "grpc", False),
        ("http://collector:9999", "grpc", False),
    ],
)
def test_endpoint_port_and_protocol_that_disagree_warn(
    endpoint: str, protocol: str | None, warned: bool
) -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}
    if protocol is not None:
        env["OTEL_EXPORTER_OTLP_PROTOCOL"] = protocol
    found = export.check_endpoints(env)
    assert bool(found) is warned
    if warned:
        assert "OTEL_EXPORTER_OTLP_PROTOCOL=" in found[0]


def test_a_mismatch_is_warned_once_per_process() -> None:
    _, err = _instrumented(
        """
        tooltap.instrument(); tooltap.uninstrument(); tooltap.instrument()
        print(json.dumps(1))
        """,
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
        },
    )
    assert err.count("is the http/protobuf port but the protocol is grpc") == 2  # traces, metrics


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_a_down_collector_never_blocks_the_app(protocol: str) -> None:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{free_port()}",
        "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
    }
    code = (
        SETUP
        + RECORD
        + textwrap.dedent("""
        print(json.dumps([type(tp).__module__, type(mp).__module__, work]))
    """)
    )
    out, elapsed, _ = run_python(code, env)
    assert out[0].startswith("opentelemetry.sdk.trace") and out[1].startswith("opentelemetry.sdk")
    assert out[2] < 2.0  # recording is not slowed by the dead endpoint
    assert elapsed < export.SHUTDOWN_TIMEOUT + 8  # exit flush is bounded


@pytest.fixture
def black_hole() -> Iterator[int]:
    """A TCP server that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    thread.join(5)
    for conn in held:
        conn.close()
    server.close()


def test_a_hanging_collector_delays_exit_by_the_bound_only(black_hole: int) -> None:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{black_hole}",
        "OTEL_EXPORTER_OTLP_TIMEOUT": "30",  # the exporter alone would wait this long
    }
    out, elapsed, err = run_python(SETUP + RECORD + "print(json.dumps(work))", env)
    assert out < 2.0
    assert elapsed < export.SHUTDOWN_TIMEOUT + 8
    assert "telemetry flush timed out" in err


def test_unsupported_protocol_falls_back_to_http() -> None:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
    }
    code = SETUP + textwrap.dedent("""
        processor = tp._active_span_processor._span_processors[0]
        print(json.dumps(type(processor._batch_processor._exporter).__module__))
    """)
    out, _, err = run_python(code, env)
    assert out == "opentelemetry.exporter.otlp.proto.http.trace_exporter"
    assert "not supported" in err


def test_prometheus_endpoint_serves_each_family_once() -> None:
    code = SETUP + textwrap.dedent("""
        import urllib.request
        counter = mp.get_meter("t").create_counter("tooltap.tool_calls", unit="{call}")
        counter.add(3, {"tooltap.outcome": "ok"})
        mp.force_flush(); mp.force_flush()  # queued collections must not repeat families
        host, port = export.prometheus_address()
        with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=5) as response:
            body = response.read().decode()
        print(json.dumps([host, body]))
    """)
    out, _, _ = run_python(code, {"TOOLTAP_PROMETHEUS_PORT": "0"})
    host, body = out
    assert host == "127.0.0.1"
    assert body.count("# TYPE tooltap_tool_calls_total counter") == 1
    assert 'tooltap_outcome="ok"' in body and "} 3.0" in body


def test_a_taken_prometheus_port_warns_and_goes_on() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        code = SETUP + "print(json.dumps([type(mp).__name__, export.prometheus_address()]))"
        out, _, err = run_python(code, {"TOOLTAP_PROMETHEUS_PORT": str(port)})
    assert out == ["NoneType", None]
    assert "Prometheus endpoint on 127.0.0.1" in err and "not started" in err


def test_invalid_prometheus_port_is_ignored(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(export.PROMETHEUS_PORT_ENV, "http")
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    before = export.prometheus_address()
    with caplog.at_level("WARNING", logger="tooltap"):
        export.private_providers()
    assert export.prometheus_address() == before
    assert "invalid Prometheus port 'http'" in caplog.text


def test_shutdown_stops_the_prometheus_endpoint() -> None:
    code = SETUP + textwrap.dedent("""
        import urllib.request
        host, port = export.prometheus_address()
        export.shutdown(timeout=2)
        try:
            urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=2)
            print(json.dumps("still serving"))
        except OSError:
            print(json.dumps(export.prometheus_address()))
    """)
    out, _, _ = run_python(code, {"TOOLTAP_PROMETHEUS_PORT": "0"})
    assert out is None


def test_prometheus_address_reports_the_bound_port() -> None:
    port = free_port()
    code = SETUP + "print(json.dumps(export.prometheus_address()))"
    out, _, _ = run_python(code, {"TOOLTAP_PROMETHEUS_PORT": str(port)})
    assert out == ["127.0.0.1", port]
    with pytest.raises(OSError):  # and it is closed again after exit
        urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2)


def test_bind_address_comes_from_the_option_then_the_env() -> None:
    code = textwrap.dedent("""
        import json
        from tooltap._telemetry import export
        export.private_providers(prometheus_port=0)
        print(json.dumps(export.prometheus_address()[0]))
    """)
    out, _, _ = run_python(code, {"TOOLTAP_PROMETHEUS_HOST": "127.0.0.2"})
    assert out == "127.0.0.2"
    explicit = code.replace("prometheus_port=0", "prometheus_port=0, prometheus_host='127.0.0.3'")
    out, _, _ = run_python(explicit, {"TOOLTAP_PROMETHEUS_HOST": "127.0.0.2"})
    assert out == "127.0.0.3"
