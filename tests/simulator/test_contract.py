"""Turn-2 checks (400s in each provider's format), tool_choice, plain text, recording."""

from __future__ import annotations

import anthropic
import httpx2
import openai
import pytest
from google.genai import errors as gerrors
from google.genai import types as gtypes

from tests.simulator.drivers import (
    DRIVERS,
    AnthropicDriver,
    ChatDriver,
    GoogleDriver,
    ResponsesDriver,
)
from tooltap.simulator import Fault, Simulator

BAD_REQUEST = {
    "openai.chat": openai.BadRequestError,
    "openai.responses": openai.BadRequestError,
    "anthropic.messages": anthropic.BadRequestError,
    "google.genai": gerrors.ClientError,
}


def _first_turn(sim: Simulator, dialect: str):  # type: ignore[no-untyped-def]
    driver = DRIVERS[dialect](sim, stream=False)
    return driver, driver.turn()


@pytest.mark.parametrize("dialect", list(DRIVERS))
@pytest.mark.parametrize("mistake", ["unknown", "missing", "duplicate"])
def test_wrong_result_ids_get_a_400(sim: Simulator, dialect: str, mistake: str) -> None:
    driver, first = _first_turn(sim, dialect)
    a, b = first.calls
    results = {
        "unknown": [(a.call_id, a.name, "170 cm"), ("call_bogus123", b.name, "70 kg")],
        "missing": [(a.call_id, a.name, "170 cm")],
        "duplicate": [(a.call_id, a.name, "170 cm"), (a.call_id, a.name, "170 cm")],
    }[mistake]
    driver.answer(first, results)
    with pytest.raises(BAD_REQUEST[dialect]) as info:
        driver.turn()
    wrong = {"unknown": "call_bogus123", "missing": b.call_id, "duplicate": a.call_id}[mistake]
    assert wrong is not None and wrong in str(info.value)
    assert getattr(info.value, "status_code", getattr(info.value, "code", None)) == 400


def test_openai_400_body_has_openai_shape(sim: Simulator) -> None:
    driver, first = _first_turn(sim, "openai.chat")
    driver.answer(first, [(first.calls[0].call_id, "lookup_demo_value", "170 cm")])
    with pytest.raises(openai.BadRequestError) as info:
        driver.turn()
    assert info.value.type == "invalid_request_error"
    assert info.value.response.json()["error"]["param"] == "messages"


def test_anthropic_400_body_has_anthropic_shape(sim: Simulator) -> None:
    driver, first = _first_turn(sim, "anthropic.messages")
    driver.answer(first, [])
    driver.history[-1]["content"] = [
        {"type": "tool_result", "tool_use_id": "toolu_01nope", "content": "x"}
    ]
    with pytest.raises(anthropic.BadRequestError) as info:
        driver.turn()
    body = info.value.response.json()
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert info.value.response.headers["request-id"].startswith("req_")


def test_google_without_ids_matches_by_name_and_order(sim: Simulator) -> None:
    sim.inject(Fault("no_ids"), dialect="google.genai")
    driver = GoogleDriver(sim, stream=True)
    first = driver.turn()
    assert [c.call_id for c in first.calls] == [None, None]
    assert [c.args for c in first.calls] == [{"key": "height"}, {"key": "weight"}]
    driver.answer(
        first, [(None, c.name, v) for c, v in zip(first.calls, ["170 cm", "70 kg"], strict=True)]
    )
    assert driver.turn().text == "You are 170 cm tall and weigh 70 kg."


def test_google_without_ids_wrong_count_is_rejected(sim: Simulator) -> None:
    sim.inject(Fault("no_ids"))
    driver = GoogleDriver(sim, stream=False)
    first = driver.turn()
    driver.answer(first, [(None, "lookup_demo_value", "170 cm")])
    with pytest.raises(gerrors.ClientError) as info:
        driver.turn()
    assert info.value.code == 400 and info.value.status == "INVALID_ARGUMENT"
    assert "number of function response parts" in str(info.value)


def test_no_tools_means_plain_text(sim: Simulator) -> None:
    done = (
        ChatDriver(sim, stream=False)
        .client(True)
        .chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": "hi"}])
    )
    assert done.choices[0].message.tool_calls is None
    assert done.choices[0].finish_reason == "stop"
    assert done.choices[0].message.content
    assert done.model == "gpt-x"


