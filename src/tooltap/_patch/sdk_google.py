"""google-genai: one operation per model request, all tenacity retries included.

The logical call is ``BaseApiClient._request`` / ``_async_request`` in
``google.genai._api_client``: it runs tenacity's retry loop around
``_request_once`` (each attempt is one send that the transport tap records), and
``models.generate_content``, ``generate_content_stream`` (sync and async, httpx2
or aiohttp) all reach it. ``generate_content`` itself is not the unit: with
automatic function calling it sends one request per model turn (running the
Python tools in between), and with automatic continuation one per hop; each of
those is its own inference with its own span. Only ``:generateContent`` and
``:streamGenerateContent`` POSTs are observed. Streamed bodies are read after the
call returns (``segments()``), so the tap holds the operation until they end.

``Models._generate_content`` (and the async twin) parses the whole response after
``_request`` returned: the operation stays open until it returns, and ends with its
exception when the SDK fails to parse a 2xx body. ``HttpResponse.segments`` (and
``async_segments``), the SDK's loop over a streamed body, is wrapped so that a stream
the SDK fails on is recorded as its failure (``reader_wrappers``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from .._core.detect import detect_dialect
from .._telemetry import semconv as sc
from .exchange import arg
from .patchset import Patch, PatchSet
from .sdk_call import Call, parse_scope_wrappers, wrappers
from .sdk_request import observed, request_params, server_of
from .sdk_stream import reader_wrappers, tapped

__all__ = ["PATCHES"]


@lru_cache(maxsize=256)  # a client's few model URLs: split once, not on every call
def _split(url: str) -> tuple[str | None, str]:
    """The model (``gemini-x`` from ``.../models/gemini-x:generateContent``, Gemini or
    Vertex paths) and the path of a request URL."""
    path = urlsplit(url).path
    model = path.rsplit("/", 1)[-1].split(":", 1)[0]
    return model or None, path


def _describe(instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Call | None:
    # _request(self, http_request, http_options=None, stream=False); same for _async_request
    request = arg(args, kwargs, 0, "http_request")
    url = str(request.url)
    dialect = detect_dialect(str(request.method), url)
    if dialect is None:
        return None
    body = request.data if isinstance(request.data, Mapping) else {}
    address, port = server_of(url)
    if not observed(address, url):
        return None
    model, path = _split(url)
    return Call(
        dialect=dialect,
        request_model=model,
        server_address=address,
        server_port=port,
        stream=bool(arg(args, kwargs, 2, "stream")),
        params=request_params(dialect, body),
        provider=sc.provider_name(dialect, address, path),
        body=request.data if isinstance(request.data, Mapping) else None,
    )


def _body(response: Any) -> object:
    """The tapped body of an ``HttpResponse``: httpx's ``stream`` or aiohttp's ``content``."""
    stream = getattr(response.response_stream, "stream", None)
    if tapped(stream) is not None:
        return stream
    return getattr(response.response_stream, "__dict__", {}).get("content")


_sync, _async = wrappers(_describe)
_parse_sync, _parse_async = parse_scope_wrappers()
_read_sync, _read_async = reader_wrappers(_body)

PATCHES = PatchSet(
    (
        Patch("google.genai._api_client", "BaseApiClient._request", _sync),
        Patch("google.genai._api_client", "BaseApiClient._async_request", _async),
        Patch("google.genai.models", "Models._generate_content", _parse_sync),
        Patch("google.genai.models", "AsyncModels._generate_content", _parse_async),
        Patch("google.genai._api_client", "HttpResponse.segments", _read_sync),
        Patch("google.genai._api_client", "HttpResponse.async_segments", _read_async),
    ),
    "google-genai >= 2.0, < 4",
)
