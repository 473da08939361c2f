"""Lazy patching: wrapt wrappers applied when (and if) their modules are imported.

Every wrapper tooltap installs is declared as data, a :class:`Patch` (module, attribute
path, wrapper, the older name of the same funnel) in the :class:`PatchSet` of its patch
module; the instrumentor installs the registry of those sets (``PATCH_SETS``). As with
wrapt's deferred ``wrap_function_wrapper("module?", ...)``, nothing is imported: a
post-import hook patches each module when the app imports it (at once if it already has).
Unlike it, each wrapper can be taken out again, ours alone.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import wrapt

from .._forks import new_lock
from .._quietly import quietly

__all__ = ["Patch", "PatchSet"]

_log = logging.getLogger("tooltap")


@dataclass(frozen=True, slots=True)
class Patch:
    """One wrapt wrapper for ``module``'s ``target`` (``"Class.method"``); ``fallback``:
    the same funnel under the name an older major of the library gives it."""

    module: str
    target: str
    wrapper: Callable[..., Any]
    fallback: str | None = None


@dataclass(frozen=True, slots=True)
class _Applied:
    parent: object  # the class (or module) holding the wrapped attribute
    attribute: str
    handle: object  # the wrapt wrapper installed there
    path: str  # the target or fallback path that resolved


class PatchSet:
    """One library's patches: applied when (and if) its modules are imported, undone on demand.

    ``requirement`` is the supported range (``"openai >= 2.0, < 4"``) when the patches
    know the funnels of some versions only; the instrumentor declares it as a dependency
    (outside the range: a WARNING). A target missing from the installed version (and its
    fallback) is skipped with one WARNING naming it, never raised: that library's calls
    are then seen by the transport taps only. A target reached twice (a module aliasing
    another's classes, as ``httpx2.alias_httpx`` does) is wrapped once.
    """

    def __init__(self, patches: Sequence[Patch], requirement: str | None = None) -> None:
        self.patches = tuple(patches)
        self.requirement = requirement
        self._lock = new_lock()
        self._applied: dict[Patch, _Applied] = {}
        self._hooked: set[str] = set()
        self._active = False
        self._warned: set[Patch] = set()

    def install(self) -> None:
        """Patch now what is imported, and the rest when it is imported."""
        with self._lock:
            self._active = True
            names = list(dict.fromkeys(p.module for p in self.patches))
            hooks = [n for n in names if n not in self._hooked]
            self._hooked.update(hooks)
        for name in hooks:
            wrapt.register_post_import_hook(self._on_import, name)
        for name in names:
            module = sys.modules.get(name)
            if module is not None:
                self._apply(module)

    def uninstall(self) -> None:
        """Remove our wrappers (only ours); the import hooks stay but do nothing."""
        with self._lock:
            self._active = False
            applied, self._applied = list(self._applied.values()), {}
        for one in applied:
            quietly(wrapt.unwrap_object, one.parent, one.attribute, one.handle, missing_ok=True)

    @property
    def any_applied(self) -> bool:
        """Whether any patch is in place (what ``applied`` lists, without listing it)."""
        return bool(self._applied)

    @property
    def applied(self) -> tuple[str, ...]:
        """The ``module:target`` of every patch in place (for tests and diagnostics)."""
        return tuple(f"{p.module}:{a.path}" for p, a in list(self._applied.items()))

    def _on_import(self, module: Any) -> None:
        quietly(self._apply, module)

    def _apply(self, module: Any) -> None:
        with self._lock:
            if not self._active:
                return
            for patch in self.patches:
                if patch.module == module.__name__ and patch not in self._applied:
                    self._apply_one(module, patch)

    def _apply_one(self, module: Any, patch: Patch) -> None:
        resolved = _resolve(module, patch.target, patch.fallback)
        if resolved is None:
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
            return
        path, parent, attribute = resolved
        if any(a.parent is parent and a.attribute == attribute for a in self._applied.values()):
            return  # the same attribute reached through an alias
        handle = quietly(wrapt.wrap_function_wrapper, module, path, patch.wrapper)
        if handle is not None:
            self._applied[patch] = _Applied(parent, attribute, handle, path)


def _resolve(module: Any, *paths: str | None) -> tuple[str, object, str] | None:
    """The first of ``paths`` that names an attribute of ``module``, with its owner."""
    for path in paths:
        if path is None:
            continue
        try:
            parent, attribute, _ = wrapt.resolve_path(module, path)
        except (AttributeError, wrapt.PathResolutionError):
            continue
        return path, parent, attribute
    return None
