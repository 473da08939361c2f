"""The private details of httpx/httpx2 the transport tap relies on, in one place.

The tap reads a response's body the way the client does, which takes four details no
public API gives:

* ``Response._get_content_decoder()``: the decoder the client will use for this body;
* ``Response._decoder``: where the client keeps it (the tap puts its wrapper there);
* ``Response._content``: set once the body has been read;
* ``Response.stream``: the byte stream the client reads the body from;

plus the name ``IdentityDecoder`` of the decoder of a body sent as it is. ``check`` tries
them once per library (the first time it answers), on a response of its own. A missing one (a rename
in a new version) is one WARNING naming it and one ``tooltap.internal_errors`` count
(``tooltap.component=httpx_compat``); the tap then records what it still can (the
request, and bodies it is not kept from reading), never raising.
"""

from __future__ import annotations

import logging
from types import ModuleType
from typing import Any, Final

from .._quietly import report

__all__ = ["DETAILS", "body_read", "check", "content_decoder", "decodes", "replace_decoder"]

_log = logging.getLogger("tooltap")

#: The details, as the warning names them.
DETAILS: Final = (
    "Response._get_content_decoder",
    "Response._decoder",
    "Response._content",
    "Response.stream",
    "IdentityDecoder",
)
_IDENTITY: Final = "IdentityDecoder"


def content_decoder(response: Any) -> Any:
    """The decoder the client will use for ``response``'s body (cached by the client)."""
    return response._get_content_decoder()


def decodes(decoder: Any) -> bool:
    """Whether ``decoder`` changes the bytes (the body has a content encoding)."""
    return type(decoder).__name__ != _IDENTITY


def replace_decoder(response: Any, decoder: Any) -> None:
    """Make ``decoder`` the one the client uses for ``response``."""
    response._decoder = decoder


def body_read(response: Any) -> bool:
    """Whether ``response``'s body was read already (not streamed)."""
    return hasattr(response, "_content")


def _missing(module: ModuleType) -> list[str]:
    """The details ``module`` lacks; when its ``Response`` cannot be built to check them,
    the accessor if it is gone (building reads the body through it), else all of them."""
    response_class = getattr(module, "Response", None)
    missing = [] if hasattr(response_class, "_get_content_decoder") else [DETAILS[0]]
    try:
        response = response_class(200, content=b"")  # type: ignore[misc]
    except Exception:  # noqa: BLE001 - a Response that no longer builds this way
        return missing or list(DETAILS)
    if not missing:
        try:
            decoder = content_decoder(response)
        except Exception:  # noqa: BLE001
            missing.append(DETAILS[0])
        else:
            if not hasattr(response, "_decoder"):
                missing.append(DETAILS[1])
            if decodes(decoder):
                missing.append(DETAILS[4])
    if not body_read(response):
        missing.append(DETAILS[2])
    if not hasattr(response, "stream"):
        missing.append(DETAILS[3])
    return missing


def check(module: ModuleType) -> list[str]:
    """Check ``module``'s details once it is patched; warn and count what is missing."""
    missing = _missing(module)
    if missing:
        version = getattr(module, "__version__", "?")
        names = ", ".join(f"{module.__name__}.{name}" for name in missing)
        _log.warning(
            "tooltap: %s not found (%s %s); the transport tap relies on it, so response "
            "bodies of this client may go unparsed",
            names,
            module.__name__,
            version,
        )
        report(AttributeError(names), "httpx_compat")
    return missing
