"""What tooltap reports for one response, from its parse: shared by the recorder and the replay.

``judge`` turns a response's ``Parsed`` (and how it ended, what its request declared,
its timing) into the ``Reported`` calls, problems and error, by the rules the telemetry
applies: a body the app stopped reading early is not truncated, calls are checked
against the request, a whole stream that came in one burst after a long wait was
buffered. ``replay`` parses a record's chunks again, with the recorded boundaries, and
judges the result the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .buffering import stream_buffered
from .errors import classify_error, classify_problem
from .flight import FlightRecord, Reported, SeenCall, SeenProblem
from .model import Limits, Parsed, Problem, RequestInfo
from .stream import Framing, StreamParser, parse_response
from .validate import validate

__all__ = ["judge", "replay", "request_from", "request_of"]

_STOPPED_BY_APP: Final = ("truncated_stream", "truncated_json")
#: A record's framing, as the parser takes it (anything else: SSE, as before it was kept).
_FRAMINGS: Final[dict[str, Framing]] = {f: f for f in ("sse", "eventstream", "ndjson")}
_EARLY: Final = ("closed", "collected")


def judge(
    parsed: Parsed,
    request: RequestInfo | None,
    *,
    end: str,
    first: bytes | None,
    total: int,
    timing: Mapping[str, float | None],
    settings: Mapping[str, float],
    transport_error: str | None = None,
) -> Reported:
    """The calls, problems and error reported for a 2xx response parsed as ``parsed``.

    ``first``: the first piece the parser took (None: none); ``total``: the body's bytes.
    """
    problems = list(parsed.problems)
    if end in _EARLY and not parsed.complete and not any(p.kind == "error_event" for p in problems):
        problems = [p for p in problems if p.kind not in _STOPPED_BY_APP]
    if request is not None:
        for call in parsed.calls:
            problems += validate(call, request)
    if parsed.complete and end != "error" and _buffered(first, total, timing, settings):
        problems.append(Problem("stream_buffered"))
    error = transport_error
    for problem in problems:
        if error is not None:
            break
        failure = classify_problem(problem)
        error = failure.error_type if failure is not None else None
    return Reported(
        calls=tuple(SeenCall(c.call_id, c.name, c.args) for c in parsed.calls),
        problems=tuple(SeenProblem(p.kind, p.call_id) for p in problems),
        error=error,
    )


def _buffered(
    first: bytes | None,
    total: int,
    timing: Mapping[str, float | None],
    settings: Mapping[str, float],
) -> bool:
    read, sent, arrived = timing.get("read"), timing.get("sent"), timing.get("first")
    settled = timing.get("settled")
    if first is None or read is None or sent is None or arrived is None or settled is None:
        return False
    events = first.count(b"\n\n") + first.count(b"\r\n\r\n")
    if events == 0:
        return False
    return stream_buffered(
        wait=sent + (arrived - read),
        spread=settled - arrived,
        events=events,
        first_bytes=len(first),
        total_bytes=total,
        min_wait=float(settings.get("stream_buffered_wait", 0.0)),
        min_events=int(settings.get("stream_buffered_events", 0)),
    )


def request_of(info: RequestInfo) -> dict[str, Any]:
    """What a record keeps of the request: what correlation and validation read of it."""
    return {
        "model": info.model,
        "stream": info.stream,
        "tool_choice": info.tool_choice,
        "tools": dict(info.tools),
        "tool_results": [
            {"call_id": r.call_id, "name": r.name, "is_error": r.is_error}
            for r in info.tool_results
        ],
        "previous_response_id": info.previous_response_id,
    }


def request_from(dialect: str, value: Mapping[str, Any]) -> RequestInfo:
    """The ``RequestInfo`` a replay validates calls against, from ``request_of``'s dict."""
    tools = value.get("tools")
    return RequestInfo(
        dialect,
        model=value.get("model"),
        stream=bool(value.get("stream")),
        tools=dict(tools) if isinstance(tools, dict) else {},
        tool_choice=value.get("tool_choice"),
    )


def replay(record: FlightRecord) -> Reported:
    """Parse the record's chunks again (same boundaries) and judge them as ``judge`` does."""
    if record.mode == "error":
        error = classify_error(record.status, dict(record.headers), record.body)
        return Reported(error=error.error_type)
    settings = record.settings
    default = Limits()
    limits = Limits(
        max_event_bytes=int(settings.get("max_event_bytes", default.max_event_bytes)),
        max_argument_bytes=int(settings.get("max_argument_bytes", default.max_argument_bytes)),
    )
    body = record.body
    if record.mode == "body" and record.end != "exhausted":  # the tap parses no partial body
        return Reported(error=record.transport_error)
    framing = _FRAMINGS.get(record.framing, "sse")
    if record.mode == "sse":
        parser = StreamParser(record.dialect, limits=limits, framing=framing)
        for chunk in record.chunks:
            if chunk.data:
                parser.feed(chunk.data)
        parsed = parser.close()
    elif len(body) > limits.max_event_bytes:  # the tap keeps no bigger body to parse
        return Reported(problems=(SeenProblem("oversized_event"),))
    else:
        parsed = parse_response(body, record.dialect, limits=limits)
    first = next((c.data for c in record.chunks if c.data), None)
    return judge(
        parsed,
        request_from(record.dialect, record.request),
        end=record.end,
        first=first if record.mode == "sse" and framing == "sse" else None,
        total=len(body),
        timing=record.timing,
        settings=settings,
        transport_error=record.transport_error,
    )
