"""Faults: what can go wrong, how a request picks one, and how it changes the delivery."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from .._forks import new_lock
from ._render import Rendered

__all__ = ["FAULT_KINDS", "Delivery", "Fault", "FaultQueue", "parse_fault_header"]

#: Every fault kind and the parameters it accepts.
FAULT_KINDS: Final[dict[str, tuple[str, ...]]] = {
    "truncate_bytes": ("at", "framing"),
    "truncate_args": (),
    "invalid_json_args": ("index",),
    "error_event": (),
    "rate_limit": ("retry_after",),
    "insufficient_balance": (),
    "server_error": ("status",),
    "overloaded": (),
    "stall": ("seconds",),
    "reset": ("at",),
    "no_ids": (),
    "ignore_tool_choice": (),
    "chunk_size": ("size",),
    "delay": ("seconds",),
    "buffered": ("seconds",),
}
_REQUIRED: Final = {
    "truncate_bytes": "at",
    "stall": "seconds",
    "chunk_size": "size",
    "delay": "seconds",
    "buffered": "seconds",
}
_FRAMINGS: Final = ("close", "chunked")

#: The header a client sets (e.g. via the SDK's ``extra_headers``) to pick faults per request.
FAULT_HEADER: Final = "x-tooltap-sim-fault"


@dataclass(frozen=True, slots=True, init=False)
class Fault:
    """One injected failure, e.g. ``Fault("rate_limit", retry_after=0.1)``."""

    kind: str
    params: dict[str, Any] = field(hash=False)

    def __init__(self, kind: str, **params: Any) -> None:
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {sorted(FAULT_KINDS)}")
        unknown = set(params) - set(FAULT_KINDS[kind])
        if unknown:
            raise ValueError(f"fault {kind!r} takes no parameter(s) {sorted(unknown)}")
        if kind in _REQUIRED and _REQUIRED[kind] not in params:
            raise ValueError(f"fault {kind!r} needs {_REQUIRED[kind]}=...")
        if params.get("framing", "close") not in _FRAMINGS:
            raise ValueError(f"framing must be one of {_FRAMINGS}")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "params", dict(params))

    def __str__(self) -> str:
        return ";".join([self.kind, *(f"{k}={v}" for k, v in self.params.items())])

    def number(self, name: str, default: float) -> float:
        """A numeric parameter."""
        return float(self.params.get(name, default))


def _value(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_fault_header(value: str) -> list[Fault]:
    """Faults from ``kind[;param=value...][, kind...]`` (ValueError when malformed)."""
    faults = []
    for spec in filter(None, (s.strip() for s in value.split(","))):
        kind, *pairs = (p.strip() for p in spec.split(";"))
        params = {}
        for pair in filter(None, pairs):
            name, sep, raw = pair.partition("=")
            if not sep:
                raise ValueError(f"fault parameter {pair!r} needs name=value")
            params[name.strip()] = _value(raw.strip())
        faults.append(Fault(kind, **params))
    return faults


class FaultQueue:
    """Injected faults, consumed in FIFO order by the requests they match."""

    def __init__(self) -> None:
        self._lock = new_lock()
        self._items: list[list[Any]] = []  # [fault, dialect, remaining]

    def put(self, fault: Fault, dialect: str | None, times: int) -> None:
        """Queue ``fault`` for the next ``times`` requests matching ``dialect``."""
        if times < 1:
            raise ValueError("times must be at least 1")
        with self._lock:
            self._items.append([fault, dialect, times])

    def take(self, dialect: str | None) -> Fault | None:
        """The first queued fault matching ``dialect`` (an exact dialect or its family prefix)."""
        with self._lock:
            for item in self._items:
                wanted = item[1]
                if wanted is None or (
                    dialect is not None and (dialect == wanted or dialect.startswith(wanted + "."))
                ):
                    item[2] -= 1
                    if item[2] == 0:
                        self._items.remove(item)
                    fault: Fault = item[0]
                    return fault
        return None

    def clear(self) -> None:
        """Drop every queued fault."""
        with self._lock:
            self._items.clear()


@dataclass(slots=True)
class Delivery:
    """How the server sends one response.

    ``framing``: ``length`` (Content-Length), ``chunked`` (one chunk per item) or ``close``
    (no length, ``Connection: close``, EOF ends the body). ``cut`` stops the body after that
    many bytes; the connection then closes cleanly, or with a TCP RST when ``reset``.
    ``reset_first`` sends an RST before anything else. ``burst`` sends the whole body in
    one write (after ``stall``, when ``stall_after`` is 0): a buffering proxy's release.
    ``gaps``: seconds to wait before each chunk (a recorded response's own timing).
    """

    rendered: Rendered
    framing: str = "length"
    delay: float = 0.0
    stall: float = 0.0
    stall_after: int = 0
    cut: int | None = None
    reset: bool = False
    reset_first: bool = False
    burst: bool = False
    gaps: list[float] | None = None

    @classmethod
    def of(cls, rendered: Rendered) -> Delivery:
        """The normal delivery: streams chunked, one write per event; bodies with a length."""
        return cls(rendered, framing="chunked" if rendered.stream else "length")

    def apply(self, fault: Fault) -> None:
        """Apply a transport-level fault (the others are handled before rendering)."""
        rendered = self.rendered
        if fault.kind == "delay":
            self.delay = fault.number("seconds", 0.0)
        elif fault.kind == "buffered":  # headers at once, then the whole body after a wait
            self.stall, self.stall_after, self.burst = fault.number("seconds", 0.0), 0, True
        elif fault.kind == "stall":
            self.stall = fault.number("seconds", 0.0)
            self.stall_after = 1 if rendered.stream else 0
        elif fault.kind == "reset":
            if "at" in fault.params:
                self.cut, self.reset = int(fault.params["at"]), True
            else:
                self.reset_first = True
        elif fault.kind == "truncate_bytes":
            self.cut = int(fault.params["at"])
            self.framing = str(fault.params.get("framing", "close"))
        elif fault.kind == "truncate_args":
            self.cut = rendered.cut if rendered.cut is not None else len(rendered.body) // 2
            self.framing = "close"
        elif fault.kind == "chunk_size":
            size = max(1, int(fault.params["size"]))
            body = rendered.body
            rendered.chunks = [body[i : i + size] for i in range(0, len(body), size)]
            self.framing = "chunked" if self.framing == "length" else self.framing
