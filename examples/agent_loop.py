"""A complete agent loop with tooltap's harness toolkit (OpenAI Chat Completions).

Talks to tooltap's loopback simulator unless OPENAI_API_KEY is set (then to the real API,
honouring OPENAI_BASE_URL and MODEL). Run: python examples/agent_loop.py "question"."""

from __future__ import annotations

import os
import sys
from contextlib import ExitStack
from typing import Any, Literal

import openai

import tooltap
from tooltap.simulator import Simulator

registry = tooltap.harness.ToolRegistry()


@registry.tool
def lookup_demo_value(key: Literal["height", "weight"]) -> str:
    """Look up one stored value of the user: height or weight."""
    return {"height": "170 cm", "weight": "70 kg"}[key]


def agent(client: openai.OpenAI, question: str, model: str, lang: str = "en") -> str:
    """Ask, run every tool call the model makes, send the results back, until it answers."""
    messages: list[Any] = [{"role": "user", "content": question}]
    for _ in range(5):
        try:
            response = client.chat.completions.create(
                model=model, messages=messages, tools=registry.declarations("openai.chat")
            )
        except openai.APIError as exc:  # the provider failed: no model can explain it
            failure = tooltap.harness.provider_failure(exc, lang=lang)
            print("diagnostics:", failure.diagnostics, file=sys.stderr)
            return failure.user_message
        turn = registry.run_sync(tooltap.core.parse_response(response, "openai.chat"))
        if not turn.outcomes:  # no tool calls: this is the answer
            return response.choices[0].message.content or ""
        messages.append(response.choices[0].message.model_dump(exclude_none=True))
        messages += turn.messages  # exactly one result per call id, errors included
    return tooltap.harness.fallback_message("default", lang)


def main() -> None:
    question = " ".join(sys.argv[1:]) or "How tall am I and how much do I weigh?"
    with ExitStack() as stack:
        if os.environ.get("OPENAI_API_KEY"):
            client = openai.OpenAI()
        else:
            sim = stack.enter_context(Simulator())
            client = openai.OpenAI(base_url=sim.openai_base_url, api_key="sk-sim", max_retries=0)
        print(agent(client, question, os.environ.get("MODEL", "gpt-4o-mini")))


if __name__ == "__main__":
    main()
