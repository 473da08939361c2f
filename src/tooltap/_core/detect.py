"""Recognise LLM traffic by method and path (never by host: gateways use other hosts), and
by a request body that could be one (``plausible_request``: key names, no JSON parse)."""

from __future__ import annotations

from typing import Final

__all__ = ["detect_dialect", "google_streaming", "plausible_request"]


_SUFFIXES: Final = (
    "/chat/completions",
    "/responses",
    "/messages",
    ":generateContent",
    ":streamGenerateContent",
)


def detect_dialect(method: str, url: str) -> str | None:
    """The dialect of a request, or None for traffic tooltap leaves alone."""
    if method != "POST" and method.upper() != "POST":
        return None
    path = url
    if "?" in path or "#" in path:
        path = path.split("?", 1)[0].split("#", 1)[0]
    if path.endswith("/"):
        path = path.rstrip("/")
    if not path.endswith(_SUFFIXES):  # most traffic that is not LLM traffic stops here
        return None
    if path.endswith("/chat/completions"):
        return "openai.chat"
    if path.endswith("/responses"):
        return "openai.responses"
    if path.endswith("/messages"):
        return None if "/threads/" in path else "anthropic.messages"
    return "google.genai"


def google_streaming(url: str) -> bool:
    """Whether a Google request asks for a stream (``:streamGenerateContent``)."""
    return ":streamGenerateContent" in url.split("?", 1)[0]


#: Keys a request body of each dialect holds (any one of each group). Google puts the
#: model in the path; Azure-style paths may carry the deployment instead of a ``model``.
_KEYS: Final[dict[str, tuple[tuple[bytes, ...], ...]]] = {
    "openai.chat": ((b'"messages"',),),
    "openai.responses": ((b'"model"', b'"input"'),),
    "anthropic.messages": ((b'"messages"',), (b'"model"', b'"max_tokens"')),
    "google.genai": ((b'"contents"',),),
}


def plausible_request(dialect: str, body: bytes) -> bool:
    """Whether ``body`` could be a request of ``dialect``: it names the keys every such
    request has (a substring search, about a millisecond for 8 MiB; no JSON parse). A
    ``POST .../rooms/42/messages`` with ``{"text": ...}`` is not."""
    return all(any(key in body for key in group) for group in _KEYS[dialect])
