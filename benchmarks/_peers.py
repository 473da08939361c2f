"""The peer instrumentations, measured in the same rounds as tooltap.

A peer is one project's instrumentors for the three SDKs (OpenTelemetry contrib,
OpenLLMetry, OpenInference), run either in its default content mode or, where that
default records prompts and completions, also with content off (tooltap's default: no
content without opt-in). ``Peers.on(peer)`` instruments all of a peer's installed
instrumentors over the given providers, ``off()`` uninstruments them and removes any
wrapper that uninstrument left on an SDK. Which peer covers which case is found by running
it: a peer whose instrumentors export no span for a case reads "not supported" for it, with
the reason. The instrumentors come from the ``peers`` extra (``scripts/bench``).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

__all__ = ["PEERS", "Peer", "Peers", "sdk_of"]

#: The SDK a dialect's cases go through.
_SDK = {
    "openai.chat": "openai",
    "openai.responses": "openai",
    "anthropic.messages": "anthropic",
    "google.genai": "google-genai",
}
#: Module prefixes of the SDKs whose attributes a peer may wrap.
_SDK_MODULES = ("openai.", "anthropic.", "google.genai.")


def sdk_of(dialect: str) -> str | None:
    """The SDK family of a dialect's cases (None for traffic no peer instruments)."""
    return _SDK.get(dialect)


@dataclass(frozen=True)
class Instrumentor:
    """One peer instrumentor: its distribution and ``module:Class``."""

    sdk: str
    distribution: str
    target: str


@dataclass(frozen=True)
class Peer:
    """A project's instrumentors in one content mode."""

    name: str
    instrumentors: tuple[Instrumentor, ...]
    #: Environment set while instrumented (the content switch, where it is one).
    env: dict[str, str] = field(default_factory=dict)
    #: Extra ``instrument()`` keyword arguments (the content switch, where it is one).
    kwargs: Callable[[], dict[str, Any]] = dict
    #: SDKs the project has no usable instrumentor for here, with the reason.
    gaps: dict[str, str] = field(default_factory=dict)


def _hidden() -> dict[str, Any]:
    from openinference.instrumentation import TraceConfig

    return {"config": TraceConfig(hide_inputs=True, hide_outputs=True)}


_CONTRIB = (
    Instrumentor(
        "openai",
        "opentelemetry-instrumentation-openai-v2",
        "opentelemetry.instrumentation.openai_v2:OpenAIInstrumentor",
    ),
)
_CONTRIB_GAPS = {
    "anthropic": "OpenTelemetry contrib publishes no anthropic instrumentation",
    "google-genai": (
        "opentelemetry-instrumentation-google-genai declares google-genai < 3, and its "
        "releases that import need opentelemetry-util-genai >= 1, which openai-v2 "
        "(2.4b0, the newest) cannot import: one environment holds only one of the two"
    ),
}
_OPENLLMETRY = (
    Instrumentor(
        "openai",
        "opentelemetry-instrumentation-openai",
        "opentelemetry.instrumentation.openai:OpenAIInstrumentor",
    ),
    Instrumentor(
        "anthropic",
        "opentelemetry-instrumentation-anthropic",
        "opentelemetry.instrumentation.anthropic:AnthropicInstrumentor",
    ),
    Instrumentor(
        "google-genai",
        "opentelemetry-instrumentation-google-generativeai",
        "opentelemetry.instrumentation.google_generativeai:GoogleGenerativeAiInstrumentor",
    ),
)
_OPENINFERENCE = (
    Instrumentor(
        "openai",
        "openinference-instrumentation-openai",
        "openinference.instrumentation.openai:OpenAIInstrumentor",
    ),
    Instrumentor(
        "anthropic",
        "openinference-instrumentation-anthropic",
        "openinference.instrumentation.anthropic:AnthropicInstrumentor",
    ),
    Instrumentor(
        "google-genai",
        "openinference-instrumentation-google-genai",
        "openinference.instrumentation.google_genai:GoogleGenAIInstrumentor",
    ),
)

#: Every peer mode the benchmark runs. OpenTelemetry contrib records no content by
#: default; OpenLLMetry and OpenInference do, so they also run with it off.
PEERS: tuple[Peer, ...] = (
    Peer("OpenTelemetry contrib", _CONTRIB, gaps=_CONTRIB_GAPS),
    Peer("OpenLLMetry", _OPENLLMETRY),
    Peer("OpenLLMetry, content off", _OPENLLMETRY, env={"TRACELOOP_TRACE_CONTENT": "false"}),
    Peer("OpenInference", _OPENINFERENCE),
    Peer("OpenInference, content off", _OPENINFERENCE, kwargs=_hidden),
)


