"""Recognise LLM traffic by method and path (never by host: gateways use other hosts), and
by a request body that could be one (``plausible_request``: key names, no JSON parse).
Each dialect's path suffixes and body keys are in its ``TABLE`` entry."""

from __future__ import annotations

from functools import lru_cache
from typing import Final

from .dialects import TABLE
from .dialects._base import no_retrieve

__all__ = ["detect_dialect", "detect_retrieve", "plausible_request"]

#: (reads back a stored response, name) per dialect that has them.
_RETRIEVES: Final = tuple(
    (d.retrieves, d.name) for d in TABLE.values() if d.retrieves is not no_retrieve
)
#: (path suffixes, whether a matching path is the dialect's, name) per dialect.
_ROUTES: Final = tuple((d.path_suffixes, d.claims_path, d.name) for d in TABLE.values())
_SUFFIXES: Final = tuple(s for d in TABLE.values() for s in d.path_suffixes)


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
    return _route(path)


@lru_cache(maxsize=256)  # an app's few API paths: told once, not on every request
def _route(path: str) -> str | None:
    for suffixes, claims, name in _ROUTES:
        if path.endswith(suffixes):
            return name if claims(path) else None
    return None


def detect_retrieve(method: str, url: str) -> str | None:
    """The dialect of a ``GET`` that reads a stored response back (a poll of a background
    response, a resumed stream), or None."""
    if method != "GET" and method.upper() != "GET":
        return None
    path = url.split("?", 1)[0].split("#", 1)[0] if "?" in url or "#" in url else url
    for retrieves, name in _RETRIEVES:
        if retrieves(path) is not None:
            return name
    return None


def plausible_request(dialect: str, body: bytes, path: str = "") -> bool:
    """Whether ``body`` could be a request of ``dialect``: it names the keys every such
    request has (a substring search, about a millisecond for 8 MiB; no JSON parse), and
    the dialect claims a body on ``path`` (a Llama body on Bedrock's ``/invoke`` is not
    Claude's). A ``POST .../rooms/42/messages`` with ``{"text": ...}`` is not."""
    entry = TABLE[dialect]
    keys = all(any(key in body for key in group) for group in entry.body_keys)
    return keys and entry.claims_body(path, body)
