"""The demo's scripted mix: healthy turns for every SDK, then the faults users meet."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DIALECT_ORDER = ("openai.chat", "openai.responses", "anthropic.messages", "google.genai")


@dataclass(frozen=True)
class Scenario:
    """One conversation the demo runs: which agent, how, and what goes wrong.

    ``fault`` is queued in the simulator ``times`` times before the conversation
    starts, so the first request (and its retries, if ``times`` > 1) meet it.
    """

    label: str
    dialect: str
    stream: bool
    sdk: str = ""  # the agent, when not the dialect's own SDK (``anthropic.bedrock``)
    fault: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    times: int = 1
    abandon: bool = False
    duplicate: bool = False
    force_tool: bool = False
    expect: str = "answer"  # what a correct harness ends with: "answer" or "failure"
    ids: str = "unique"  # the simulator's id mode (``tooltap.simulator.ID_MODES``)
    text_results: bool = False  # results sent back as text (smolagents): unanswered
    conversations: int = 1  # run at once, each its own agent


def _healthy() -> list[Scenario]:
    return [
        Scenario(f"{dialect} {'stream' if stream else 'whole'}", dialect, stream)
        for dialect in DIALECT_ORDER
        for stream in (False, True)
    ]


#: One agent each on the SDKs beyond the three: boto3, AnthropicBedrock, cohere, ollama.
MORE_SDKS: tuple[Scenario, ...] = (
    Scenario("bedrock.converse whole (boto3)", "bedrock.converse", False),
    Scenario("bedrock.converse stream (boto3)", "bedrock.converse", True),
    Scenario(
        "anthropic on bedrock stream (AnthropicBedrock, event-stream)",
        "anthropic.messages",
        True,
        sdk="anthropic.bedrock",
    ),
    Scenario("cohere.chat stream (ClientV2)", "cohere.chat", True),
    Scenario("ollama.chat stream (NDJSON, calls without ids)", "ollama.chat", True),
)


SCENARIOS: tuple[Scenario, ...] = (
    *_healthy(),
    *MORE_SDKS,
    Scenario("google.genai stream, calls without ids", "google.genai", True, fault="no_ids"),
    Scenario(
        "openai.chat two conversations at once, both numbering ids call_0, call_1",
        "openai.chat",
        False,
        ids="numbered",
        conversations=2,
    ),
    Scenario(
        "openai.chat stream cut inside arguments",
        "openai.chat",
        True,
        fault="truncate_args",
        expect="failure",
    ),
    Scenario(
        "bedrock.converse stream cut inside arguments (boto3 ends quietly)",
        "bedrock.converse",
        True,
        fault="truncate_args",
        expect="failure",
    ),
    Scenario(
        "anthropic overloaded_error mid-stream",
        "anthropic.messages",
        True,
        fault="error_event",
        expect="failure",
    ),
    Scenario(
        "openai.responses 429, retried after Retry-After",
        "openai.responses",
        False,
        fault="rate_limit",
        params={"retry_after": 0.2},
    ),
    Scenario(
        "google.genai 429 insufficient balance",
        "google.genai",
        False,
        fault="insufficient_balance",
        expect="failure",
    ),
    Scenario(
        "anthropic 529 overloaded, retries exhausted",
        "anthropic.messages",
        False,
        fault="overloaded",
        times=3,
        expect="failure",
    ),
    Scenario("openai.chat invalid JSON arguments", "openai.chat", False, fault="invalid_json_args"),
    Scenario(
        "openai.chat stream behind a buffering proxy (one burst after 2.5 s)",
        "openai.chat",
        True,
        fault="buffered",
        params={"seconds": 2.5},
    ),
    Scenario("anthropic call never answered (orphaned)", "anthropic.messages", False, abandon=True),
    Scenario(
        "openai.chat results sent back as text (unanswered)",
        "openai.chat",
        False,
        text_results=True,
    ),
    Scenario(
        "openai.chat each result sent twice (duplicate)",
        "openai.chat",
        False,
        duplicate=True,
        expect="failure",
    ),
    Scenario(
        "openai.chat forced tool_choice ignored",
        "openai.chat",
        False,
        fault="ignore_tool_choice",
        force_tool=True,
    ),
)
