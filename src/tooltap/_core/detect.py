"""Recognise LLM traffic by method and path (never by host: gateways use other hosts)."""

from __future__ import annotations

__all__ = ["detect_dialect", "google_streaming"]


def detect_dialect(method: str, url: str) -> str | None:
    """The dialect of a request, or None for traffic tooltap leaves alone."""
    if method.upper() != "POST":
        return None
    path = url.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    if path.endswith("/chat/completions"):
        return "openai.chat"
    if path.endswith("/responses"):
        return "openai.responses"
    if path.endswith("/messages"):
        return None if "/threads/" in path else "anthropic.messages"
    if path.endswith((":generateContent", ":streamGenerateContent")):
        return "google.genai"
    return None


def google_streaming(url: str) -> bool:
    """Whether a Google request asks for a stream (``:streamGenerateContent``)."""
    return ":streamGenerateContent" in url.split("?", 1)[0]
