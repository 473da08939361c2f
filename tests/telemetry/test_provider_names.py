"""``gen_ai.provider.name`` for Google: Gemini API vs Vertex AI, on every span and metric.

google-genai 3.x with an API key posts to ``{base}/v1/models/{m}:generateContent`` (older
versions: ``v1beta``); Vertex uses ``/projects/{p}/locations/{l}/publishers/google/models``
(or, in express mode, ``/publishers/google/models``). The demo showed ``gcp.gen_ai`` on
the tool spans of a Gemini API conversation through the simulator.
"""

from __future__ import annotations

from typing import Any

import pytest
from google import genai
from google.genai import types
from google.oauth2.credentials import Credentials

from tests.telemetry.support import SCHEMA, TOOL, Recorder, attrs
from tooltap._core.dialects import TABLE
from tooltap._telemetry import semconv as sc
from tooltap._telemetry.semconv import operation_name, provider_name
from tooltap.simulator import Simulator

G = "google.genai"


@pytest.mark.parametrize(
    ("host", "path", "expected"),
    [
        ("127.0.0.1", "/v1/models/gemini-2.5-flash:generateContent", "gcp.gemini"),
        ("127.0.0.1", "/v1beta/models/gemini-2.0-flash:streamGenerateContent", "gcp.gemini"),
        ("proxy.local", "/google/v1alpha/tunedModels/mine:generateContent", "gcp.gemini"),
        ("generativelanguage.googleapis.com", "/anything", "gcp.gemini"),
        (
            "127.0.0.1",
            "/v1/projects/p/locations/us-central1/publishers/google/models/g:generateContent",
            "gcp.vertex_ai",
        ),
        ("127.0.0.1", "/v1beta1/publishers/google/models/g:generateContent", "gcp.vertex_ai"),
        ("127.0.0.1", "/v1/projects/p/locations/l/endpoints/e:generateContent", "gcp.vertex_ai"),
        ("us-central1-aiplatform.googleapis.com", "/v1/models/g:generateContent", "gcp.vertex_ai"),
        ("AIPLATFORM.googleapis.com.", None, "gcp.vertex_ai"),
        ("127.0.0.1", "/gemini-2.5-flash:generateContent", "gcp.gen_ai"),
        ("127.0.0.1", "/v1/models", "gcp.gen_ai"),
        (None, None, "gcp.gen_ai"),
    ],
)
def test_google_backend_from_host_and_path(
    host: str | None, path: str | None, expected: str
) -> None:
    assert provider_name(G, host, path) == expected


def test_other_dialects_ignore_host_and_path() -> None:
    assert provider_name("openai.chat", "aiplatform.googleapis.com") == "openai"
    assert provider_name("anthropic.messages", None, "/v1/models/x:y") == "anthropic"


def _client(sim: Simulator, backend: str) -> genai.Client:
    http = types.HttpOptions(
        base_url=sim.google_base_url, retry_options=types.HttpRetryOptions(attempts=1)
    )
    if backend == "gemini":
        return genai.Client(api_key="goog-test", http_options=http)
    if backend == "vertex_express":
        return genai.Client(vertexai=True, api_key="goog-test", http_options=http)
    return genai.Client(  # a ready token: no refresh, no network
        vertexai=True,
        project="p",
        location="us-central1",
        credentials=Credentials(token="t"),
        http_options=http,
    )


@pytest.mark.parametrize(
    ("backend", "expected", "path_part"),
    [
        ("gemini", "gcp.gemini", "/v1/models/gemini-2.5-flash:"),
        ("vertex", "gcp.vertex_ai", "/projects/p/locations/us-central1/"),
        ("vertex_express", "gcp.vertex_ai", "/publishers/google/models/"),
    ],
)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_real_sdk_conversation_names_the_backend_everywhere(
    rec: Recorder, sim: Simulator, backend: str, expected: str, path_part: str, stream: bool
) -> None:
    """Inference spans, execute_tool spans and every metric point carry the same provider."""
    client = _client(sim, backend)
    declaration = types.FunctionDeclaration(name=TOOL, parameters_json_schema=SCHEMA)
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[declaration])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    history: list[Any] = [
        types.Content(role="user", parts=[types.Part(text="How tall am I, what do I weigh?")])
    ]

    def ask() -> types.GenerateContentResponse:
        model = "gemini-2.5-flash"
        if not stream:
            return client.models.generate_content(model=model, contents=history, config=config)
        chunks = list(
            client.models.generate_content_stream(model=model, contents=history, config=config)
        )
        parts = [p for c in chunks for p in (c.candidates[0].content.parts or [])]  # type: ignore[index,union-attr]
        content = types.Content(role="model", parts=parts)
        return types.GenerateContentResponse(candidates=[types.Candidate(content=content)])

    response = ask()
    assert path_part in sim.requests[-1].path  # the form the SDK really sends
    calls = response.function_calls or []
    assert sorted(str((c.args or {})["key"]) for c in calls) == ["height", "weight"]
    history.append(response.candidates[0].content)  # type: ignore[index]
    values = {"height": "170 cm", "weight": "70 kg"}
    history.append(
        types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id=c.id, name=TOOL, response={"result": values[str((c.args or {})["key"])]}
                    )
                )
                for c in calls
            ],
        )
    )
    assert "170" in (ask().text or "")

    assert len(rec.inference()) == 2 and len(rec.tools()) == 2
    for span in rec.spans():
        assert attrs(span)["gen_ai.provider.name"] == expected, span.name
    assert all(attrs(t)["tooltap.result"] == "ok" for t in rec.tools())
    for name in (
        "tooltap.tool_calls",
        "tooltap.tool_results",
        "tooltap.tool_call.duration",
        "gen_ai.client.operation.duration",
        "gen_ai.client.token.usage",
    ):
        points = rec.points(name)
        assert points, name
        assert {a["gen_ai.provider.name"] for a, _ in points} == {expected}, name


def test_each_dialect_names_a_semconv_operation() -> None:
    operations = {d.name: operation_name(d.name) for d in TABLE.values()}
    assert set(operations.values()) <= {sc.OPERATION_CHAT, sc.OPERATION_GENERATE_CONTENT}
    assert operations[G] == sc.OPERATION_GENERATE_CONTENT
