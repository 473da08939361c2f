"""classify_error / classify_problem: statuses, bodies, headers, exceptions, corpus, real SDKs."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import aiohttp
import anthropic
import httpx
import httpx2
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

import tooltap
from tests.corpus import CASES, Case
from tooltap import Problem
from tooltap.core import ErrorClass, classify_error, classify_problem

# --- corpus -------------------------------------------------------------------------

HTTP_ERRORS = {
    "anthropic/error_400_invalid_request": "bad_request",
    "anthropic/error_404_not_found": "not_found",
    "google/error_400_invalid_role": "bad_request",
    "google/error_404_vertex_missing_model": "not_found",
    "openai-chat/error_404_model_not_found": "not_found",
    "openai-chat/error_429_openrouter": "rate_limited",
    "openai-responses/error_400_model_not_found": "bad_request",
    # recorded with HTTP 200 (see its meta "doubt"); live Azure sends 400: both must class
    "openai-chat/azure_prompt_content_filter": "content_filter",
}
STREAM_ERRORS = {
    "openai-chat/stream_error_event_groq_tool_use_failed": "stream_error_event",
    "openai-chat/stream_openrouter_error_in_chunk": "stream_error_event",
}


def _url(case: Case) -> str:
    req = case.meta["request"]
    query = f"?{req['query']}" if req["query"] else ""
    return f"https://{req['host']}{req['path']}{query}"


def test_every_corpus_error_case_has_an_expectation() -> None:
    errors = {c.name for c in CASES if c.meta["kind"] == "error"}
    assert errors == set(HTTP_ERRORS) | set(STREAM_ERRORS)


@pytest.mark.parametrize("name", sorted(HTTP_ERRORS))
def test_corpus_http_error_bodies(name: str) -> None:
    case = next(c for c in CASES if c.name == name)
    got = classify_error(case.status, {"content-type": case.meta["content_type"]}, case.body)
    assert got.error_type == HTTP_ERRORS[name]
    assert got.retryable is (HTTP_ERRORS[name] == "rate_limited")
    assert got.status == case.status
    # the same body given decoded, as text, and with the request URL classes the same
    decoded = json.loads(case.body)
    assert classify_error(case.status, {}, decoded).error_type == HTTP_ERRORS[name]
    assert classify_error(case.status, {}, case.body.decode()).error_type == HTTP_ERRORS[name]
    assert classify_error(case.status, {}, case.body, url=_url(case)) == got


def test_corpus_content_filter_also_with_the_live_status() -> None:
    case = next(c for c in CASES if c.name == "openai-chat/azure_prompt_content_filter")
    assert classify_error(400, {}, case.body).error_type == "content_filter"


@pytest.mark.parametrize(
    "name", ["anthropic/error_404_not_found", "openai-chat/error_404_model_not_found"]
)
def test_model_not_found_gets_a_model_hint(name: str) -> None:
    case = next(c for c in CASES if c.name == name)
    got = classify_error(case.status, {}, case.body, url=_url(case))
    assert got.hint is not None and "model" in got.hint
    assert "sonet" not in got.hint and "does-not-exist" not in got.hint  # nothing echoed


@pytest.mark.parametrize("name", sorted(STREAM_ERRORS))
def test_corpus_stream_errors_class_through_their_problem(name: str) -> None:
    case = next(c for c in CASES if c.name == name)
    parsed = tooltap.core.parse_response(case.body, case.dialect)
    classes = [classify_problem(p) for p in parsed.problems if p.kind == "error_event"]
    assert classes, parsed.problems
    assert {c.error_type for c in classes if c is not None} == {STREAM_ERRORS[name]}


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.meta["kind"] == "truncated"], ids=lambda c: c.name
)
def test_corpus_truncated_streams_are_truncated_stream(case: Case) -> None:
    parsed = tooltap.core.parse_response(case.body, case.dialect)
    classes = [classify_problem(p) for p in parsed.problems]
    truncated = [c for c in classes if c is not None and c.error_type == "truncated_stream"]
    assert truncated and all(c.retryable for c in truncated)


# --- statuses and bodies --------------------------------------------------------------

ANTHROPIC_OVERLOADED = {
    "type": "error",
    "error": {"type": "overloaded_error", "message": "Overloaded"},
}
GOOGLE_UNAVAILABLE = {
    "error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}
}


@pytest.mark.parametrize(
    ("status", "body", "expected", "retryable"),
    [
        (401, None, "auth_error", False),
        (403, None, "permission_denied", False),
        (404, None, "not_found", False),
        (400, None, "bad_request", False),
        (422, b'{"detail": "bad"}', "bad_request", False),
        (408, None, "timeout", True),
        (500, None, "server_error", True),
        (502, b"<html>Bad Gateway</html>", "server_error", True),
        (503, None, "server_error", True),
        (529, None, "overloaded", True),
        (529, ANTHROPIC_OVERLOADED, "overloaded", True),
        (503, GOOGLE_UNAVAILABLE, "overloaded", True),
        (200, ANTHROPIC_OVERLOADED, "overloaded", True),  # an SSE error event, raised by the SDK
        (
            None,
            {"error": {"type": "rate_limit_error", "message": "slow down"}},
            "rate_limited",
            True,
        ),
        (429, None, "rate_limited", True),
        (418, None, "_OTHER", False),
        (None, None, "_OTHER", False),
        (
            400,
            {
                "error": {
                    "code": 400,
                    "status": "INVALID_ARGUMENT",
                    "message": "API key not valid",
                    "details": [
                        {
                            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                            "reason": "API_KEY_INVALID",
                        }
                    ],
                }
            },
            "auth_error",
            False,
        ),
    ],
)
def test_status_and_body_table(
    status: int | None, body: Any, expected: str, retryable: bool
) -> None:
    got = classify_error(status, {}, body)
    assert (got.error_type, got.retryable, got.status) == (expected, retryable, status)


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (
            429,
            {
                "error": {
                    "message": "You exceeded your current quota, please check your plan "
                    "and billing details.",
                    "type": "insufficient_quota",
                    "code": "insufficient_quota",
                }
            },
        ),
        (429, {"error": {"message": "Insufficient balance", "type": "rate_limit_error"}}),
        (
            400,
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "Your credit balance is too low to access the Anthropic API.",
                },
            },
        ),
        (402, {"error": {"message": "Insufficient Balance", "type": "unknown_error"}}),
        (402, None),
        (
            400,
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "You have reached your specified API usage limits.",
                },
            },
        ),
        (429, {"error": {"code": 429, "message": "Key spending limit reached"}}),
    ],
)
def test_exhausted_balance_is_not_retryable(status: int, body: Any) -> None:
    got = classify_error(status, {"retry-after": "5"}, body)
    assert got.error_type == "insufficient_balance"
    assert got.retryable is False
    assert got.hint is not None and "retry" in got.hint


def test_google_resource_exhausted_is_a_rate_limit_with_its_retry_delay() -> None:
    # Google says "quota" for per-minute limits too: that is a rate limit, not a balance.
    body = {
        "error": {
            "code": 429,
            "message": "You exceeded your current quota, please check your plan and billing "
            "details. Quota exceeded for metric: generate_content_free_tier_requests",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"},
            ],
        }
    }
    got = classify_error(429, {}, json.dumps(body))
    assert (got.error_type, got.retryable, got.retry_after) == ("rate_limited", True, 37.0)
    assert classify_error(429, {"Retry-After": "3"}, body).retry_after == 3.0  # header wins
    assert classify_error(None, {}, [body]).error_type == "rate_limited"  # streamed array


# --- Retry-After ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"RETRY-AFTER": "-3"}, 0.0),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"Retry-After-Ms": "junk", "retry-after": "9"}, 9.0),
        (
            {
                "Retry-After": "Wed, 21 Oct 2015 07:28:30 GMT",
                "Date": "Wed, 21 Oct 2015 07:28:00 GMT",
            },
            30.0,
        ),
        ({"retry-after": "not a date"}, None),
        ({}, None),
    ],
)
def test_retry_after_headers(headers: dict[str, str], expected: float | None) -> None:
    assert classify_error(429, headers, None).retry_after == expected


def test_retry_after_http_date_without_date_header_uses_the_clock() -> None:
    when = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 120))
    got = classify_error(503, {"Retry-After": when}, None).retry_after
    assert got is not None and 100 < got <= 120


def test_httpx_headers_are_accepted() -> None:
    headers = httpx.Headers([("Retry-After", "4")])
    assert classify_error(429, headers, None).retry_after == 4.0


# --- URL hints for 404 ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "hinted"),
    [
        ("https://api.example.com/v1/v1/chat/completions", "repeats"),
        ("http://127.0.0.1:8080/chat/completions", "no version"),
        ("https://api.anthropic.com/messages", "no version"),
        ("https://api.openai.com/v1/chat/completions", None),
        ("https://generativelanguage.googleapis.com/v1beta/models/x:generateContent?key=K", None),
        (
            "https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-02-01",
            None,
        ),
    ],
)
def test_not_found_url_hints(url: str, hinted: str | None) -> None:
    got = classify_error(404, {}, None, url=url)
    assert got.error_type == "not_found"
    if hinted is None:
        assert got.hint is None
    else:
        assert got.hint is not None and hinted in got.hint
        assert "example.com" not in got.hint and "127.0.0.1" not in got.hint


# --- exceptions by class name -------------------------------------------------------


def _named(name: str, base: type[BaseException] = Exception) -> BaseException:
    return type(name, (base,), {})("boom")


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (TimeoutError(), "timeout"),
        (ConnectionResetError(), "connection_error"),
        (BrokenPipeError(), "connection_error"),
        (_named("ReadTimeout"), "timeout"),
        (_named("ConnectError"), "connection_error"),
        (_named("RemoteProtocolError"), "connection_error"),
        (httpx2.ConnectTimeout("t"), "timeout"),
        (httpx2.PoolTimeout("t"), "timeout"),
        (httpx2.ReadError("r"), "connection_error"),
        (httpx2.RemoteProtocolError("r"), "connection_error"),
        (httpx.ConnectError("c"), "connection_error"),
        (aiohttp.ServerDisconnectedError(), "connection_error"),
        (aiohttp.ServerTimeoutError(), "timeout"),
        (aiohttp.ClientPayloadError("cut"), "connection_error"),
        (ValueError("x"), "_OTHER"),
        (KeyboardInterrupt(), "_OTHER"),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else str(v),
)
def test_exceptions_by_class_name(exc: BaseException, expected: str) -> None:
    got = classify_error(None, {}, None, exc)
    assert got.error_type == expected
    assert got.retryable is (expected in ("timeout", "connection_error"))


def test_sdk_like_exception_attributes_are_used() -> None:
    class APIStatusError(Exception):
        status_code = 429
        body: ClassVar[dict[str, str]] = {
            "message": "Rate limit reached",
            "type": "requests",
            "code": "rate_limit_exceeded",
        }

        class response:
            headers: ClassVar[dict[str, str]] = {"retry-after-ms": "1200"}

    got = classify_error(None, {}, None, APIStatusError())
    assert (got.error_type, got.status, got.retry_after) == ("rate_limited", 429, 1.2)


def test_classification_never_raises() -> None:
    class Hostile(Exception):
        @property
        def status_code(self) -> int:
            raise RuntimeError("nope")

    got = classify_error(None, {}, None, Hostile())
    assert isinstance(got, ErrorClass) and got.error_type == "_OTHER"
    weird: Any = {b"Retry-After": b"2"}
    assert classify_error(429, weird, b"\xff\xfe{").retry_after == 2.0
    assert classify_error(500, {}, {"error": ["not", "a", "map"]}).error_type == "server_error"


def test_no_secret_is_echoed() -> None:
    body = {
        "error": {
            "message": "Incorrect API key provided: sk-proj-SECRET123.",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }
    }
    got = classify_error(
        401, {"www-authenticate": "Bearer"}, body, url="https://h/v1/x?key=SECRET123"
    )
    assert got.error_type == "auth_error"
    assert "SECRET123" not in repr(got)


# --- classify_problem ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("problem", "expected"),
    [
        (Problem("truncated_stream"), "truncated_stream"),
        (
            Problem("error_event", detail='{"type":"overloaded_error","message":"Overloaded"}'),
            "overloaded",
        ),
        (Problem("error_event", detail="rate_limit_error: too many tokens"), "rate_limited"),
        (Problem("error_event", detail="code=RESOURCE_EXHAUSTED"), "rate_limited"),
        (Problem("error_event", received='{"error":{"type":"server_error"}}'), "server_error"),
        (Problem("error_event", detail="Insufficient balance"), "insufficient_balance"),
        (
            Problem("error_event", detail="invalid_request_error/tool_use_failed"),
            "stream_error_event",
        ),
        (Problem("error_event", detail="the service is unavailable"), "stream_error_event"),
        (Problem("error_event"), "stream_error_event"),
    ],
)
def test_classify_problem(problem: Problem, expected: str) -> None:
    got = classify_problem(problem)
    assert got is not None and got.error_type == expected
    assert got.retryable is (expected not in ("stream_error_event", "insufficient_balance"))


@pytest.mark.parametrize("kind", ["truncated_json", "schema_violation", "undeclared_tool"])
def test_classify_problem_ignores_non_failures(kind: str) -> None:
    assert classify_problem(Problem(kind)) is None


# --- real SDK clients over a loopback socket ----------------------------------------


class _Canned:
    status = 200
    headers: ClassVar[dict[str, str]] = {}
    body = b""
    delay = 0.0


@pytest.fixture
def server() -> Iterator[tuple[str, type[_Canned]]]:
    canned = type("Canned", (_Canned,), {"headers": {}})

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            time.sleep(canned.delay)
            try:
                self.send_response(canned.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(canned.body)))
                for key, value in canned.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(canned.body)
            except ConnectionError:  # the client timed out and left
                pass

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.block_on_close = False
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", canned
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def _raised(fn: Any) -> BaseException:
    with pytest.raises(Exception) as info:
        fn()
    return info.value


def test_openai_rate_limit_error(server: tuple[str, type[_Canned]]) -> None:
    url, canned = server
    canned.status, canned.headers = 429, {"retry-after-ms": "800"}
    canned.body = (
        b'{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}'
    )
    client = openai.OpenAI(api_key="k", base_url=f"{url}/v1", max_retries=0)
    exc = _raised(lambda: client.chat.completions.create(model="m", messages=[]))
    assert isinstance(exc, openai.RateLimitError)
    got = classify_error(None, {}, None, exc)
    assert (got.error_type, got.status, got.retry_after, got.retryable) == (
        "rate_limited",
        429,
        0.8,
        True,
    )


def test_openai_insufficient_quota(server: tuple[str, type[_Canned]]) -> None:
    url, canned = server
    canned.status = 429
    canned.body = (
        b'{"error":{"message":"You exceeded your current quota","type":"insufficient_quota",'
        b'"code":"insufficient_quota"}}'
    )
    client = openai.OpenAI(api_key="k", base_url=f"{url}/v1", max_retries=0)
    exc = _raised(lambda: client.responses.create(model="m", input="hi"))
    assert classify_error(None, {}, None, exc).error_type == "insufficient_balance"


def test_anthropic_overloaded(server: tuple[str, type[_Canned]]) -> None:
    url, canned = server
    canned.status, canned.body = 529, json.dumps(ANTHROPIC_OVERLOADED).encode()
    client = anthropic.Anthropic(api_key="k", base_url=url, max_retries=0)
    exc = _raised(lambda: client.messages.create(model="m", max_tokens=5, messages=[]))
    got = classify_error(None, {}, None, exc)
    assert (got.error_type, got.status, got.retryable) == ("overloaded", 529, True)


def test_google_unavailable_and_not_found(server: tuple[str, type[_Canned]]) -> None:
    url, canned = server
    client = genai.Client(api_key="k", http_options=genai_types.HttpOptions(base_url=url))
    canned.status, canned.body = 503, json.dumps(GOOGLE_UNAVAILABLE).encode()
    exc = _raised(lambda: client.models.generate_content(model="gemini-x", contents="hi"))
    assert isinstance(exc, genai_errors.ServerError)
    got = classify_error(None, {}, None, exc)
    assert (got.error_type, got.status) == ("overloaded", 503)
    case = next(c for c in CASES if c.name == "google/error_404_vertex_missing_model")
    canned.status, canned.body = 404, case.body
    exc = _raised(lambda: client.models.generate_content(model="gemini-x", contents="hi"))
    assert classify_error(None, {}, None, exc).error_type == "not_found"


def test_openai_timeout(server: tuple[str, type[_Canned]]) -> None:
    url, canned = server
    canned.delay = 1.0
    client = openai.OpenAI(api_key="k", base_url=f"{url}/v1", max_retries=0, timeout=0.2)
    exc = _raised(lambda: client.chat.completions.create(model="m", messages=[]))
    assert isinstance(exc, openai.APITimeoutError)
    assert classify_error(None, {}, None, exc).error_type == "timeout"


def test_connection_refused() -> None:
    with socket.socket() as sock:  # a port nobody listens on: bind, note it, close
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = openai.OpenAI(api_key="k", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
    exc = _raised(lambda: client.chat.completions.create(model="m", messages=[]))
    assert isinstance(exc, openai.APIConnectionError)
    assert classify_error(None, {}, None, exc).error_type == "connection_error"


# --- error events inside 200 streams, through the dialect reducers -----------------------

STREAM_ERROR_EVENTS = [
    (
        "anthropic.messages",
        (
            b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":'
            b'"message","role":"assistant","model":"c","content":[],"usage":{"input_tokens":1,'
            b'"output_tokens":1}}}\n\nevent: error\ndata: {"type":"error","error":{"type":'
            b'"overloaded_error","message":"Overloaded"}}\n\n'
        ),
        "overloaded",
    ),
    (
        "openai.responses",
        (
            b'event: error\ndata: {"type":"error","code":"rate_limit_exceeded","message":'
            b'"Rate limit reached","param":null,"sequence_number":1}\n\n'
        ),
        "rate_limited",
    ),
    (
        "openai.responses",
        (
            b'event: response.failed\ndata: {"type":"response.failed","response":{"id":"r",'
            b'"status":"failed","error":{"code":"server_error","message":"boom"},"output":[]}}\n\n'
        ),
        "server_error",
    ),
    (
        "openai.chat",
        b'data: {"error":{"message":"The server had an error","type":"server_error"}}\n\n',
        "server_error",
    ),
    (
        "google.genai",
        (
            b'data: {"error":{"code":503,"message":"The model is overloaded.","status":'
            b'"UNAVAILABLE"}}\r\n\r\n'
        ),
        "overloaded",
    ),
]


@pytest.mark.parametrize(("dialect", "body", "expected"), STREAM_ERROR_EVENTS)
def test_stream_error_events_class_as_the_provider_says(
    dialect: str, body: bytes, expected: str
) -> None:
    parsed = tooltap.core.parse_response(body, dialect)
    classes = [classify_problem(p) for p in parsed.problems if p.kind == "error_event"]
    assert [c.error_type for c in classes if c is not None] == [expected]
    assert all(c is not None and c.retryable for c in classes)
