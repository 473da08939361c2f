"""Secrets: credentials never reach telemetry, whatever the content-capture mode.

Canary credentials, unique per test, go out in every style the SDKs use: ``Authorization:
Bearer`` (openai's key, anthropic's ``auth_token``), ``x-api-key`` (anthropic),
``x-goog-api-key`` (google-genai), ``?key=`` in the URL (a bare HTTP client on the Gemini
API), and custom headers (``OpenAI-Organization``, ``OpenAI-Project``, an app header).
Each app streams, makes a whole-body call, sends tool results back, and meets a rate
limit; the message content is ordinary text (content recorder may record it).

No canary may appear in any exported span (name, attributes, events, links, status,
resource: ``to_json``), metric (the in-memory reader's dump), OpenTelemetry log record
(content events), listener event, flight record (every response recorded), or log line
written by tooltap or the OpenTelemetry SDK (caplog at DEBUG on every logger; lines from
the app's own HTTP/SDK libraries are theirs, and the ``?key=`` case checks they did see
the canary, so capture works).
"""

from __future__ import annotations

import json
import logging
import secrets
from base64 import b64decode
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
import pytest
from opentelemetry.sdk.trace import ReadableSpan

import tooltap
import tooltap.simulator
from tests.reliability.apps import App
from tests.reliability.support import Canned, Recorder, ReplayServer
from tests.reliability.wire import PATHS, STREAMED, first_body
from tooltap._telemetry.telemetry import get_telemetry
from tooltap.simulator import FAULT_HEADER, Simulator

MODES = ("NO_CONTENT", "SPAN_ONLY", "EVENT_ONLY", "SPAN_AND_EVENT")
APPS = (
    "openai.chat",
    "openai.responses",
    "anthropic.messages",
    "anthropic.token",
    "google.genai",
    "url_key",
)
_TOOLTAP_DIR = str(Path(tooltap.__file__).parent)


@dataclass
class Canaries:
    """One set of secrets, each distinctive enough to be found in any text."""

    token: str = field(default_factory=lambda: secrets.token_hex(12))

    def value(self, kind: str) -> str:
        return f"{kind}-CANARY-{self.token}"

    @property
    def all(self) -> list[str]:
        return [self.token]  # every value embeds it: one search finds any of them


def _app(name: str, sim: Simulator, canaries: Canaries, recorder: Recorder) -> App:
    c = canaries.value
    custom = {"x-app-secret": c("custom")}
    if name.startswith("openai."):
        app = App(name, sim.url, sync=True, default_headers=custom)
        app.client = app.client.with_options(
            api_key=c("sk"), organization=c("org"), project=c("proj")
        )
        return app
    if name == "anthropic.messages":
        tracing = {"tracer_provider": recorder.tracer_provider}  # its own span, adopted
        app = App(name, sim.url, sync=True, open_telemetry=tracing, default_headers=custom)
        app.client = app.client.with_options(api_key=c("sk-ant"))
        return app
    if name == "anthropic.token":
        app = App("anthropic.messages", sim.url, sync=True, default_headers=custom)
        app.client = app.client.with_options(api_key=None, auth_token=c("bearer"))
        return app
    app = App(name, sim.url, sync=True, headers=custom)
    app.client._api_client.api_key = c("AIza")  # sent as x-goog-api-key
    return app


def _url_key(sim: Simulator, canaries: Canaries) -> None:
    """A bare client on the Gemini API, the key in the query string."""
    key = canaries.value("AIza")
    with httpx2.Client(timeout=10) as client:
        for path in (
            PATHS["google.genai"],
            PATHS["google.genai"].replace("streamGenerateContent", "generateContent").split("?")[0],
        ):
            response = client.post(
                f"{sim.url}{path}{'&' if '?' in path else '?'}key={key}",
                json=first_body("google.genai"),
            )
            assert response.status_code == 200


def _flight_records(directory: Path, *, at_least: int) -> str:
    """The text of every flight record written (once the writer is done)."""
    tel = get_telemetry()
    assert tel is not None and tel.flight is not None and tel.flight.writer.drain(10)
    files = sorted(directory.glob("tooltap-flight-*"))
    assert len(files) >= at_least
    return "\n".join(f.read_text() for f in files)


def _dump(span: ReadableSpan) -> str:
    return str(span.to_json(indent=None))


