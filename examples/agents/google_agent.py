"""A small tool-calling agent on the google-genai SDK (Gemini API), no tooltap import.

    python -m tooltap.simulator &          # prints its URL; or the real Gemini API
    opentelemetry-instrument python examples/agents/google_agent.py "How tall am I?"

Env: ``GOOGLE_GEMINI_BASE_URL`` (default: the simulator, http://127.0.0.1:8765),
``GEMINI_API_KEY``, ``AGENT_MODEL``, ``AGENT_STREAM=1`` to stream. Automatic function
calling is off: the agent runs its tools itself, so each result goes back on the wire.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from google import genai
from google.genai import types

VALUES = {"height": "170 cm", "weight": "70 kg"}
LOOKUP = types.FunctionDeclaration(
    name="lookup_demo_value",
    description="Look up a value stored for the user (height, weight).",
    parameters_json_schema={
        "type": "object",
        "properties": {"key": {"type": "string"}},
        "required": ["key"],
    },
)


def call_tool(name: str | None, args: dict[str, Any] | None) -> dict[str, Any]:
    """Run one function call; a bad call becomes an error response for the model."""
    if name != "lookup_demo_value" or args is None:
        return {"error": f"no tool {name!r} taking these arguments"}
    return {"result": VALUES.get(str(args.get("key")), "unknown key")}


def run(
    client: genai.Client,
    question: str,
    *,
    model: str = "gemini-2.5-flash",
    stream: bool = False,
    max_turns: int = 4,
    headers: dict[str, str] | None = None,
    tool_config: types.ToolConfig | None = None,
) -> str:
    """Ask ``question``, answer function calls until the model replies with text."""
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[LOOKUP])],
        tool_config=tool_config,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        http_options=types.HttpOptions(headers=headers) if headers else None,
    )
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text=question)])]
    for _ in range(max_turns):
        if stream:
            chunks = list(
                client.models.generate_content_stream(model=model, contents=contents, config=config)
            )
        else:
            chunks = [client.models.generate_content(model=model, contents=contents, config=config)]
        calls = [call for chunk in chunks for call in chunk.function_calls or []]
        if not calls:
            return "".join(chunk.text or "" for chunk in chunks)
        parts = [
            p
            for c in chunks
            if c.candidates and c.candidates[0].content
            for p in c.candidates[0].content.parts or []
        ]
        contents.append(types.Content(role="model", parts=parts))
        answers = [
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.id, name=call.name, response=call_tool(call.name, call.args)
                )
            )
            for call in calls
        ]
        contents.append(types.Content(role="user", parts=answers))
    return ""


def main() -> None:
    client = genai.Client(
        api_key=os.environ.get("GEMINI_API_KEY", "simulator-key"),
        http_options=types.HttpOptions(
            base_url=os.environ.get("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:8765")
        ),
    )
    question = " ".join(sys.argv[1:]) or "How tall am I and how much do I weigh?"
    model = os.environ.get("AGENT_MODEL", "gemini-2.5-flash")
    print(run(client, question, model=model, stream=os.environ.get("AGENT_STREAM") == "1"))


if __name__ == "__main__":
    main()
