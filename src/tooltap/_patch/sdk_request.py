"""Reading an SDK call's arguments: server, ``gen_ai.request.*`` parameters, the
Stainless-style ``describe_body``, and the ``hosts`` / ``exclude`` filter."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, Final, TypeVar, overload
from urllib.parse import urlsplit

from opentelemetry.util.types import AttributeValue

from .._core.detect import detect_dialect, detect_retrieve
from .._core.dialects import TABLE
from .._telemetry import semconv as sc
from .._telemetry.telemetry import get_telemetry
from .sdk_call import Call

__all__ = ["describe_body", "filtering", "observed", "request_params", "server_of"]


def server_of(url: object) -> tuple[str | None, int | None]:
    """``server.address`` and ``server.port`` of a base URL (an httpx URL or a string)."""
    global _last_server
    last = _last_server
    if last[0] is url:  # a client's own base URL object again (httpx URLs are immutable)
        return last[1]
    server = _server_of(str(url))
    _last_server = (url, server)
    return server


#: The URL object ``server_of`` was last given, and its answer: ``str()`` of an httpx URL
#: is rebuilt from its parts on every call.
_last_server: tuple[object, tuple[str | None, int | None]] = (None, (None, None))


@lru_cache(maxsize=64)  # a client's base URL: split once, not on every call
def _server_of(url: str) -> tuple[str | None, int | None]:
    parts = urlsplit(url)
    if not parts.hostname:
        return None, None
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.hostname, port


_Path = tuple[str, ...]

#: The ``gen_ai.request.*`` attributes a dialect's ``request_params`` may name, by suffix.
_REQUEST_ATTRIBUTES: Final = {
    name.removeprefix("gen_ai.request."): name
    for name in (
        sc.GEN_AI_REQUEST_MAX_TOKENS,
        sc.GEN_AI_REQUEST_TEMPERATURE,
        sc.GEN_AI_REQUEST_TOP_P,
        sc.GEN_AI_REQUEST_TOP_K,
        sc.GEN_AI_REQUEST_SEED,
        sc.GEN_AI_REQUEST_STOP_SEQUENCES,
    )
}
#: Per dialect: (semconv request attribute, where the request body keeps it: one top-level
#: key, or paths, first found).
_PARAMS: Final[dict[str, tuple[tuple[str, str | tuple[_Path, ...]], ...]]] = {
    d.name: tuple(
        (_REQUEST_ATTRIBUTES[k], paths[0][0] if len(paths) == 1 and len(paths[0]) == 1 else paths)
        for k, paths in d.request_params.items()
    )
    for d in TABLE.values()
}


def _dig(body: Mapping[str, Any], path: _Path) -> object:
    value: object = body
    for key in path:
        if not (type(value) is dict or isinstance(value, Mapping)):
            return None
        value = value.get(key)
    return value


def _attribute(name: str, value: object) -> AttributeValue | None:
    """``value`` as attribute ``name`` takes it; None for a value of another type."""
    if name == sc.GEN_AI_REQUEST_STOP_SEQUENCES:
        if isinstance(value, str):
            return [value]  # one stop sequence, as a list like several
        if isinstance(value, Sequence) and value and all(isinstance(v, str) for v in value):
            return [str(v) for v in value]
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return None


def request_params(dialect: str, body: object) -> dict[str, AttributeValue]:
    """The ``gen_ai.request.*`` attributes a request body sets (max_tokens, temperature...)."""
    if not (type(body) is dict or isinstance(body, Mapping)):
        return {}
    params: dict[str, AttributeValue] = {}
    for name, where in _PARAMS.get(dialect, ()):
        if isinstance(where, str):  # one top-level key: most parameters of most dialects
            found = body.get(where)
            if found is not None and (value := _attribute(name, found)) is not None:
                params[name] = value
            continue
        for path in where:
            found = body.get(path[0]) if len(path) == 1 else _dig(body, path)
            if found is None:  # absent: most parameters of most requests
                continue
            value = _attribute(name, found)
            if value is not None:
                params[name] = value
                break
    return params


_C = TypeVar("_C", bound=Call)


@overload
def describe_body(method: str, url: str, body: object, base_url: object) -> Call | None: ...
@overload
def describe_body(
    method: str, url: str, body: object, base_url: object, kind: type[_C]
) -> _C | None: ...
def describe_body(
    method: str, url: str, body: object, base_url: object, kind: type[Call] = Call
) -> Call | None:
    """The :class:`Call` (or ``kind`` of it) of a Stainless-style request (openai,
    anthropic): path + JSON body; or a ``GET`` reading a stored response back (no body)."""
    dialect = detect_dialect(method, url) or detect_retrieve(method, url)
    if dialect is None:
        return None
    fields: Mapping[str, Any] = body if (type(body) is dict or isinstance(body, Mapping)) else {}
    model = fields.get("model")
    address, port = server_of(base_url)
    if filtering():
        full = url if "://" in url else f"{base_url}".rstrip("/") + "/" + url.lstrip("/")
        if not observed(address, full):
            return None
    return kind(
        dialect=dialect,
        request_model=model if isinstance(model, str) else None,
        server_address=address,
        server_port=port,
        stream=fields.get("stream") is True,
        params=request_params(dialect, fields),
        body=body if (type(body) is dict or isinstance(body, Mapping)) else None,
    )


def filtering() -> bool:
    """Whether the ``hosts`` / ``exclude`` options leave any traffic out."""
    tel = get_telemetry()
    return tel is not None and bool(tel.config.hosts or tel.config.exclude)


def observed(host: str | None, url: str) -> bool:
    """Whether the ``hosts`` / ``exclude`` options let tooltap observe a call to ``host``."""
    tel = get_telemetry()
    return tel is None or tel.config.observes(host, urlsplit(url).path)
