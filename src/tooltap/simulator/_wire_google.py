"""Google Gemini on the wire (``models/{m}:generateContent`` / ``:streamGenerateContent``).

Both the Gemini API path (``/v1beta/models/{m}:...``) and the Vertex AI path
(``/v1/projects/{p}/locations/{l}/publishers/google/models/{m}:...``) are served.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from ._render import Rendered, body_cut, dumps, json_response
from ._scenario import PlannedCall, PriorCall, Reply, ToolResult, Turn, content_text, token

__all__ = ["GoogleWire"]

_MODEL = re.compile(r"/models/([^/:]+):(generateContent|streamGenerateContent)$")
_MODES = {"AUTO": "auto", "VALIDATED": "auto", "ANY": "any", "NONE": "none"}
_ERRORS: dict[str, tuple[str, str]] = {
    "invalid_request": ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    "not_found": ("NOT_FOUND", "Requested entity was not found."),
    "rate_limit": ("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
    "insufficient_balance": (
        "RESOURCE_EXHAUSTED",
        (
            # Gemini's prepaid-billing wording; its plain per-minute 429 also says "quota".
            "Your prepayment credits are depleted. Please go to AI Studio at "
            "https://ai.studio/projects to manage your project and billing."
        ),
    ),
    "server_error": (
        "INTERNAL",
        (
            "An internal error has occurred. Please retry or report in "
            "https://developers.generativeai.google/guide/troubleshooting"
        ),
    ),
    "overloaded": ("UNAVAILABLE", "The model is overloaded. Please try again later."),
}


def _get(obj: Any, camel: str, snake: str) -> Any:
    """A field under its camelCase (wire) or snake_case name."""
    if not isinstance(obj, dict):
        return None
    return obj.get(camel, obj.get(snake))


def _parts(content: dict[str, Any], kind: str, snake: str) -> list[dict[str, Any]]:
    parts = content.get("parts")
    found = [_get(p, kind, snake) for p in parts] if isinstance(parts, list) else []
    return [f for f in found if isinstance(f, dict)]


def google_error_body(kind: str, status: int, message: str, retry_after: float | None) -> Any:
    """Google's ``{"error": {"code", "message", "status"}}`` body."""
    code, default = _ERRORS.get(kind, _ERRORS["server_error"])
    details: list[dict[str, Any]] = []
    if kind == "insufficient_balance":
        details.append(
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [
                    {"quotaMetric": "generativelanguage.googleapis.com/billing_credits"}
                ],
            }
        )
    if retry_after is not None:
        details.append(
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{retry_after:g}s"}
        )
    error: dict[str, Any] = {"code": status, "message": message or default, "status": code}
    if details:
        error["details"] = details
    return {"error": error}


