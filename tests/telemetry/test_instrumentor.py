"""Hooking in: lazy patching, idempotent instrument/uninstrument, entry point, env switches,
suppression, non-LLM traffic untouched, internal failures contained.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from typing import Any

import httpx
import httpx2
import pytest
import wrapt
from opentelemetry.instrumentation.utils import suppress_instrumentation

import tooltap
from tests.telemetry.support import Recorder, first_body, post, url
from tooltap._telemetry.operation import get_telemetry
from tooltap.simulator import Simulator

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _python(code: str, env: dict[str, str] | None = None) -> str:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60,
        env={**os.environ, **(env or {})}, cwd=ROOT, check=True,
    )  # fmt: skip
    return out.stdout.strip()


def _is_ours(cls: Any) -> bool:
    return isinstance(cls.__dict__["send"], wrapt.FunctionWrapper)


def test_importing_tooltap_imports_no_http_library_or_sdk() -> None:
    out = _python("""
        import sys, tooltap
        tooltap.instrument()
        libs = ("httpx", "httpx2", "openai", "anthropic", "google.genai", "aiohttp")
        print(sorted(m for m in libs if m in sys.modules))
        import httpx2
        print(type(httpx2.Client.__dict__["send"]).__name__)
    """)  # fmt: skip
    assert out.splitlines() == ["[]", "FunctionWrapper"]


def test_instrument_uninstrument_instrument(recorder: Recorder, sim: Simulator) -> None:
    target = url(sim, "openai.chat", False)
    for round_ in range(2):
        recorder.instrument()
        recorder.instrument()  # a second call only warns
        assert all(
            _is_ours(c)
            for c in (httpx.Client, httpx.AsyncClient, httpx2.Client, httpx2.AsyncClient)
        )
        post("httpx2", target, first_body("openai.chat", False), stream=False)
        assert len(recorder.inference()) == round_ + 1
        tooltap.uninstrument()
        tooltap.uninstrument()
        assert not any(_is_ours(c) for c in (httpx.Client, httpx2.Client))
        post("httpx", target, first_body("openai.chat", False), stream=False)
        assert len(recorder.inference()) == round_ + 1  # nothing recorded while off


def test_uninstrument_removes_only_our_wrapper(recorder: Recorder) -> None:
    recorder.instrument()

    def theirs(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        return wrapped(*args, **kwargs)

    handle = wrapt.wrap_function_wrapper(httpx2.Client, "send", theirs)
    try:
        tooltap.uninstrument()
        assert httpx2.Client.__dict__["send"] is handle  # theirs stays, ours spliced out
        assert not isinstance(handle.__wrapped__, wrapt.FunctionWrapper)
    finally:
        wrapt.unwrap_object(httpx2.Client, "send", handle)


def test_entry_point_and_instrumentation_dependencies() -> None:
    (ep,) = [e for e in entry_points(group="opentelemetry_instrumentor") if e.name == "tooltap"]
    assert ep.load() is tooltap.TooltapInstrumentor
    instrumentor = tooltap.TooltapInstrumentor()
    deps = tuple(instrumentor.instrumentation_dependencies())
    assert [d.split()[0] for d in deps] == ["openai", "anthropic", "google-genai"]
    assert instrumentor._check_dependency_conflicts() is None  # each optional


def test_disabled_by_env(recorder: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_PYTHON_DISABLED_INSTRUMENTATIONS", "requests, tooltap")
    recorder.instrument()
    assert get_telemetry() is None and not _is_ours(httpx2.Client)


def test_setup_failure_never_raises(recorder: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    from tooltap import instrumentor

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("exporter setup bug")

    monkeypatch.setattr(instrumentor, "_providers", broken)
    recorder.instrument()  # logged, not raised
    assert get_telemetry() is None and not _is_ours(httpx2.Client)


def test_opentelemetry_instrument_cli(sim: Simulator) -> None:
    """``opentelemetry-instrument python agent.py`` loads tooltap through the entry point."""
    script = f"""
        import httpx2, json
        body = json.loads({json.dumps(json.dumps(first_body("anthropic.messages", True)))})
        with httpx2.Client() as c:
            with c.stream("POST", {url(sim, "anthropic.messages", True)!r}, json=body) as r:
                r.read()
    """
    cli = os.path.join(os.path.dirname(sys.executable), "opentelemetry-instrument")
    env = {
        **os.environ,
        "OTEL_TRACES_EXPORTER": "console",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
        "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS": "httpx",
    }
    out = subprocess.run([cli, sys.executable, "-c", textwrap.dedent(script)], capture_output=True,
                         text=True, timeout=60, env=env, cwd=ROOT, check=True)  # fmt: skip
    assert '"name": "chat claude-sonnet-4-6"' in out.stdout
    # never answered: both tool spans end at exit, as orphaned, before the provider shuts down
    assert out.stdout.count('"name": "execute_tool lookup_demo_value"') == 2
    assert out.stdout.count('"tooltap.result": "orphaned"') == 2


def test_non_llm_traffic_is_untouched(rec: Recorder, sim: Simulator) -> None:
    with httpx2.Client() as client:
        response = client.send(
            client.build_request("POST", sim.url + "/v1/embeddings", json={}), stream=True
        )
        assert type(response.stream).__name__ == "BoundSyncStream"  # not proxied
        response.close()
        client.get(sim.url + "/v1/models")
    assert rec.spans() == []


def test_suppressed_context_is_untouched(rec: Recorder, sim: Simulator) -> None:
    with suppress_instrumentation():
        post("httpx2", url(sim, "openai.chat", True), first_body("openai.chat", True), stream=True)
    assert rec.spans() == [] and rec.events == []


@pytest.mark.parametrize(
    ("target", "stream"),
    [("tooltap._telemetry.operation.Operation.begin_attempt", True),
     ("tooltap._telemetry.operation.Operation.record_parsed", False),
     ("tooltap._patch.httpx_tap.begin", False),
     ("tooltap._patch.tap_stream.TapState.finish", True),
     ("tooltap._patch.tap_stream.TapState.feed", True),
     ("tooltap._telemetry.operation.Operation.end", False)],
)  # fmt: skip
def test_injected_internal_failure_never_reaches_the_app(
    rec: Recorder, sim: Simulator, monkeypatch: pytest.MonkeyPatch, target: str, stream: bool
) -> None:
    def explode(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("tooltap bug")

    monkeypatch.setattr(target, explode)
    tooltap.uninstrument()
    expected = post(
        "httpx2",
        url(sim, "google.genai", stream),
        first_body("google.genai", stream),
        stream=stream,
    )
    rec.instrument()
    got = post(
        "httpx2",
        url(sim, "google.genai", stream),
        first_body("google.genai", stream),
        stream=stream,
    )
    assert got[0] == expected[0] == 200
    assert len(got[1]) == len(expected[1]) and b"functionCall" in got[1]
    assert rec.total("tooltap.internal_errors") >= 1