@pytest.mark.parametrize(
    ("driver_type", "choice"),
    [
        (ChatDriver, {"type": "function", "function": {"name": "other_tool"}}),
        (ResponsesDriver, {"type": "function", "name": "other_tool"}),
        (AnthropicDriver, {"type": "tool", "name": "other_tool"}),
    ],
)
def test_forced_tool_choice_is_obeyed_unless_ignored(
    sim: Simulator, driver_type: type, choice: dict[str, object]
) -> None:
    outcome = driver_type(sim, stream=True, tool_choice=choice).turn()
    assert [(c.name, c.args) for c in outcome.calls] == [("other_tool", {})]
    sim.inject(Fault("ignore_tool_choice"))
    ignored = driver_type(sim, stream=True, tool_choice=choice).turn()
    assert ignored.calls == [] and ignored.text


def test_google_forced_mode_none_gives_text(sim: Simulator) -> None:
    config = gtypes.ToolConfig(
        function_calling_config=gtypes.FunctionCallingConfig(
            mode=gtypes.FunctionCallingConfigMode.NONE
        )
    )
    outcome = GoogleDriver(sim, stream=False, tool_config=config).turn()
    assert outcome.calls == [] and outcome.text


def test_custom_calls_and_final_text() -> None:
    calls = [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "Europe/Paris"})]
    with Simulator(calls=calls, final_text="Done.", seed=7) as sim:
        driver = AnthropicDriver(sim, stream=True)
        first = driver.turn()
        assert [(c.name, c.args) for c in first.calls] == calls
        driver.answer(first, [(c.call_id, c.name, "ok") for c in first.calls])
        assert driver.turn().text == "Done."


def test_requests_are_recorded_and_reset_forgets_everything(sim: Simulator) -> None:
    driver = GoogleDriver(sim, stream=True)
    first = driver.turn()
    (request,) = sim.requests
    assert request.dialect == "google.genai" and request.method == "POST"
    assert request.path.endswith("/models/gemini-2.5-flash:streamGenerateContent")
    assert request.query == "alt=sse"
    assert request.headers["x-goog-api-key"] == "test-key"
    assert request.json["contents"][0]["parts"][0]["text"] == "How tall am I?"
    assert request.fault is None
    sim.inject(Fault("rate_limit"))
    sim.reset()
    assert sim.requests == []
    driver.answer(first, [(c.call_id, c.name, "x") for c in first.calls])
    with pytest.raises(gerrors.ClientError) as info:  # the issued ids were forgotten
        driver.turn()
    assert info.value.code == 400


def test_vertex_path_and_json_array_stream(sim: Simulator, http: httpx2.Client) -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": [{"functionDeclarations": [{"name": "lookup_demo_value"}]}],
    }
    base = sim.url + "/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro"
    done = http.post(base + ":generateContent", json=body).json()
    parts = done["candidates"][0]["content"]["parts"]
    assert [p["functionCall"]["args"] for p in parts] == [{"key": "height"}, {"key": "weight"}]
    assert done["modelVersion"] == "gemini-2.5-pro"
    array = http.post(base + ":streamGenerateContent", json=body).json()
    assert [len(c["candidates"][0]["content"]["parts"]) for c in array] == [1, 1]
    assert array[-1]["candidates"][0]["finishReason"] == "STOP"


def test_unknown_path_is_404_and_bad_json_is_400(sim: Simulator, http: httpx2.Client) -> None:
    assert http.post(sim.url + "/v1/embeddings", json={}).status_code == 404
    response = http.post(sim.url + "/v1/messages", content=b"{not json")
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"


def test_fault_validation() -> None:
    with pytest.raises(ValueError, match="unknown fault kind"):
        Fault("meteor_strike")
    with pytest.raises(ValueError, match="needs at"):
        Fault("truncate_bytes")
    with pytest.raises(ValueError, match="no parameter"):
        Fault("no_ids", at=3)
    assert str(Fault("rate_limit", retry_after=0.1)) == "rate_limit;retry_after=0.1"
