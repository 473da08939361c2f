"""cohere: one operation per v2 chat call, covering the client's retries.

``HttpClient.request`` / ``AsyncHttpClient.request`` in ``cohere.core.http_client`` is
the logical call of a whole (not streamed) response: it holds the retry loop (it calls
itself again, which the wrappers pass through while the operation is current), so every
attempt the httpx tap sees lands on one operation. Only POSTs to ``/v2/chat`` are
observed (``detect_dialect``). A stream (``HttpClient.stream``) is one attempt, which
the httpx tap records on its own.
"""

from __future__ import annotations

from typing import Any

from .exchange import arg
from .patchset import Patch, PatchSet
from .sdk_call import Call, wrappers
from .sdk_request import describe_body

__all__ = ["PATCHES"]


def _describe(instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Call | None:
    # request(self, path=None, *, method, base_url=None, params=None, json=None, ..., omit=None)
    path = arg(args, kwargs, 0, "path")
    if not isinstance(path, str) or kwargs.get("retries", 0):
        return None
    body = kwargs.get("json")
    if isinstance(body, dict):
        omit = kwargs.get("omit")
        body = {k: v for k, v in body.items() if v is not omit and v is not None}
    base = instance.get_base_url(kwargs.get("base_url"))
    return describe_body(str(kwargs.get("method", "")), "/" + path.lstrip("/"), body, base)


_sync, _async = wrappers(_describe)

PATCHES = PatchSet(
    (
        Patch("cohere.core.http_client", "HttpClient.request", _sync),
        Patch("cohere.core.http_client", "AsyncHttpClient.request", _async),
    )
)