class GoogleWire:
    """Gemini: whole ``functionCall`` parts with optional ids, CRLF-separated SSE."""

    dialect = "google.genai"

    def call_ids(self, rng: random.Random) -> tuple[str, str]:
        """Eight lowercase characters and digits, used as both ids."""
        call_id = token(rng, 8, "abcdefghijklmnopqrstuvwxyz0123456789")
        return call_id, call_id

    def response_id(self, rng: random.Random) -> str:
        """A 23-character response id."""
        return token(rng, 23)

    def read(self, body: Any, path: str, query: str) -> Turn:
        """Model (from the path), tools, toolConfig and the functionResponse parts at the end."""
        match = _MODEL.search(path)
        if match is None:
            raise ValueError(f"unsupported path {path}")
        if not isinstance(body, dict) or not isinstance(body.get("contents"), list):
            raise TypeError("* GenerateContentRequest.contents: contents is not specified")
        contents = [c for c in body["contents"] if isinstance(c, dict)]
        last = max((i for i, c in enumerate(contents) if c.get("role") == "model"), default=-1)
        names = [
            _get(d, "name", "name")
            for tool in body.get("tools") or []
            for d in _get(tool, "functionDeclarations", "function_declarations") or []
        ]
        config = _get(
            _get(body, "toolConfig", "tool_config"),
            "functionCallingConfig",
            "function_calling_config",
        )
        choice = _MODES.get(str(_get(config, "mode", "mode") or "AUTO").upper(), "auto")
        allowed = _get(config, "allowedFunctionNames", "allowed_function_names") or []
        forced = allowed[0] if choice == "any" and len(allowed) == 1 else None
        return Turn(
            model=match.group(1),
            stream=match.group(2) == "streamGenerateContent",
            tools=tuple(str(n) for n in names if n),
            choice="tool" if forced else choice,
            forced_name=forced,
            results=tuple(
                ToolResult(r.get("id"), r.get("name"), content_text(r.get("response")))
                for c in contents[last + 1 :]
                for r in _parts(c, "functionResponse", "function_response")
            ),
            prior_calls=tuple(
                PriorCall(f.get("id"), str(f.get("name")))
                for f in (
                    _parts(contents[last], "functionCall", "function_call") if last >= 0 else []
                )
            ),
            echo={"sse": "alt=sse" in query},
        )

    def _call_part(self, call: PlannedCall, no_ids: bool) -> dict[str, Any]:
        function: dict[str, Any] = {
            "name": call.name,
            "args": call.args if call.valid else call.arguments,
        }
        if not no_ids:
            function["id"] = call.call_id
        return {"functionCall": function}

    def _chunk(self, reply: Reply, parts: list[dict[str, Any]], final: bool) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
        usage: dict[str, Any] = {"promptTokenCount": reply.input_tokens}
        if final:
            candidate["finishReason"] = "STOP"
            usage["candidatesTokenCount"] = reply.output_tokens
        usage["totalTokenCount"] = reply.input_tokens + (reply.output_tokens if final else 0)
        usage["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": reply.input_tokens}]
        candidate["index"] = 0
        return {
            "candidates": [candidate],
            "usageMetadata": usage,
            "modelVersion": reply.model,
            "responseId": reply.response_id,
        }

    def render(self, reply: Reply, turn: Turn, *, fragment: int, no_ids: bool) -> Rendered:
        """A GenerateContentResponse, or a stream of them (SSE, or a JSON array without alt=sse)."""
        call_parts = [self._call_part(c, no_ids) for c in reply.calls]
        needle = b""
        if len(reply.calls) > 1:
            second = call_parts[1]["functionCall"]["args"]
            needle = dumps(second, spaced=turn.stream).encode()
        if not turn.stream:
            parts = call_parts + ([{"text": reply.text}] if reply.text else [])
            rendered = json_response(200, self._chunk(reply, parts, True))
            if needle:
                rendered.cut = body_cut(rendered.body, b'"functionCall"', 1, needle)
            return rendered
        groups = [[p] for p in call_parts]
        size = max(fragment, 1)
        groups += [[{"text": reply.text[i : i + size]}] for i in range(0, len(reply.text), size)]
        chunks = [
            dumps(self._chunk(reply, g, n == len(groups) - 1), spaced=True)
            for n, g in enumerate(groups or [[]])
        ]
        if turn.echo.get("sse", True):
            events = [f"data: {c}\r\n\r\n".encode() for c in chunks]
            content_type = "text/event-stream"
        else:
            events = [
                ("[" if n == 0 else ",\r\n").encode() + c.encode() for n, c in enumerate(chunks)
            ]
            events.append(b"]")
            content_type = "application/json; charset=UTF-8"
        cut = None
        if needle:
            cut = sum(len(e) for e in events[:1]) + events[1].find(needle) + len(needle) // 2
        headers = [("content-type", content_type)]
        return Rendered(200, headers, events, stream=True, mark=1, cut=cut)

    def error(
        self, kind: str, status: int, message: str, retry_after: float | None = None
    ) -> Rendered:
        """Google's error body."""
        return json_response(status, google_error_body(kind, status, message, retry_after))

    def stream_error(self, reply: Reply, sequence: int) -> bytes:
        """An ``{"error": ...}`` chunk: google-genai raises APIError on it."""
        body = google_error_body("server_error", 500, "", None)
        return f"data: {json.dumps(body)}\r\n\r\n".encode()