def _log_lines(records: list[logging.LogRecord], ours: bool) -> list[str]:
    formatter = logging.Formatter("%(name)s %(message)s")
    lines = []
    for record in records:
        mine = record.name.startswith(("tooltap", "opentelemetry")) or record.pathname.startswith(
            _TOOLTAP_DIR
        )
        if mine == ours:
            lines.append(formatter.format(record))
    return lines


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("app_name", APPS)
@pytest.mark.parametrize("mode", MODES)
async def test_no_secret_in_telemetry(
    mode: str,
    app_name: str,
    sim: Simulator,
    recorder: Recorder,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    caplog.set_level(logging.DEBUG)
    canaries = Canaries()
    recorder.instrument(capture_content=mode, flight_recorder=tmp_path, flight_recorder_all=True)
    if app_name == "url_key":
        _url_key(sim, canaries)
    else:
        app = _app(app_name, sim, canaries, recorder)
        try:
            for seen in (await app.view("plain"), await app.view(stream=False)):
                assert "raised" not in seen, seen
            limited = app.client
            if app_name.startswith(("openai", "anthropic")):
                app.client = limited.with_options(
                    default_headers={FAULT_HEADER: "rate_limit;retry_after=0"}
                )
            else:
                sim.inject(tooltap.simulator.Fault("rate_limit", retry_after=0))
            assert "raised" in await app.view(stream=False)
        finally:
            await app.aclose()
    tooltap.flush()

    sent = " ".join(" ".join(r.headers.values()) + r.path + "?" + r.query for r in sim.requests)
    assert canaries.token in sent, "the canaries were never sent"
    spans = recorder.spans()
    recorded = [s for s in spans if (s.attributes or {}).get("gen_ai.input.messages")]
    # the content paths ran; anthropic's own span (adopted) gets content only from anthropic
    on_spans = mode in ("SPAN_ONLY", "SPAN_AND_EVENT") and app_name != "anthropic.messages"
    assert bool(recorded) == on_spans
    metrics = recorder.reader.get_metrics_data()
    assert metrics is not None
    texts = {
        "spans": "\n".join(_dump(s) for s in spans),
        "metrics": metrics.to_json(indent=None),
        "log records": "\n".join(r.to_json(indent=None) for r in recorder.logs.get_finished_logs()),
        "listener events": repr(recorder.events),
        "tooltap/otel log lines": "\n".join(_log_lines(caplog.records, ours=True)),
        "flight records": _flight_records(tmp_path, at_least=2),
    }
    if "EVENT" in mode:
        assert texts["log records"], "content events were not exported"
    for where, text in texts.items():
        for canary in canaries.all:
            assert canary not in text, f"a canary leaked into {where}"
    if app_name == "url_key":  # the app's own HTTP client logs the URL: capture works
        assert canaries.token in "\n".join(_log_lines(caplog.records, ours=False))


# --- what a provider's error message echoes ---------------------------------------------

#: Credentials as error messages echo them: an OpenAI key, a Google API key, a bearer token.
ECHOED = (
    "sk-proj-ECHOcanary0123456789",
    "AIzaSyECHOcanary0123456789abcdefghijklm",
    "Bearer ECHOtok",
)
ERROR_STREAMS = {
    "/v1/chat/completions": b'data: {"error": {"message": "bad key %s", "type": "invalid"}}\n\n',
    "/v1/messages": b'event: error\ndata: {"type": "error", "error": '
    b'{"type": "authentication_error", "message": "bad key %s"}}\n\n',
    "/v1beta/models/g:streamGenerateContent?alt=sse": b'data: {"error": {"code": 400,'
    b' "message": "bad key %s", "status": "INVALID_ARGUMENT"}}\n\n',
}


@pytest.mark.parametrize("path", list(ERROR_STREAMS))
def test_secret_echoed_by_a_provider_error_is_masked(
    path: str, replay: ReplayServer, recorder: Recorder, tmp_path: Path
) -> None:
    body = ERROR_STREAMS[path] % " / ".join(ECHOED).encode()
    replay.canned = Canned(200, [("content-type", "text/event-stream")], [body])
    recorder.instrument(capture_content="SPAN_AND_EVENT", flight_recorder=tmp_path)
    with httpx2.Client(timeout=10) as client:
        request = client.build_request("POST", replay.url + path, json=STREAMED)
        response = client.send(request, stream=True)
        try:
            assert b"".join(response.iter_bytes()) == body
        finally:
            response.close()
    problems = [e for e in recorder.events if isinstance(e, tooltap.ToolCallProblem)]
    assert [p.problem.kind for p in problems] == ["error_event"]
    flight = _flight_records(tmp_path, at_least=1)
    assert "[redacted]" in b64decode(json.loads(flight.splitlines()[1])["data"]).decode()
    recorded = repr(problems) + repr([s.to_json() for s in recorder.spans()]) + flight
    assert "[redacted]" in repr(problems)
    for secret in ECHOED:
        assert secret.split()[-1] not in recorded


def test_content_events_without_a_logger_provider_warn(
    caplog: pytest.LogCaptureFixture, recorder: Recorder
) -> None:
    caplog.set_level(logging.WARNING, logger="tooltap")
    tooltap.instrument(
        tracer_provider=recorder.tracer_provider,
        meter_provider=recorder.meter_provider,
        capture_content="EVENT_ONLY",
    )
    warned = [r.getMessage() for r in caplog.records if "LoggerProvider" in r.getMessage()]
    assert len(warned) == 1 and "EVENT_ONLY" in warned[0]
    tooltap.uninstrument()
    caplog.clear()
    recorder.instrument(capture_content="EVENT_ONLY")  # with its logger provider: no warning
    assert not [r for r in caplog.records if "LoggerProvider" in r.getMessage()]
