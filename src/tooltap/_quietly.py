"""The one choke point for tooltap's own failures: caught, logged at debug, counted.

Everything tooltap does on the app's path runs through ``quietly`` (or, on the
per-chunk path and the httpx tap's per-request entry, an inline ``try`` that calls
``report``). The app's own exceptions never come here: wrappers call the app's code
outside these guards and re-raise with a bare ``raise``.

This module imports nothing from tooltap, so every layer may use it; the telemetry
layer plugs its ``tooltap.internal_errors`` counter in with ``set_error_sink``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar, overload

__all__ = ["quietly", "report", "set_error_sink"]

_log = logging.getLogger("tooltap")
_T = TypeVar("_T")
_D = TypeVar("_D")

_sink: Callable[[str], None] | None = None


def set_error_sink(sink: Callable[[str], None] | None) -> None:
    """Install (or remove, with None) the counter called with each failing component."""
    global _sink
    _sink = sink


def report(exc: BaseException, component: str) -> None:
    """Log ``exc`` at debug with its traceback and count it; never raises."""
    try:
        _log.debug("tooltap: internal error in %s (contained)", component, exc_info=exc)
        sink = _sink
        if sink is not None:
            sink(component)
    except Exception:  # noqa: BLE001, S110 - the choke point itself must not fail
        pass


def _component(fn: Callable[..., Any]) -> str:
    module = getattr(fn, "__module__", None) or "unknown"
    return module.rsplit(".", 1)[-1]


@overload
def quietly(
    fn: Callable[..., _T], /, *args: Any, default: None = None, **kwargs: Any
) -> _T | None: ...
@overload
def quietly(fn: Callable[..., _T], /, *args: Any, default: _D, **kwargs: Any) -> _T | _D: ...
def quietly(fn: Callable[..., Any], /, *args: Any, default: Any = None, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, or ``default`` if it raised (reported, never propagated)."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - see the module docstring
        report(exc, _component(fn))
        return default
