"""From one HTTP request to one Delivery: record it, pick faults, play the scenario, render."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tooltap._core.detect import detect_dialect, detect_retrieve

from .._forks import new_lock
from ._eventstream import exception_message
from ._faults import FAULT_HEADER, Delivery, Fault, FaultQueue, parse_fault_header
from ._render import Rendered, Wire, json_response
from ._scenario import ConversationError, Scenario
from ._wire_anthropic import AnthropicWire
from ._wire_bedrock import ConverseWire
from ._wire_cohere import CohereWire
from ._wire_google import GoogleWire
from ._wire_ollama import OllamaWire
from ._wire_openai import ChatWire
from ._wire_openai_responses import ResponsesWire

__all__ = ["Engine", "RecordedRequest"]

_ERROR_FAULTS = ("rate_limit", "insufficient_balance", "server_error", "overloaded")


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the simulator received, as it arrived."""

    dialect: str | None
    method: str
    path: str
    query: str
    headers: dict[str, str] = field(hash=False)
    body: bytes
    json: Any = field(hash=False)
    fault: str | None


def _decode(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None


class Engine:
    """The simulator's request logic, independent of sockets."""

    def __init__(self, scenario: Scenario, fragment: int) -> None:
        self.scenario = scenario
        self.faults = FaultQueue()
        self._fragment = max(1, fragment)
        self._lock = new_lock()
        self._requests: list[RecordedRequest] = []
        self._wires: dict[str, Wire] = {
            w.dialect: w
            for w in (
                ChatWire(),
                ResponsesWire(),
                AnthropicWire(),
                GoogleWire(),
                ConverseWire(),
                OllamaWire(),
                CohereWire(),
            )
        }

    @property
    def requests(self) -> list[RecordedRequest]:
        """A copy of the requests received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    def reset(self) -> None:
        """Forget queued faults, recorded requests and conversation state."""
        self.faults.clear()
        self.scenario.reset()
        with self._lock:
            self._requests.clear()

    def handle(
        self, method: str, path: str, query: str, headers: Mapping[str, str], body: bytes
    ) -> Delivery:
        """Answer one request."""
        dialect = detect_dialect(method, path) or detect_retrieve(method, path)
        decoded = _decode(body)
        try:
            faults = parse_fault_header(headers.get(FAULT_HEADER, ""))
        except ValueError as exc:
            faults, bad_header = [], str(exc)
        else:
            bad_header = ""
        queued = self.faults.take(dialect) if dialect is not None else None
        faults += [queued] if queued is not None else []
        record = RecordedRequest(
            dialect,
            method,
            path,
            query,
            dict(headers),
            body,
            decoded,
            ",".join(str(f) for f in faults) or None,
        )
        with self._lock:
            self._requests.append(record)
        if dialect is None:
            error = {"error": {"message": f"Unknown request URL: {method} {path}", "code": 404}}
            return Delivery.of(json_response(404, error))
        wire = self._wires[dialect]
        if bad_header:
            return Delivery.of(wire.error("invalid_request", 400, bad_header))
        if method.upper() == "GET":
            rendered = _read_back(wire, path, query)
        else:
            rendered = self._respond(wire, faults, body, decoded, path, query)
        delivery = Delivery.of(rendered)
        for fault in faults:
            delivery.apply(fault)
        return delivery

    def _respond(
        self, wire: Wire, faults: list[Fault], body: bytes, decoded: Any, path: str, query: str
    ) -> Rendered:
        kinds = {f.kind: f for f in faults}
        for kind in _ERROR_FAULTS:
            if kind in kinds:
                return _error_fault(wire, kinds[kind])
        if decoded is None:
            message = "We could not parse the JSON body of your request."
            return wire.error("invalid_request", 400, message)
        try:
            turn = wire.read(decoded, path, query)
            turn = dataclasses.replace(
                turn, input_chars=len(body), history_calls=_history_calls(decoded)
            )
            bad = kinds.get("invalid_json_args")
            reply = self.scenario.answer(
                turn,
                wire,
                ignore_tool_choice="ignore_tool_choice" in kinds,
                invalid_json_index=int(bad.params.get("index", 0)) if bad else None,
            )
        except (TypeError, ValueError, ConversationError) as exc:
            return wire.error("invalid_request", 400, str(exc))
        no_ids = "no_ids" in kinds or self.scenario.ids == "none"
        rendered = wire.render(reply, turn, fragment=self._fragment, no_ids=no_ids)
        if "error_event" in kinds:
            if not rendered.stream:
                return wire.error("server_error", 500, "")
            error = wire.stream_error(reply, rendered.mark)
            if _eventstream(rendered) and error.startswith(b"event:"):
                # Claude on Bedrock: the stream ends with an exception message instead
                error = exception_message("modelStreamErrorException", "Model stream failed.")
            rendered.chunks = [*rendered.chunks[: rendered.mark], error]
        return rendered


def _read_back(wire: Wire, path: str, query: str) -> Rendered:
    """A ``GET`` of a stored response (Responses' background mode)."""
    retrieve = getattr(wire, "retrieve", None)
    response_id = path.rstrip("/").rpartition("/")[2]
    if retrieve is None:
        return wire.error("not_found", 404, f"Unknown request URL: GET {path}")
    rendered: Rendered = retrieve(response_id, query)
    return rendered


def _error_fault(wire: Wire, fault: Fault) -> Rendered:
    """The error response a provider sends for a rate limit, an empty balance or an outage."""
    kind = fault.kind
    if kind in ("rate_limit", "insufficient_balance"):
        retry_after = fault.number("retry_after", 1.0) if kind == "rate_limit" else None
        rendered = wire.error(kind, 429, "", retry_after)
        if retry_after is not None:
            rendered.headers.append(("retry-after", f"{retry_after:g}"))
            if wire.dialect.startswith("openai."):
                rendered.headers.append(("retry-after-ms", f"{retry_after * 1000:g}"))
        return rendered
    if kind == "server_error":
        return wire.error(kind, int(fault.number("status", 500)), "")
    return wire.error(kind, 529 if wire.dialect == "anthropic.messages" else 503, "")


def _eventstream(rendered: Rendered) -> bool:
    """Whether a response is AWS event-stream framed."""
    return any(
        k == "content-type" and v.startswith("application/vnd.amazon.eventstream")
        for k, v in rendered.headers
    )


def _history_calls(body: Any) -> int:
    """How many tool calls a request's history carries, whatever the dialect."""
    if not isinstance(body, dict):
        return 0
    count = 0
    for item in body.get("messages") or body.get("input") or body.get("contents") or []:
        if not isinstance(item, dict):
            continue
        if item.get("type") in ("function_call", "custom_tool_call"):
            count += 1
        count += len(item.get("tool_calls") or ())
        content = item.get("content") if item.get("role") == "assistant" else item.get("parts")
        if isinstance(content, list):
            count += sum(
                1
                for p in content
                if isinstance(p, dict)
                and (p.get("type") == "tool_use" or "functionCall" in p or "function_call" in p)
            )
    return count
