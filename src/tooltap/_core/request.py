"""Read a request body: declared tools and their schemas, tool_choice, new tool results.

The dialect's reader (``Dialect.read_request``) does the reading; only the tail of the
history is read (see ``dialects._request``). Total: a malformed body gives a
``RequestInfo`` with ``unexpected_shape`` problems.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._json import loads_str
from .dialects import dialect as dialect_entry
from .dialects import valid_tool_name
from .dialects._request import Horizon, Reader
from .model import Problem, RequestInfo

__all__ = ["parse_request"]


def parse_request(
    body: bytes | str | Mapping[str, Any], dialect: str, horizon: Horizon | None = None
) -> RequestInfo:
    """What one request declares (tools, schemas, tool_choice) and carries (tool results).

    ``horizon``: given the conversation's fingerprint, the oldest history index still
    holding an open call of it (how far back results are read; None: the last model turn).
    """
    entry = dialect_entry(dialect)
    if isinstance(body, (bytes, bytearray, memoryview)):
        body = bytes(body).decode("utf-8", "replace")
    if isinstance(body, str):
        try:
            body = loads_str(body)
        except (ValueError, RecursionError) as exc:  # RecursionError: absurdly deep JSON
            return RequestInfo(
                dialect, problems=(Problem("unexpected_shape", detail=f"body: {exc}"),)
            )
    if not (type(body) is dict or isinstance(body, Mapping)):
        detail = f"body is {type(body).__name__}, not an object"
        return RequestInfo(dialect, problems=(Problem("unexpected_shape", detail=detail),))
    reader = Reader(dialect, horizon)
    try:
        entry.read_request(reader, body)
    except Exception as exc:  # noqa: BLE001 - the core is total
        reader.problem(f"request: {exc!r}")
    model = body.get("model")
    conversation = body.get("conversation")
    if type(conversation) is dict or isinstance(conversation, Mapping):
        conversation = conversation.get("id")
    previous = body.get("previous_response_id")
    conversation = conversation if isinstance(conversation, str) and conversation else None
    previous = previous if isinstance(previous, str) and previous else None
    carried = conversation is None and previous is None  # the body carries the history
    return RequestInfo(
        dialect=dialect,
        model=model if isinstance(model, str) else None,
        stream=entry.body_streams and body.get("stream") is True,
        tools=reader.tools,
        invalid_tool_names=tuple(n for n in reader.tools if not valid_tool_name(n, dialect)),
        tool_choice=reader.tool_choice,
        tool_results=tuple(reader.results),
        problems=tuple(reader.problems),
        conversation_id=conversation,
        previous_response_id=previous,
        fingerprint=reader.fingerprint if carried else None,
        system_fingerprint=reader.system if carried else None,
        toolsets={k: frozenset(v) for k, v in reader.toolsets.items()},
        history_length=reader.length if carried else None,
        model_turns=tuple(reader.turns),
    )
