"""What an OTLP exporter's failure means, said once, naming the fix.

An exporter that speaks the wrong protocol, or sends a signal the backend does not take,
logs a raw error on every batch: gRPC to an HTTP server (Phoenix on 6006, a collector's
4318) is ``Failed parsing HTTP/2 (... got frame type 80)``; metrics to Phoenix, which
takes traces only, are ``Failed to export metrics batch code: 405``. A filter on the
exporters' loggers (it never drops their records) adds one tooltap WARNING per cause.
"""

from __future__ import annotations

import logging
from typing import Final

from .._quietly import quietly

__all__ = ["GRPC_TO_HTTP", "METRICS_REFUSED", "install"]

_log = logging.getLogger("tooltap")

GRPC_TO_HTTP: Final = (
    "tooltap: the OTLP exporter speaks gRPC (the launcher's default protocol) but the "
    "endpoint answers HTTP/1.1: an HTTP OTLP receiver (Phoenix on 6006, port 4318). Set "
    "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf, or use the endpoint's gRPC port (4317)"
)
METRICS_REFUSED: Final = (
    "tooltap: the OTLP endpoint refuses metrics (HTTP 405; Phoenix takes traces only). "
    "Set OTEL_METRICS_EXPORTER=none, or OTEL_EXPORTER_OTLP_METRICS_ENDPOINT to a backend "
    "that takes metrics"
)
#: The loggers of the gRPC exporters and of the HTTP metric exporter.
_LOGGERS: Final = (
    "opentelemetry.exporter.otlp.proto.grpc.exporter",
    "opentelemetry.exporter.otlp.proto.http.metric_exporter",
)
_GRPC_SIGNS: Final = ("Failed parsing HTTP/2", "http1.x server")


def _hint(record: logging.LogRecord) -> str | None:
    if record.name == _LOGGERS[0]:
        message = record.getMessage()
        return GRPC_TO_HTTP if any(sign in message for sign in _GRPC_SIGNS) else None
    args = record.args
    if isinstance(args, tuple) and len(args) >= 2 and args[0] == "metrics":
        return METRICS_REFUSED if str(args[1]) == "405" else None
    return None


class _Hints(logging.Filter):
    """Lets every record through; the first of each known cause adds tooltap's hint."""

    def __init__(self) -> None:
        super().__init__()
        self.said: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        quietly(self._say, record)
        return True

    def _say(self, record: logging.LogRecord) -> None:
        hint = _hint(record)
        if hint is not None and hint not in self.said:
            self.said.add(hint)
            _log.warning("%s", hint)


_filter = _Hints()


def install() -> None:
    """Watch the exporters' loggers (idempotent; each hint at most once per process)."""
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        if _filter not in logger.filters:
            logger.addFilter(_filter)
