"""Which POSTs the taps observe: a plausible body of the dialect, and the hosts/exclude options."""

from __future__ import annotations

import time

import pytest

from tests.telemetry.support import LIBS, Recorder, first_body, post, url
from tooltap._core.detect import plausible_request
from tooltap._telemetry.config import Config, ConfigError, strict_mode
from tooltap.simulator import Simulator


@pytest.mark.parametrize("lib", sorted(LIBS))
def test_a_chat_app_post_to_a_messages_path_is_not_llm_traffic(
    recorder: Recorder, sim: Simulator, lib: str
) -> None:
    recorder.instrument()
    target = sim.anthropic_base_url + "/api/rooms/42/messages"
    post(lib, target, {"text": "lunch at noon?", "author": "ana"}, stream=False)
    assert recorder.inference() == []
    assert recorder.points("gen_ai.client.operation.duration") == []
    post(lib, url(sim, "anthropic.messages", False), first_body("anthropic.messages", False),
         stream=False)  # fmt: skip
    assert len(recorder.inference()) == 1  # the same path suffix with a Messages body is


@pytest.mark.parametrize(
    ("options", "observed"),
    [
        ({}, True),
        ({"hosts": ["127.0.0.1"]}, True),
        ({"hosts": "api.openai.com"}, False),
        ({"exclude": ["127.0.0.*"]}, False),
        ({"exclude": "127.0.0.1/v1/*"}, False),
        ({"exclude": "127.0.0.1/other/*"}, True),
    ],
)
def test_hosts_and_exclude(
    recorder: Recorder, sim: Simulator, options: dict[str, object], observed: bool
) -> None:
    recorder.instrument(**options)
    post("httpx2", url(sim, "openai.chat", False), first_body("openai.chat", False), stream=False)
    assert len(recorder.inference()) == int(observed)


def test_config_patterns() -> None:
    config = Config.from_options(
        {"hosts": ["*.openai.azure.com", "GW.example"], "exclude": "gw.example/health*"}
    )
    assert config.observes("eu.openai.azure.com", "/openai/deployments/x/chat/completions")
    assert config.observes("gw.example", "/v1/messages")
    assert not config.observes("gw.example", "/health/messages")
    assert not config.observes("api.openai.com", "/v1/chat/completions")
    with pytest.raises(ConfigError):  # strict in the tests; otherwise warned, every host
        Config.from_options({"hosts": 3})
    with strict_mode(False), pytest.warns(UserWarning, match="hosts must be"):
        assert Config.from_options({"hosts": 3}).hosts == ()


@pytest.mark.parametrize(
    ("dialect", "body", "plausible"),
    [
        ("openai.chat", b'{"messages": [], "model": "gpt-4o"}', True),
        ("openai.chat", b'{"text": "hi"}', False),
        ("openai.responses", b'{"model":"gpt-5","input":"hi"}', True),
        ("openai.responses", b'{"query":"cats"}', False),
        ("anthropic.messages", b'{"model":"claude","max_tokens":9,"messages":[]}', True),
        ("anthropic.messages", b'{"messages":[{"text":"hi"}]}', False),
        ("google.genai", b'{"contents":[]}', True),
        ("google.genai", b"", False),
    ],
)
def test_plausible_request(dialect: str, body: bytes, plausible: bool) -> None:
    assert plausible_request(dialect, body) is plausible


def test_plausible_request_is_cheap_on_big_bodies() -> None:
    body = b'{"text": "' + b"x" * (8 * 1024 * 1024) + b'"}'  # no key: the whole body searched
    start = time.perf_counter()
    for _ in range(5):
        assert not plausible_request("anthropic.messages", body)
    assert (time.perf_counter() - start) / 5 < 0.05  # a full JSON parse takes several times this
