"""The pure helpers the SDK wrappers share: request attributes, server, call description."""

from __future__ import annotations

import pytest

from tooltap._patch.sdk_request import describe_body, request_params, server_of


@pytest.mark.parametrize(
    ("dialect", "body", "expected"),
    [
        (
            "openai.chat",
            {"max_completion_tokens": 10, "max_tokens": 99, "temperature": 0, "top_p": 0.5,
             "stop": "END", "seed": 7},
            {"gen_ai.request.max_tokens": 10, "gen_ai.request.temperature": 0,
             "gen_ai.request.top_p": 0.5, "gen_ai.request.stop_sequences": ["END"],
             "gen_ai.request.seed": 7},
        ),
        ("openai.chat", {"max_tokens": 99, "stop": ["a", "b"]},
         {"gen_ai.request.max_tokens": 99, "gen_ai.request.stop_sequences": ["a", "b"]}),
        ("openai.responses", {"max_output_tokens": 5, "temperature": 1.5},
         {"gen_ai.request.max_tokens": 5, "gen_ai.request.temperature": 1.5}),
        ("anthropic.messages", {"max_tokens": 64, "top_k": 3, "stop_sequences": ["\n\nHuman:"]},
         {"gen_ai.request.max_tokens": 64, "gen_ai.request.top_k": 3,
          "gen_ai.request.stop_sequences": ["\n\nHuman:"]}),
        (
            "google.genai",
            {"generationConfig": {"maxOutputTokens": 8, "topK": 2, "seed": 1,
                                  "stopSequences": ["x"]}},
            {"gen_ai.request.max_tokens": 8, "gen_ai.request.top_k": 2, "gen_ai.request.seed": 1,
             "gen_ai.request.stop_sequences": ["x"]},
        ),
        # Wrong types set nothing: a bool is no number, a string no temperature, [] no stops.
        ("openai.chat", {"max_tokens": True, "temperature": "hot", "stop": [], "seed": None}, {}),
        ("google.genai", {"generationConfig": "nope"}, {}),
        ("openai.chat", ["not", "a", "body"], {}),
    ],
)  # fmt: skip
def test_request_params(dialect: str, body: object, expected: dict[str, object]) -> None:
    assert request_params(dialect, body) == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://api.openai.com/v1", ("api.openai.com", 443)),
        ("http://127.0.0.1:8080", ("127.0.0.1", 8080)),
        ("http://proxy.internal/anthropic/", ("proxy.internal", 80)),
        ("not a url", (None, None)),
    ],
)
def test_server_of(url: str, expected: tuple[str | None, int | None]) -> None:
    assert server_of(url) == expected


def test_describe_body_reads_only_llm_posts() -> None:
    call = describe_body(
        "post", "/chat/completions", {"model": "gpt-x", "stream": True}, "https://gw.example/v1"
    )
    assert call is not None
    assert (call.dialect, call.request_model, call.stream) == ("openai.chat", "gpt-x", True)
    assert (call.server_address, call.server_port) == ("gw.example", 443)
    assert describe_body("get", "/chat/completions", {}, "https://x") is None
    assert describe_body("post", "/files", {}, "https://x") is None
    odd = describe_body("post", "/v1/messages", None, "https://x")
    assert odd is not None and (odd.request_model, odd.stream, odd.params) == (None, False, {})


def test_an_ended_operation_holds_no_request_body(rec: object, sim: object) -> None:
    """The SDK's body object (the whole history) is freed when the SDK drops it: an ended
    operation, which lives on in a reference cycle until a collection, does not keep it."""
    import gc

    import openai

    from tests.sdk.drivers import USER
    from tooltap._telemetry.operation import Operation

    client = openai.OpenAI(base_url=sim.openai_base_url, api_key="sk-test")  # type: ignore[attr-defined]
    gc.collect()
    gc.disable()
    try:
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": USER}]
        )
        ops = [o for o in gc.get_objects() if isinstance(o, Operation)]
        assert ops and all(o.ended for o in ops)
        assert [o.request_body for o in ops] == [None] * len(ops)
    finally:
        gc.enable()
