"""Writing flight records off the app's path: a bounded queue, one writer thread, a ring.

``submit`` never blocks: a full queue (a slow disk) drops the record and counts it, as
does a write that fails (a full or read-only directory). The thread builds, masks and
encodes each record, writes it to a temporary file (mode 0600) and renames it into place, then
removes the oldest records of the directory while there are more than ``files`` or
they hold more than ``total_bytes``. It exits when the queue has stayed empty a while
and starts again with the next record; a forked child starts with none.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Final

from .._core.flight import FlightRecord, encode, masked
from .._forks import in_child, new_lock

__all__ = ["SUFFIX", "FlightWriter"]

_log = logging.getLogger("tooltap")

PREFIX: Final = "tooltap-flight-"
SUFFIX: Final = ".jsonl"
_QUEUE: Final = 64
_IDLE: Final = 1.0


class FlightWriter:
    """Writes records into ``directory``; counts what it wrote and what it dropped."""

    def __init__(
        self,
        directory: Path,
        *,
        files: int,
        total_bytes: int,
        on_drop: Callable[[], None],
        queue_size: int = _QUEUE,
    ) -> None:
        self.directory = directory
        self.files = files
        self.total_bytes = total_bytes
        self.written = 0
        self.dropped = 0
        self._on_drop = on_drop
        self._size = queue_size
        self._queue: queue.Queue[tuple[str, Callable[[], FlightRecord]]] = queue.Queue(queue_size)
        self._lock = new_lock()
        self._thread: threading.Thread | None = None
        self._pending = 0  # records queued and not written (or dropped) yet
        _writers.add(self)

    def submit(self, name: str, record: Callable[[], FlightRecord]) -> bool:
        """Queue the record ``record()`` builds (on the writer's thread) as file ``name``;
        False (and counted) when the queue is full."""
        with self._lock:
            try:
                self._queue.put_nowait((name, record))
            except queue.Full:
                self._drop("queue full")
                return False
            self._pending += 1
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="tooltap-flight-recorder", daemon=True
                )
                self._thread.start()
        return True

    def drain(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for every queued record to be written (or dropped)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if self._pending == 0:
                    return True
            time.sleep(0.005)
        return False

    def _drop(self, why: str, exc: BaseException | None = None) -> None:
        self.dropped += 1
        _log.debug("tooltap: flight record dropped (%s)", why, exc_info=exc)
        with contextlib.suppress(Exception):
            self._on_drop()

    def _run(self) -> None:
        while True:
            try:
                name, record = self._queue.get(timeout=_IDLE)
            except queue.Empty:
                with self._lock:
                    if self._queue.empty():
                        self._thread = None
                        return
                continue
            try:
                self._write(name, record)
            except Exception as exc:  # noqa: BLE001 - a full or read-only disk: drop it
                self._drop("not written", exc)
            else:
                self.written += 1
            finally:
                with self._lock:
                    self._pending -= 1

    def _write(self, name: str, record: Callable[[], FlightRecord]) -> None:
        data = encode(masked(record()))
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        final = self.directory / name
        temporary = self.directory / f".{name}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(temporary, final)
        except BaseException:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise
        self._prune()

    def _prune(self) -> None:
        """Remove the oldest records (names sort by time) beyond the ring's bounds."""
        records = []
        for entry in os.scandir(self.directory):
            if entry.name.startswith(PREFIX) and entry.name.endswith(SUFFIX):
                with contextlib.suppress(OSError):
                    records.append((entry.name, entry.stat().st_size))
        records.sort()
        total = sum(size for _, size in records)
        while records and (len(records) > self.files or total > self.total_bytes):
            name, size = records.pop(0)
            with contextlib.suppress(OSError):
                (self.directory / name).unlink()
            total -= size

    def _forget(self) -> None:
        self._queue = queue.Queue(self._size)
        self._thread = None
        self._pending = 0


_writers: weakref.WeakSet[FlightWriter] = weakref.WeakSet()


@in_child
def _forget_parent_records() -> None:
    """A forked child neither writes its parent's queued records nor waits for its thread."""
    for writer in list(_writers):
        writer._forget()
