"""Tiny loopback HTTP servers for core tests: what real SDKs send, and what the core fetches."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


class QuietHandler(BaseHTTPRequestHandler):
    """A handler that logs nothing."""

    def log_message(self, *args: Any) -> None:
        pass

    def reply(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1 in a thread; yields the base URL; stops on exit."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


@pytest.fixture
def capture() -> Iterator[tuple[str, list[bytes]]]:
    """Keeps each POSTed body and answers 400, so the SDK call fails after sending."""
    bodies: list[bytes] = []

    class Handler(QuietHandler):
        def do_POST(self) -> None:
            bodies.append(self.rfile.read(int(self.headers.get("content-length") or 0)))
            self.reply(400, b"{}")

    with serving(Handler) as url:
        yield url, bodies


def sent(bodies: list[bytes], call: Callable[[], Any]) -> bytes:
    """The one body ``call`` sent to the capture server."""
    with pytest.raises(Exception):  # noqa: B017 - the loopback answers 400 on purpose
        call()
    assert len(bodies) == 1
    return bodies.pop()
