"""Where tooltap's added time goes: one case under cProfile, bare vs instrumented.

cProfile inflates every Python call, so the absolute figures are larger than the
benchmark's; the split between components is what this is for. Each function's own
time (``tottime``) is charged to the package that defines it; the table shows, per
component, the time added by instrumenting (instrumented minus bare).
"""

from __future__ import annotations

import cProfile
import gc
import pstats
import time
from collections import Counter
from typing import Any

from ._cases import Case, close_client
from ._otel import Toggle

__all__ = ["profile_case"]

_COMPONENTS = (
    ("tooltap/_core/", "tooltap core (parsing, validation)"),
    ("tooltap/_patch/", "tooltap patch (wrappers, taps)"),
    ("tooltap/_telemetry/", "tooltap telemetry (spans, metrics, lifecycle)"),
    ("opentelemetry/", "OpenTelemetry SDK"),
    ("jsonschema/", "jsonschema"),
    ("referencing/", "jsonschema"),
    ("wrapt/", "wrapt"),
    ("httpx2/", "httpx2 / httpcore / h11"),
    ("httpcore", "httpx2 / httpcore / h11"),
    ("h11/", "httpx2 / httpcore / h11"),
    ("openai/", "SDK"),
    ("anthropic/", "SDK"),
    ("google/", "SDK"),
    ("pydantic", "SDK"),
)


def _component(filename: str, name: str) -> str:
    for needle, component in _COMPONENTS:
        if needle in filename:
            return component
    if filename == "~":
        return (
            f"C builtins ({name.split(' of ')[0].strip('<>')})" if "jiter" in name else "C builtins"
        )
    return "other Python"


def _times(case: Case, client: Any, reps: int) -> Counter[str]:
    profiler = cProfile.Profile(time.process_time)
    gc.collect()
    profiler.enable()
    for _ in range(reps):
        case.run(client)
    profiler.disable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    out: Counter[str] = Counter()
    for (filename, _, name), (_, _, tottime, _, _) in stats.items():
        out[_component(filename, name)] += tottime / reps
    return out


def profile_case(case: Case, url: str, toggle: Toggle, reps: int) -> dict[str, Any]:
    """Seconds per request by component, bare and instrumented, and the difference."""
    client = case.make(url)
    toggle.bare()
    case.run(client)
    bare = _times(case, client, reps)
    toggle.instrumented()
    case.run(client)
    instrumented = _times(case, client, reps)
    toggle.bare()
    close_client(case, client)
    added = {k: instrumented[k] - bare[k] for k in set(bare) | set(instrumented)}
    rows = sorted(added.items(), key=lambda kv: -kv[1])
    return {
        "case": case.name,
        "bare_ms": sum(bare.values()) * 1e3,
        "tooltap_ms": sum(instrumented.values()) * 1e3,
        "added_ms_by_component": [{"component": k, "ms": v * 1e3} for k, v in rows],
    }
