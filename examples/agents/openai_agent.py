"""A small tool-calling agent on the OpenAI SDK (Chat Completions), no tooltap import.

    python -m tooltap.simulator &          # prints its URL; or use any OpenAI-compatible server
    opentelemetry-instrument python examples/agents/openai_agent.py "How tall am I?"

Env: ``OPENAI_BASE_URL`` (default: the simulator, http://127.0.0.1:8765/v1),
``OPENAI_API_KEY``, ``AGENT_MODEL``, ``AGENT_STREAM=1`` to stream. Under
``opentelemetry-instrument`` tooltap is loaded through its entry point.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import openai

VALUES = {"height": "170 cm", "weight": "70 kg"}
TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "lookup_demo_value",
            "description": "Look up a value stored for the user (height, weight).",
            "parameters": {
                "type": "object",
                "properties": {"key": {"type": "string"}},
                "required": ["key"],
            },
        },
    }
]


def call_tool(name: str, arguments: str) -> str:
    """Run one tool call; a bad call becomes an error message for the model."""
    try:
        args = json.loads(arguments)
    except ValueError as exc:
        return f"error: arguments are not valid JSON ({exc})"
    if name != "lookup_demo_value" or not isinstance(args, dict):
        return f"error: no tool {name!r} taking these arguments"
    return VALUES.get(str(args.get("key")), "unknown key")


def run(
    client: openai.OpenAI,
    question: str,
    *,
    model: str = "gpt-4o-mini",
    stream: bool = False,
    max_turns: int = 4,
    tool_choice: Any = None,
    **request: Any,
) -> str:
    """Ask ``question``, answer tool calls until the model replies with text.

    ``tool_choice`` (e.g. ``"required"``) applies to the first turn only: later turns
    let the model answer with the results.
    """
    messages: list[Any] = [{"role": "user", "content": question}]
    for turn in range(max_turns):
        kwargs: dict[str, Any] = {"model": model, "messages": messages, "tools": TOOLS, **request}
        if tool_choice is not None and turn == 0:
            kwargs["tool_choice"] = tool_choice
        if stream:
            with client.chat.completions.stream(**kwargs) as events:
                message = events.get_final_completion().choices[0].message
        else:
            message = client.chat.completions.create(**kwargs).choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True, exclude={"parsed"}))
        for call in message.tool_calls:
            result = call_tool(call.function.name, call.function.arguments)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return ""


def main() -> None:
    client = openai.OpenAI(
        base_url=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8765/v1"),
        api_key=os.environ.get("OPENAI_API_KEY", "sk-simulator"),
    )
    question = " ".join(sys.argv[1:]) or "How tall am I and how much do I weigh?"
    model = os.environ.get("AGENT_MODEL", "gpt-4o-mini")
    print(run(client, question, model=model, stream=os.environ.get("AGENT_STREAM") == "1"))


if __name__ == "__main__":
    main()