def _load(inst: Instrumentor) -> Any:
    module, name = inst.target.split(":")
    return getattr(importlib.import_module(module), name)


class Peers:
    """The installed peers, toggled one at a time over the benchmark's providers."""

    def __init__(self, tracer_provider: Any, meter_provider: Any) -> None:
        self._providers = {"tracer_provider": tracer_provider, "meter_provider": meter_provider}
        self._classes: dict[str, Any] = {}
        #: distribution -> version, for each instrumentor that imports.
        self.versions: dict[str, str] = {}
        #: distribution -> why it cannot be used.
        self.missing: dict[str, str] = {}
        for peer in PEERS:
            for inst in peer.instrumentors:
                if inst.target in self._classes or inst.distribution in self.missing:
                    continue
                try:
                    self._classes[inst.target] = _load(inst)
                    self.versions[inst.distribution] = metadata.version(inst.distribution)
                except ImportError as exc:
                    self.missing[inst.distribution] = f"not installed ({exc.name})"
        self.active: Peer | None = None
        #: peer name -> the wrappers its ``uninstrument()`` left (``off()`` removes them).
        self.leftovers: dict[str, list[str]] = {}
        #: peer name -> (owner, attribute) of what it wraps: where ``off()`` looks.
        self._sites: dict[str, list[tuple[Any, str]]] = {}
        self._saved_env: dict[str, str | None] = {}

    @property
    def installed(self) -> tuple[Peer, ...]:
        """The peers with at least one instrumentor that imports."""
        return tuple(p for p in PEERS if any(i.target in self._classes for i in p.instrumentors))

    def gap(self, peer: Peer, sdk: str) -> str | None:
        """Why ``peer`` cannot instrument ``sdk`` here (None: it has an instrumentor)."""
        if sdk in peer.gaps:
            return peer.gaps[sdk]
        for inst in peer.instrumentors:
            if inst.sdk == sdk:
                if inst.target in self._classes:
                    return None
                return f"{inst.distribution} {self.missing[inst.distribution]}"
        return "no instrumentor for this SDK"

    def on(self, peer: Peer) -> None:
        """Instrument ``peer``'s installed instrumentors (after turning any other off)."""
        if self.active is peer:
            return
        self.off()
        self._saved_env = {key: os.environ.get(key) for key in peer.env}
        os.environ.update(peer.env)
        for inst in peer.instrumentors:
            cls = self._classes.get(inst.target)
            if cls is not None:
                cls().instrument(**self._providers, **peer.kwargs())
        self.active = peer
        if peer.name not in self._sites:
            self._sites[peer.name] = [(o, a) for o, a, _ in _proxies()]

    def off(self) -> None:
        """Uninstrument the active peer, and remove any wrapper its ``uninstrument()``
        left where its ``instrument()`` put one (recorded in ``leftovers``)."""
        peer, self.active = self.active, None
        if peer is None:
            return
        for inst in peer.instrumentors:
            cls = self._classes.get(inst.target)
            if cls is not None:
                cls().uninstrument()
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        left = []
        for owner, attr in self._sites[peer.name]:  # where its instrument() put wrappers
            value = vars(owner).get(attr)
            if _is_proxy(value):  # its uninstrument() missed it: unwrap, so bare is bare
                left.append(_dotted(owner, attr))
                while _is_proxy(value):
                    value = value.__wrapped__
                setattr(owner, attr, value)
        if left:
            self.leftovers[peer.name] = sorted({*self.leftovers.get(peer.name, ()), *left})


def _is_proxy(value: object) -> bool:
    import wrapt

    return issubclass(type(value), getattr(wrapt, "BaseObjectProxy", wrapt.ObjectProxy))


def _proxies() -> list[tuple[Any, str, Any]]:
    """(owner, attribute, proxy) for every wrapt proxy on an imported SDK module or on a
    class defined in one (a walk of some 10,000 classes: a fraction of a second)."""
    found: list[tuple[Any, str, Any]] = []
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(_SDK_MODULES):
            continue
        for attr, value in list(vars(module).items()):
            if _is_proxy(value):
                found.append((module, attr, value))
            elif isinstance(value, type) and value.__module__ == name:
                found += [(value, a, v) for a, v in vars(value).items() if _is_proxy(v)]
    return found


def _dotted(owner: Any, attr: str) -> str:
    prefix = f"{owner.__module__}.{owner.__qualname__}" if isinstance(owner, type) else ""
    return f"{prefix or owner.__name__}.{attr}"
