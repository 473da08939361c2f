"""A small tool-calling agent on the Anthropic SDK (Messages), no tooltap import.

    python -m tooltap.simulator &          # prints its URL; or any Anthropic-compatible server
    opentelemetry-instrument python examples/agents/anthropic_agent.py "How tall am I?"

Env: ``ANTHROPIC_BASE_URL`` (default: the simulator, http://127.0.0.1:8765),
``ANTHROPIC_API_KEY``, ``AGENT_MODEL``, ``AGENT_STREAM=1`` to stream.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anthropic

VALUES = {"height": "170 cm", "weight": "70 kg"}
TOOLS: list[Any] = [
    {
        "name": "lookup_demo_value",
        "description": "Look up a value stored for the user (height, weight).",
        "input_schema": {
            "type": "object",
            "properties": {"key": {"type": "string"}},
            "required": ["key"],
        },
    }
]


def call_tool(name: str, args: object) -> tuple[str, bool]:
    """Run one tool call: (content, is_error)."""
    if name != "lookup_demo_value" or not isinstance(args, dict):
        return f"error: no tool {name!r} taking these arguments", True
    return VALUES.get(str(args.get("key")), "unknown key"), False


def run(
    client: anthropic.Anthropic,
    question: str,
    *,
    model: str = "claude-sonnet-5-5",
    stream: bool = False,
    max_turns: int = 4,
    tool_choice: Any = None,
    **request: Any,
) -> str:
    """Ask ``question``, answer ``tool_use`` blocks until the model replies with text.

    ``tool_choice`` (e.g. ``{"type": "any"}``) applies to the first turn only.
    """
    messages: list[Any] = [{"role": "user", "content": question}]
    for turn in range(max_turns):
        kwargs: dict[str, Any] = {"model": model, "max_tokens": 512, "messages": messages}
        kwargs.update(tools=TOOLS, **request)
        if tool_choice is not None and turn == 0:
            kwargs["tool_choice"] = tool_choice
        if stream:
            with client.messages.stream(**kwargs) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(**kwargs)
        uses = [block for block in message.content if block.type == "tool_use"]
        if not uses:
            return "".join(block.text for block in message.content if block.type == "text")
        messages.append({"role": "assistant", "content": [b.model_dump() for b in message.content]})
        results = []
        for use in uses:
            content, is_error = call_tool(use.name, use.input)
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": use.id,
                    "content": content,
                    "is_error": is_error,
                }
            )
        messages.append({"role": "user", "content": results})
    return ""


def main() -> None:
    client = anthropic.Anthropic(
        base_url=os.environ.get("ANTHROPIC_BASE_URL", "http://127.0.0.1:8765"),
        api_key=os.environ.get("ANTHROPIC_API_KEY", "sk-ant-simulator"),
    )
    question = " ".join(sys.argv[1:]) or "How tall am I and how much do I weigh?"
    model = os.environ.get("AGENT_MODEL", "claude-sonnet-5-5")
    print(run(client, question, model=model, stream=os.environ.get("AGENT_STREAM") == "1"))


if __name__ == "__main__":
    main()
