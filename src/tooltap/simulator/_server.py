"""The loopback HTTP/1.1 server: stdlib ``http.server``, one thread per connection.

It writes each response exactly as planned by a Delivery: Content-Length, chunked (one
write per event) or close-delimited framing, with stalls, cuts and TCP resets.
"""

from __future__ import annotations

import contextlib
import http
import socket
import struct
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Protocol, Self
from urllib.parse import urlsplit

from .._forks import new_lock
from ._faults import Delivery
from ._render import json_response

__all__ = ["Answers", "Served", "SimServer"]

_JOIN_TIMEOUT = 5.0


def _reason(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Overloaded" if status == 529 else "Unknown"


class Answers(Protocol):
    """What plans the server's responses (the simulator's ``Engine``, a recorded response)."""

    def handle(
        self, method: str, path: str, query: str, headers: Mapping[str, str], body: bytes
    ) -> Delivery: ...


class _Aborted(Exception):
    """The server is stopping: drop the connection."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: SimServer

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: the simulator never writes to stderr."""

    def do_POST(self) -> None:
        """Every method is answered by the engine (unknown paths get a 404)."""
        body = self._read_body()
        url = urlsplit(self.path)
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            delivery = self.server.engine.handle(self.command, url.path, url.query, headers, body)
        except Exception as exc:  # noqa: BLE001 - a simulator bug must still produce a response
            error = {"error": {"message": f"simulator error: {exc!r}", "type": "server_error"}}
            delivery = Delivery.of(json_response(500, error))
        try:
            self._deliver(delivery)
        except (OSError, _Aborted):
            self.close_connection = True

    do_GET = do_PUT = do_DELETE = do_PATCH = do_POST

    def _read_body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass
            return b"".join(parts)
        return self.rfile.read(int(self.headers.get("content-length") or 0))

    def _wait(self, seconds: float) -> None:
        if seconds > 0 and self.server.stopping.wait(seconds):
            raise _Aborted

    def _deliver(self, d: Delivery) -> None:
        if d.reset_first:
            self._reset()
            return
        self._wait(d.delay)
        rendered = d.rendered
        lines = [f"HTTP/1.1 {rendered.status} {_reason(rendered.status)}"]
        lines += [f"{k}: {v}" for k, v in rendered.headers]
        if d.framing == "length":
            lines.append(f"content-length: {len(rendered.body)}")
        elif d.framing == "chunked":
            lines.append("transfer-encoding: chunked")
        else:
            lines.append("connection: close")
            self.close_connection = True
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        chunked = d.framing == "chunked"
        sent = 0
        chunks = [b"".join(rendered.chunks)] if d.burst else rendered.chunks
        for index, chunk in enumerate(chunks):
            if index == d.stall_after:
                self._wait(d.stall)
            if d.gaps is not None and index < len(d.gaps):
                self._wait(d.gaps[index])
            if d.cut is not None and sent + len(chunk) >= d.cut:
                self._write(chunk[: d.cut - sent], chunked)
                self._end_cut(d.reset)
                return
            self._write(chunk, chunked)
            sent += len(chunk)
        if d.cut is not None:
            self._end_cut(d.reset)
        elif chunked:
            self.wfile.write(b"0\r\n\r\n")

    def _write(self, data: bytes, chunked: bool) -> None:
        if data:
            self.wfile.write(b"%x\r\n%b\r\n" % (len(data), data) if chunked else data)

    def _end_cut(self, reset: bool) -> None:
        if reset:
            self._reset()
        self.close_connection = True

    def _reset(self) -> None:
        """Close with SO_LINGER 0: the kernel sends a TCP RST instead of a FIN."""
        self.close_connection = True
        sock = self.connection
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.rfile.close()
        sock.close()


class SimServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer that can be stopped with connections still open."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, port: int, engine: Answers) -> None:
        self.engine = engine
        self.stopping = threading.Event()
        self._conn_lock = new_lock()
        self._conns: set[socket.socket] = set()
        self._conn_threads: list[threading.Thread] = []
        super().__init__(("127.0.0.1", port), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """One named daemon thread per connection, tracked so stop() can join it."""
        thread = threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            name="tooltap-simulator-conn",
            daemon=True,
        )
        with self._conn_lock:
            self._conns.add(request)
            self._conn_threads = [t for t in self._conn_threads if t.is_alive()]
            self._conn_threads.append(thread)
        thread.start()

    def shutdown_request(self, request: Any) -> None:
        """Forget the connection, then close it."""
        with self._conn_lock:
            self._conns.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Silent: a client that goes away is normal here."""

    def stop(self) -> None:
        """Stop accepting, wake stalled handlers, close every connection and join the threads."""
        self.stopping.set()
        self.shutdown()
        with self._conn_lock:
            conns, threads = list(self._conns), list(self._conn_threads)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        for thread in threads:
            thread.join(_JOIN_TIMEOUT)
        self.server_close()


class Served:
    """A ``SimServer`` answering with ``answers`` on ``127.0.0.1``, served from a daemon
    thread: ``start``/``stop`` (or a ``with`` block) and its ``url``. ``what`` names it in
    errors and its thread."""

    def __init__(self, answers: Answers, *, port: int, what: str) -> None:
        self._answers = answers
        self._port = port
        self._what = what
        self._server: SimServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        """Bind ``127.0.0.1`` (an ephemeral port unless ``port``) and serve in a daemon thread."""
        if self._server is not None:
            raise RuntimeError(f"{self._what} already started")
        self._server = SimServer(self._port, self._answers)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"tooltap-{self._what.replace(' ', '-')}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close every socket (stalled ones too) and join all threads."""
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
            raise RuntimeError(f"{self._what} not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"
