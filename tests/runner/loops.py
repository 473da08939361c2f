"""A minimal agent loop per dialect: real SDK client -> simulator -> ToolRegistry -> SDK again.

Each ``Loop`` keeps the conversation in the SDK's own request shape and appends the
model turn plus ``TurnResult.messages`` unchanged, as a harness would.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anthropic
import openai
from google import genai
from google.genai import types as gtypes

import tooltap
from tooltap import Parsed
from tooltap.harness import ToolRegistry, TurnResult
from tooltap.simulator import Simulator

QUESTION = "How tall am I and how much do I weigh?"
TIMEOUT = 5.0


@dataclass
class Step:
    """One model turn and what the registry did with it."""

    parsed: Parsed
    text: str
    result: TurnResult | None = None


@dataclass
class Conversation:
    steps: list[Step] = field(default_factory=list)

    @property
    def final_text(self) -> str:
        return self.steps[-1].text

    @property
    def results(self) -> list[TurnResult]:
        return [s.result for s in self.steps if s.result is not None]


class Loop:
    dialect = ""

    def __init__(self, sim: Simulator, registry: ToolRegistry, **options: Any) -> None:
        self.sim = sim
        self.registry = registry
        self.options = options  # extra request kwargs (extra_headers...)
        self.history: list[Any] = []
        self.say(QUESTION)

    def say(self, text: str) -> None:
        """Append a user message."""
        self.history.append({"role": "user", "content": text})

    def request(self) -> Any:
        """Send the history; return the SDK's response object."""
        raise NotImplementedError

    def text(self, response: Any) -> str:
        raise NotImplementedError

    def keep(self, response: Any) -> None:
        """Append the model turn to the history."""
        raise NotImplementedError

    def step(self) -> Step:
        """One request; run its calls (if any) and append everything to the history."""
        sent = list(self.history)
        response = self.request()
        parsed = tooltap.core.parse_response(response, self.dialect)
        step = Step(parsed, self.text(response))
        self.keep(response)
        if parsed.calls or parsed.problems:
            step.result = self.registry.run_sync(parsed, history=sent)
            self.history += step.result.messages
        return step

    def converse(self, max_steps: int = 4) -> Conversation:
        """Steps until the model answers without calling a tool."""
        conversation = Conversation()
        for _ in range(max_steps):
            step = self.step()
            conversation.steps.append(step)
            if step.result is None:
                return conversation
        raise AssertionError(f"no final answer after {max_steps} steps")


class ChatLoop(Loop):
    dialect = "openai.chat"

    def client(self) -> openai.OpenAI:
        return openai.OpenAI(
            base_url=self.sim.openai_base_url, api_key="sk-test", max_retries=0, timeout=TIMEOUT
        )

    def request(self) -> Any:
        return self.client().chat.completions.create(
            model="gpt-4o-mini",
            messages=self.history,
            tools=self.registry.declarations(self.dialect),
            **self.options,
        )

    def text(self, response: Any) -> str:
        return str(response.choices[0].message.content or "")

    def keep(self, response: Any) -> None:
        self.history.append(response.choices[0].message.model_dump(exclude_none=True))


class ResponsesLoop(ChatLoop):
    dialect = "openai.responses"

    def request(self) -> Any:
        return self.client().responses.create(
            model="gpt-4.1-mini",
            input=self.history,
            tools=self.registry.declarations(self.dialect),
            **self.options,
        )

    def text(self, response: Any) -> str:
        return str(response.output_text)

    def keep(self, response: Any) -> None:
        self.history += [item.model_dump(exclude_none=True) for item in response.output]


class AnthropicLoop(Loop):
    dialect = "anthropic.messages"

    def request(self) -> Any:
        client = anthropic.Anthropic(
            base_url=self.sim.anthropic_base_url,
            api_key="sk-ant-test",
            max_retries=0,
            timeout=TIMEOUT,
        )
        return client.messages.create(
            model="claude-sonnet-5-5",
            max_tokens=512,
            messages=self.history,
            tools=self.registry.declarations(self.dialect),
            **self.options,
        )

    def text(self, response: Any) -> str:
        return "".join(b.text for b in response.content if b.type == "text")

    def keep(self, response: Any) -> None:
        content = [b.model_dump(exclude_none=True) for b in response.content]
        self.history.append({"role": "assistant", "content": content})


class GoogleLoop(Loop):
    dialect = "google.genai"

    def say(self, text: str) -> None:
        self.history.append({"role": "user", "parts": [{"text": text}]})

    def request(self) -> Any:
        headers = self.options.get("extra_headers")
        self._client = genai.Client(  # kept: the SDK closes its HTTP client when collected
            api_key="test-key",
            http_options=gtypes.HttpOptions(
                base_url=self.sim.google_base_url,
                timeout=int(TIMEOUT * 1000),
                retry_options=gtypes.HttpRetryOptions(attempts=1),
            ),
        )
        config = gtypes.GenerateContentConfig(
            tools=self.registry.declarations(self.dialect),
            automatic_function_calling=gtypes.AutomaticFunctionCallingConfig(disable=True),
            http_options=gtypes.HttpOptions(headers=headers) if headers else None,
        )
        return self._client.models.generate_content(
            model="gemini-2.5-flash", contents=self.history, config=config
        )

    def text(self, response: Any) -> str:
        parts = response.candidates[0].content.parts or []
        return "".join(p.text or "" for p in parts)

    def keep(self, response: Any) -> None:
        self.history.append(response.candidates[0].content.model_dump(exclude_none=True))


LOOPS: dict[str, type[Loop]] = {
    loop.dialect: loop for loop in (ChatLoop, ResponsesLoop, AnthropicLoop, GoogleLoop)
}
