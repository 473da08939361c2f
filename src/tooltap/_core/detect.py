"""Recognise LLM traffic by method and path (never by host: gateways use other hosts)."""

from __future__ import annotations

from typing import Final

__all__ = ["detect_dialect", "google_streaming"]


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
