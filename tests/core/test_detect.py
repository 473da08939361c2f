"""Recognising LLM traffic by method and path."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tooltap._core.detect import detect_dialect, detect_retrieve, plausible_request
from tooltap._core.dialects.google_request import streaming as google_streaming


def reference(method: str, url: str) -> str | None:
    """The definition: the path without query, fragment and trailing slashes, by suffix."""
    if method.upper() != "POST":
        return None
    path = url.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    if path.endswith("/chat/completions"):
        return "openai.chat"
    if path.endswith("/responses"):
        return "openai.responses"
    if path.endswith("/messages"):
        return None if "/threads/" in path else "anthropic.messages"
    if path.endswith((":generateContent", ":streamGenerateContent")):
        return "google.genai"
    if re.search(r"/model/[^/]+/converse(-stream)?$", path):
        return "bedrock.converse"
    if re.search(r"/model/.+/invoke(-with-response-stream)?$", path):
        return "anthropic.messages"  # Claude on Bedrock, if the body says so
    vertex = re.search(
        r"/publishers/anthropic/models/([^/:]+):(rawPredict|streamRawPredict)$", path
    )
    if vertex and vertex.group(1) != "count-tokens":
        return "anthropic.messages"  # Claude on Vertex AI
    return None


@pytest.mark.parametrize(
    ("method", "url", "dialect"),
    [
        ("POST", "/v1/chat/completions", "openai.chat"),
        ("post", "https://gw.example/openai/v1/chat/completions/", "openai.chat"),
        ("POST", "/v1/responses?stream=true", "openai.responses"),
        ("POST", "/v1/responses/resp_1/cancel", None),
        ("POST", "/v1/messages?beta=true", "anthropic.messages"),
        ("POST", "/v1/threads/t_1/messages", None),  # OpenAI Assistants, not Anthropic
        ("POST", "/v1beta/models/gemini-x:streamGenerateContent?alt=sse", "google.genai"),
        ("POST", "/v1/models/gemini-x:generateContent#frag", "google.genai"),
        ("POST", "/model/us.amazon.nova-pro-v1%3A0/converse", "bedrock.converse"),
        ("POST", "/model/m/converse-stream", "bedrock.converse"),
        ("POST", "/v1/converse", None),
        ("POST", "/model/anthropic.claude-3-5-sonnet-20240620-v1:0/invoke", "anthropic.messages"),
        ("POST", "/model/us.anthropic.claude-x/invoke-with-response-stream", "anthropic.messages"),
        (
            "POST",
            "/model/arn:aws:bedrock:r:1:application-inference-profile/p/invoke",
            "anthropic.messages",
        ),
        ("POST", "/model/meta.llama3-70b-instruct-v1:0/invoke", "anthropic.messages"),  # (body)
        ("POST", "/v1/invoke", None),
        (
            "POST",
            "/v1/projects/p/locations/r/publishers/anthropic/models/c@1:streamRawPredict",
            "anthropic.messages",
        ),
        (
            "POST",
            "/v1/projects/p/locations/r/publishers/anthropic/models/count-tokens:rawPredict",
            None,
        ),
        ("POST", "/v1/projects/p/locations/r/publishers/meta/models/llama:rawPredict", None),
        ("GET", "/v1/chat/completions", None),
        ("POST", "/v1/search", None),
        ("POST", "/", None),
        ("POST", "", None),
    ],
)
def test_known_paths(method: str, url: str, dialect: str | None) -> None:
    assert detect_dialect(method, url) == dialect == reference(method, url)


PIECES = ["/v1", "/chat", "/completions", "/responses", "/messages", "/threads", ":generateContent",
          ":streamGenerateContent", "/", "?", "#", "a=b", "x", "/model", "/anthropic.claude",
          "/converse", "/converse-stream", "/invoke", "/invoke-with-response-stream",
          "/publishers/anthropic/models/c", "/count-tokens", ":rawPredict",
          ":streamRawPredict"]  # fmt: skip


@given(st.sampled_from(["POST", "post", "Post", "GET", "PUT"]), st.lists(st.sampled_from(PIECES)))
def test_same_answers_as_the_definition(method: str, pieces: list[str]) -> None:
    url = "".join(pieces)
    assert detect_dialect(method, url) == reference(method, url)


CLAUDE = b'{"anthropic_version": "bedrock-2023-05-31", "max_tokens": 9, "messages": []}'
MISTRAL = b'{"messages": [], "max_tokens": 9}'


@pytest.mark.parametrize(
    ("path", "body", "plausible"),
    [
        ("/model/arn:aws:bedrock:r:1:application-inference-profile/p/invoke", CLAUDE, True),
        ("/model/m/invoke-with-response-stream", CLAUDE, True),
        ("/model/mistral.mistral-large-2407-v1:0/invoke", MISTRAL, False),  # no version
        ("/model/anthropic.claude-x/invoke", MISTRAL, False),  # the body decides
        ("/model/meta.llama3/invoke", b'{"prompt": "hi", "max_gen_len": 9}', False),
        ("/v1/messages", MISTRAL, True),  # Anthropic's own API needs no version in the body
    ],
)
def test_a_bedrock_invoke_body_is_claudes_when_it_names_anthropic_version(
    path: str, body: bytes, plausible: bool
) -> None:
    assert detect_dialect("POST", path) == "anthropic.messages"
    assert plausible_request("anthropic.messages", body, path) is plausible


def test_google_streaming() -> None:
    assert google_streaming("/v1beta/models/g:streamGenerateContent?alt=sse")
    assert not google_streaming("/v1beta/models/g:generateContent?x=:streamGenerateContent")


@pytest.mark.parametrize(
    ("method", "url", "dialect"),
    [
        ("GET", "/v1/responses/resp_68ab12", "openai.responses"),
        (
            "get",
            "https://gw.example/v1/responses/resp_1/?stream=true&starting_after=4",
            "openai.responses",
        ),
        ("GET", "/v1/responses/resp_1/input_items", None),
        ("GET", "/api/responses/42", None),  # another API's responses: not OpenAI's ids
        ("GET", "/v1/responses", None),
        ("POST", "/v1/responses/resp_1", None),
        ("DELETE", "/v1/responses/resp_1", None),
    ],
)
def test_reading_a_stored_response_back(method: str, url: str, dialect: str | None) -> None:
    assert detect_retrieve(method, url) == dialect
    assert detect_dialect(method, url) is None
