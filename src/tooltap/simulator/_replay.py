"""Serving a flight record: every request gets the recorded response, with its chunks and timing.

The body goes out as the app read it (decoded: no ``Content-Encoding``), one write per
recorded chunk, each after the gap the record shows before it; a streamed body comes
chunked, a whole one with its length. A body the HTTP client saw break (``end ==
"error"``) is cut after its last recorded byte, with no end of body, so the client breaks
on it again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from .._core.flight import FlightRecord
from ._faults import Delivery
from ._render import Rendered
from ._server import Served

__all__ = ["RecordServer"]

#: Framing headers the server sets itself; the body is served decoded.
_FRAMING: Final = frozenset(
    {"content-length", "transfer-encoding", "content-encoding", "connection"}
)


class _Recorded:
    """Answers every request with the record's response."""

    def __init__(self, record: FlightRecord, *, timing: bool) -> None:
        self.record = record
        self.timing = timing
        self.served = 0

    def handle(
        self, method: str, path: str, query: str, headers: Mapping[str, str], body: bytes
    ) -> Delivery:
        record = self.record
        self.served += 1
        head = [(k, v) for k, v in record.headers if k not in _FRAMING]
        chunks = [c.data for c in record.chunks if c.data] or [b""]
        streamed = record.mode == "sse" or len(chunks) > 1
        delivery = Delivery(
            Rendered(record.status, head, chunks, stream=streamed),
            framing="chunked" if streamed or record.end == "error" else "length",
        )
        if self.timing:
            sent = record.timing.get("sent")
            delivery.delay = max(0.0, float(sent)) if sent is not None else 0.0
            ats = [c.at for c in record.chunks if c.data]
            delivery.gaps = [max(0.0, b - a) for a, b in zip([0.0, *ats], ats, strict=False)]
        if record.end == "error":
            delivery.cut = len(record.body)
        return delivery


class RecordServer(Served):
    """A loopback HTTP server (the simulator's) that serves one flight record.

    ``timing=False`` sends the chunks without the recorded waits (same bytes, same
    boundaries as far as the network keeps them).
    """

    def __init__(self, record: FlightRecord, *, port: int = 0, timing: bool = True) -> None:
        self._recorded = _Recorded(record, timing=timing)
        super().__init__(self._recorded, port=port, what="record server")

    @property
    def served(self) -> int:
        """Requests answered so far."""
        return self._recorded.served
