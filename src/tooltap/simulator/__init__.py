"""A loopback provider simulator that speaks OpenAI, Anthropic, Google and Bedrock on the wire.

The real ``openai``, ``anthropic``, ``google-genai`` and ``boto3`` SDKs work against it
unmodified::

    from tooltap.simulator import Fault, Simulator

    with Simulator() as sim:
        client = openai.OpenAI(base_url=sim.openai_base_url, api_key="sk-test")
        sim.inject(Fault("rate_limit", retry_after=0.1), dialect="openai.chat")

It plays a scripted tool-calling conversation (default: two parallel
``lookup_demo_value`` calls, then a final answer quoting their results) and injects
faults on demand: queued with :meth:`Simulator.inject`, or per request with the
``x-tooltap-sim-fault: kind;param=value`` header. Standard library only.
"""

from __future__ import annotations

from typing import Any

from ._engine import Engine, RecordedRequest
from ._faults import FAULT_HEADER, FAULT_KINDS, Fault
from ._replay import RecordServer
from ._scenario import ID_MODES, LOOKUP_CALLS, Scenario
from ._server import Served

__all__ = [
    "FAULT_HEADER",
    "FAULT_KINDS",
    "ID_MODES",
    "LOOKUP_CALLS",
    "Fault",
    "RecordServer",
    "RecordedRequest",
    "Simulator",
]


class Simulator(Served):
    """A provider simulator on ``127.0.0.1``, served from a background thread."""

    def __init__(
        self,
        *,
        calls: list[tuple[str, dict[str, Any]]] | None = None,
        final_text: str | None = None,
        fragment: int = 8,
        seed: int = 0,
        port: int = 0,
        ids: str = "unique",
    ) -> None:
        """``ids``: how the model spells call ids, one of ``ID_MODES``."""
        self._engine = Engine(Scenario(calls, final_text, seed, ids), fragment)
        super().__init__(self._engine, port=port, what="simulator")

    @property
    def openai_base_url(self) -> str:
        """``base_url`` for ``openai.OpenAI``: the URL plus ``/v1``."""
        return self.url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        """``base_url`` for ``anthropic.Anthropic``."""
        return self.url

    @property
    def google_base_url(self) -> str:
        """``HttpOptions(base_url=...)`` for ``google.genai.Client``."""
        return self.url

    @property
    def bedrock_endpoint_url(self) -> str:
        """``endpoint_url`` for ``boto3.client("bedrock-runtime")``."""
        return self.url

    @property
    def ollama_host(self) -> str:
        """``host`` for ``ollama.Client``."""
        return self.url

    @property
    def cohere_base_url(self) -> str:
        """``base_url`` for ``cohere.ClientV2``."""
        return self.url

    def inject(self, fault: Fault, *, dialect: str | None = None, times: int = 1) -> None:
        """Queue ``fault`` for the next ``times`` requests of ``dialect`` (None: any)."""
        self._engine.faults.put(fault, dialect, times)

    @property
    def requests(self) -> list[RecordedRequest]:
        """The requests received so far, oldest first (a copy)."""
        return self._engine.requests

    def reset(self) -> None:
        """Clear queued faults, recorded requests and conversation state."""
        self._engine.reset()
