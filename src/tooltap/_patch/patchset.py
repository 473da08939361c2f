"""Lazy patching: wrapt wrappers applied when (and if) their modules are imported."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import wrapt

from .._quietly import quietly

__all__ = ["Patch", "PatchSet"]

_log = logging.getLogger("tooltap")


@dataclass(frozen=True, slots=True)
class Patch:
    """One wrapt wrapper for ``module``'s ``target`` (``"Class.method"``); ``fallback``:
    the same funnel under the name an older major of the SDK gives it."""

    module: str
    target: str
    wrapper: Callable[..., Any]
    fallback: str | None = None


class PatchSet:
    """One SDK's patches: applied when (and if) its modules are imported, undone on demand.

    Importing tooltap imports no SDK: a post-import hook applies the patches when
    the app imports the module (at once if it already has). A target missing from
    the installed version (and its fallback) is skipped with one WARNING, never raised:
    that SDK's calls are then seen by the transport taps only.
    """

    def __init__(self, patches: Sequence[Patch]) -> None:
        self._patches = tuple(patches)
        self._handles: dict[Patch, object] = {}
        self._hooked: set[str] = set()
        self._active = False
        self._paths: dict[Patch, str] = {}  # the path each applied patch wrapped
        self._warned: set[Patch] = set()

    def install(self) -> None:
        """Patch now what is imported, and the rest when it is imported."""
        self._active = True
        for name in dict.fromkeys(p.module for p in self._patches):
            module = sys.modules.get(name)
            if module is not None:
                self._apply(module)
            if name not in self._hooked:
                self._hooked.add(name)
                wrapt.register_post_import_hook(self._apply, name)

    def uninstall(self) -> None:
        """Remove our wrappers (only ours); the import hooks stay but do nothing."""
        self._active = False
        for patch, handle in list(self._handles.items()):
            module = sys.modules.get(patch.module)
            if module is not None:
                path = self._paths.get(patch, patch.target)
                quietly(wrapt.unwrap_object, module, path, handle, missing_ok=True)
            del self._handles[patch]

    @property
    def applied(self) -> tuple[str, ...]:
        """The ``module:target`` of every patch in place (for tests and diagnostics)."""
        return tuple(f"{p.module}:{self._paths.get(p, p.target)}" for p in self._handles)

    def _apply(self, module: Any) -> None:
        if not self._active:
            return
        for patch in self._patches:
            if patch.module != module.__name__ or patch in self._handles:
                continue
            path = _resolvable(module, patch.target, patch.fallback)
            if path is None:
                if patch not in self._warned:
                    self._warned.add(patch)
                    package = sys.modules.get(module.__name__.split(".")[0])
                    version = getattr(package, "__version__", "?")
                    _log.warning(
                        "tooltap: %s.%s not found (version %s); its calls are seen by the "
                        "transport taps only",
                        patch.module,
                        patch.target,
                        version,
                    )
                continue
            handle = quietly(wrapt.wrap_function_wrapper, module, path, patch.wrapper)
            if handle is not None:
                self._handles[patch] = handle
                self._paths[patch] = path


def _resolvable(module: Any, *paths: str | None) -> str | None:
    """The first of ``paths`` that names an attribute of ``module``."""
    for path in paths:
        if path is None:
            continue
        try:
            wrapt.resolve_path(module, path)
        except (AttributeError, wrapt.PathResolutionError):
            continue
        return path
    return None
