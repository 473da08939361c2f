"""The one choke point for tooltap's own failures: caught, logged at debug, counted.

Everything tooltap does on the app's path runs through ``quietly`` (or, on the
per-chunk path and the httpx tap's per-request entry, an inline ``try`` that calls
``report``). The app's own exceptions never come here: wrappers call the app's code
outside these guards and re-raise with a bare ``raise``.

This module imports nothing from tooltap, so every layer may use it; the telemetry
layer plugs its ``tooltap.internal_errors`` counter in with ``set_error_sink``.

Work the garbage collector sets off (a body's finalizer, a generator it closes) runs
inside whatever code allocated at that moment, perhaps holding a lock of the
OpenTelemetry SDK (a histogram creating its aggregation) or of tooltap: recording there
would wait on that lock forever. ``after_collection`` keeps such work, ``run_deferred`` runs it
at a safe point: the next operation tooltap starts, ``flush``, and interpreter exit.
"""

from __future__ import annotations

import atexit
import gc
import logging
import os
from collections import deque
from collections.abc import Callable
from threading import get_ident
from typing import Any, TypeVar, overload

__all__ = ["after_collection", "quietly", "report", "run_deferred", "set_error_sink"]

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


#: The thread running a garbage collection now, else None (``gc.callbacks``).
_collector: int | None = None
#: What collections deferred: (function, arguments), run by ``run_deferred``.
_deferred: deque[tuple[Callable[..., Any], tuple[Any, ...]]] = deque()


def _on_collection(phase: str, info: dict[str, Any]) -> None:
    global _collector
    _collector = get_ident() if phase == "start" else None


def after_collection(fn: Callable[..., Any], /, *args: Any) -> bool:
    """Inside a garbage collection run by this thread, keep ``fn(*args)`` for
    ``run_deferred`` and return True; else False (the caller goes on now)."""
    if _collector is None or _collector != get_ident():
        return False
    _deferred.append((fn, args))  # deque.append takes no lock: safe in a collection
    return True


def run_deferred() -> None:
    """Run what collections deferred (cheap when nothing is waiting)."""
    while _deferred:
        try:
            fn, args = _deferred.popleft()
        except IndexError:  # another thread took the last one
            return
        quietly(fn, *args)


gc.callbacks.append(_on_collection)
atexit.register(run_deferred)
os.register_at_fork(after_in_child=_deferred.clear)  # the parent's bodies are the parent's
