"""``python docs/trace_tree.py``: the trace of one conversation, as README.md shows it.

An anthropic agent answers "How tall am I, and how much do I weigh?" against the
provider simulator, inside ``tooltap.conversation("user-42", root_span=True)``; the
spans tooltap recorded are printed as a tree (needs the ``demo`` extra).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import anthropic
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import tooltap
from tooltap.simulator import Simulator

QUESTION = "How tall am I, and how much do I weigh?"


def lookup_demo_value(key: str) -> str:
    """Look up one stored value of the user."""
    return {"height": "170 cm", "weight": "70 kg"}[key]


def converse() -> Sequence[ReadableSpan]:
    """One conversation, instrumented; the spans it made."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tooltap.instrument(tracer_provider=provider)
    registry = tooltap.harness.ToolRegistry()
    registry.tool(lookup_demo_value)
    tools: Any = registry.declarations("anthropic.messages")
    try:
        with Simulator() as sim:
            client = anthropic.Anthropic(base_url=sim.anthropic_base_url, api_key="sk-ant-demo")
            messages: list[Any] = [{"role": "user", "content": QUESTION}]
            with tooltap.conversation("user-42", root_span=True):
                while True:
                    message = client.messages.create(
                        model="claude-sonnet-4-6", max_tokens=256, messages=messages, tools=tools
                    )
                    if message.stop_reason != "tool_use":
                        break
                    parsed = tooltap.core.parse_response(message, "anthropic.messages")
                    turn = registry.run_sync(parsed)
                    messages.append({"role": "assistant", "content": message.content})
                    messages += turn.messages
    finally:
        tooltap.uninstrument()
    return exporter.get_finished_spans()


def _label(span: ReadableSpan) -> str:
    attrs = span.attributes or {}
    if "gen_ai.tool.call.id" in attrs:
        call_id = str(attrs["gen_ai.tool.call.id"])
        return f"call.id={call_id[:14]}…  result={attrs.get('tooltap.result')}"
    if "gen_ai.response.finish_reasons" in attrs:
        finish = attrs["gen_ai.response.finish_reasons"]
        reasons = ",".join(map(str, finish)) if isinstance(finish, tuple) else str(finish)
        links = f", links to {len(span.links)} tool spans" if span.links else ""
        return f"finish_reasons={reasons}{links}"
    return f"gen_ai.conversation.id={attrs.get('gen_ai.conversation.id')}"


def tree(spans: Sequence[ReadableSpan]) -> list[str]:
    """The spans as an indented tree, children in start order, with their duration."""
    children: dict[int | None, list[ReadableSpan]] = {}
    for span in spans:
        parent = span.parent.span_id if span.parent is not None else None
        children.setdefault(parent, []).append(span)
    lines: list[str] = []

    def walk(span: ReadableSpan, prefix: str, branch: str) -> None:
        ms = ((span.end_time or 0) - (span.start_time or 0)) / 1e6
        lines.append(f"{prefix}{branch}{span.name:<{40 - len(prefix + branch)}} {_label(span)}"
                     f"  {ms:.0f} ms")  # fmt: skip
        kids = sorted(children.get(span.context.span_id, []), key=lambda s: s.start_time or 0)
        inner = prefix + ("" if not branch else "│  " if branch == "├─ " else "   ")
        for i, kid in enumerate(kids):
            walk(kid, inner, "└─ " if i == len(kids) - 1 else "├─ ")

    for root in children.get(None, []):
        walk(root, "", "")
    return lines


def main() -> int:
    print("\n".join(tree(converse())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
