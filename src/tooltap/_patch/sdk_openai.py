"""openai: one operation per Chat Completions / Responses call, all retries included.

The logical call is ``SyncAPIClient.request`` / ``AsyncAPIClient.request`` in
``openai._base_client`` (openai 3.x): it holds the retry loop (sending
``x-stainless-retry-count`` on each attempt), and every public path funnels into
it: ``chat.completions.create`` and ``.parse`` (which posts directly, not through
``create``), ``.stream`` (whose manager calls ``create`` on ``__enter__``, outside
the helper), ``responses.create/parse/stream``, ``with_raw_response`` and
``with_streaming_response``. Wrapping the resource methods instead would miss the
stream managers' deferred requests and raw-response wrappers built earlier.
Only POSTs to ``/chat/completions`` and ``/responses`` are observed.
"""

from __future__ import annotations

from typing import Any

from .._telemetry.telemetry import Telemetry
from .sdk_common import Call, Patch, PatchSet, arg, describe_body, wrappers

__all__ = ["PATCHES", "install", "uninstall"]


def _describe(instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Call | None:
    # request(self, cast_to, options, *, stream=False, stream_cls=None)
    options = arg(args, kwargs, 1, "options")
    return describe_body(
        str(options.method), str(options.url), options.json_data, instance.base_url
    )


_sync, _async = wrappers(_describe)

PATCHES = PatchSet(
    (
        Patch("openai._base_client", "SyncAPIClient.request", _sync),
        Patch("openai._base_client", "AsyncAPIClient.request", _async),
    )
)


def install(tel: Telemetry) -> None:
    """Patch openai now or when it is imported (``tel`` is read per call instead)."""
    PATCHES.install()


def uninstall() -> None:
    """Remove tooltap's openai wrappers."""
    PATCHES.uninstall()
