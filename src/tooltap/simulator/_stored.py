"""Stored Responses (``background: true``): polled with ``GET /v1/responses/{id}``, or
their event stream resumed with ``?stream=true&starting_after=N``.

A background response is answered in full when it is created; what a read returns is
played from that answer: the first poll finds it ``in_progress``, later polls
``completed``; a resumed stream sends the events whose ``sequence_number`` is after N.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from .._forks import new_lock
from ._render import Rendered, json_response

__all__ = ["StoredResponses"]

_SSE = [("content-type", "text/event-stream; charset=utf-8")]


@dataclass(slots=True)
class _Stored:
    events: list[bytes]  # the whole stream, event n with sequence_number n
    in_progress: dict[str, Any]
    completed: dict[str, Any]
    polls: int = 0


class StoredResponses:
    """The background responses of one simulator, by response id; thread-safe."""

    def __init__(self) -> None:
        self._lock = new_lock()
        self._stored: dict[str, _Stored] = {}

    def put(
        self,
        response_id: str,
        events: list[bytes],
        in_progress: dict[str, Any],
        completed: dict[str, Any],
    ) -> None:
        """Store a background response: its stream, and its body as a poll sees it."""
        with self._lock:
            self._stored[response_id] = _Stored(events, in_progress, completed)

    def read(self, response_id: str, query: str) -> Rendered | None:
        """What ``GET /v1/responses/{response_id}?{query}`` returns; None if unknown."""
        params = parse_qs(query)
        with self._lock:
            stored = self._stored.get(response_id)
            if stored is None:
                return None
            if params.get("stream", [""])[0].lower() == "true":
                after = int(params.get("starting_after", ["-1"])[0])
                return Rendered(200, list(_SSE), stored.events[after + 1 :], stream=True)
            stored.polls += 1
            body = stored.in_progress if stored.polls == 1 else stored.completed
        return json_response(200, body)
