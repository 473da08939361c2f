"""Serving a flight record: every request gets the recorded response, with its chunks and timing.

The body goes out as the app read it (decoded: no ``Content-Encoding``), one write per
recorded chunk, each after the gap the record shows before it; a streamed body comes
chunked, a whole one with its length. A body the HTTP client saw break (``end ==
"error"``) is cut after its last recorded byte, with no end of body, so the client breaks
on it again.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from types import TracebackType
from typing import Final, Self

from .._core.flight import FlightRecord
from ._faults import Delivery
from ._render import Rendered
from ._server import SimServer

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


class RecordServer:
    """A loopback HTTP server (the simulator's) that serves one flight record.

    ``timing=False`` sends the chunks without the recorded waits (same bytes, same
    boundaries as far as the network keeps them).
    """

    def __init__(self, record: FlightRecord, *, port: int = 0, timing: bool = True) -> None:
        self._answers = _Recorded(record, timing=timing)
        self._port = port
        self._server: SimServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def served(self) -> int:
        """Requests answered so far."""
        return self._answers.served

    def start(self) -> Self:
        """Bind ``127.0.0.1`` (an ephemeral port unless ``port``) and serve in a daemon thread."""
        if self._server is not None:
            raise RuntimeError("record server already started")
        self._server = SimServer(self._port, self._answers)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="tooltap-record-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and join the threads."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is not None:
            server.stop()
        if thread is not None:
            thread.join()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        if self._server is None:
            raise RuntimeError("record server not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"
