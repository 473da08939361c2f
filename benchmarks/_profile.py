"""Where tooltap's added time goes: one case under cProfile, bare vs instrumented.

cProfile inflates every Python call, so the absolute figures are larger than the
benchmark's; the split between components is what this is for. Each function's own
time (``tottime``) is charged to the package that defines it, and tooltap's to the stage
its module belongs to; a C builtin's or the standard library's to the component of the
function that called it (one level up); the table shows, per component, the time added
by instrumenting (instrumented minus bare).
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

#: (needles, component): a function's file is charged to the first component one of whose
#: needles it contains. tooltap's own code is split by stage.
_COMPONENTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("tooltap/_core/request.py", "_request.py"), "tooltap: request parse (history, tools)"),
    (("tooltap/_core/validate.py", "tooltap/_core/_schema_check.py"), "tooltap: validation"),
    (("tooltap/_core/",), "tooltap: response parse"),
    (
        tuple(
            f"tooltap/_telemetry/{m}.py"
            for m in ("lifecycle", "correlate", "callids", "conversation", "calls")
        ),
        "tooltap: call lifecycle, correlation",
    ),
    (("tooltap/_telemetry/",), "tooltap: spans, metrics, attributes"),
    (("tooltap/",), "tooltap: wrappers, taps"),
    (("opentelemetry/",), "OpenTelemetry SDK"),
    (("jsonschema/", "referencing/"), "jsonschema"),
    (("wrapt/",), "wrapt"),
    (("httpx2/", "httpcore", "h11/"), "httpx2 / httpcore / h11"),
    (("openai/", "anthropic/", "google/", "pydantic"), "SDK"),
)


def _component(filename: str, name: str) -> str:
    for needles, component in _COMPONENTS:
        if any(needle in filename for needle in needles):
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
    for (filename, _, name), (_, _, tottime, _, callers) in stats.items():
        component = _component(filename, name)
        if component.startswith(("C builtins", "other Python")) and callers:
            # a builtin or stdlib function is charged to the components of its callers
            for (caller_file, _, caller_name), entry in callers.items():
                caller = _component(caller_file, caller_name)
                out[component if caller.startswith("C builtins") else caller] += entry[2] / reps
            continue
        out[component] += tottime / reps
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
