"""Start Arize Phoenix (``phoenix serve``) with its gRPC listener on 127.0.0.1 only.

Run with the interpreter of ``.tools/phoenix-venv``. Phoenix binds OTLP/gRPC to ``[::]``
with no setting to change it; this rewrites that one address before serving. The HTTP
side follows ``PHOENIX_HOST``; ports and data dir come from ``PHOENIX_*`` env.
"""

from __future__ import annotations

import sys

from grpc.aio import _server
from phoenix.server.main import main

_add_insecure_port = _server.Server.add_insecure_port


def _loopback_only(self: _server.Server, address: str) -> int:
    if address.startswith("[::]:"):
        address = "127.0.0.1:" + address[len("[::]:") :]
    return _add_insecure_port(self, address)


_server.Server.add_insecure_port = _loopback_only  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.argv = ["phoenix", "serve"]
    sys.exit(main())
