"""Telling a stream a proxy buffered from one that streamed, from a few numbers at its end.

A buffering proxy (nginx ``proxy_buffering``, a gateway, a service mesh) holds the
provider's events until the response is complete, then releases them at once: the
reader waits a long time for the first byte, then that first read carries many events
and nearly all of the body's bytes, or the rest follows at once. A stream that simply
starts late (a slow first token) carries one event in its first read and keeps
streaming; a reader that starts late finds many events waiting but did not wait for
them, so its wait is not counted.
"""

from __future__ import annotations

from typing import Final

__all__ = ["BURST_SHARE", "bytes_burst", "judged", "stream_buffered"]

#: A burst: at least this share of the body's bytes in the first read, or of the
#: response's time (wait + spread) spent before its first byte.
BURST_SHARE: Final = 0.9


def stream_buffered(
    *,
    wait: float,
    spread: float,
    events: int,
    first_bytes: int,
    total_bytes: int,
    min_wait: float,
    min_events: int,
) -> bool:
    """Whether a completed stream arrived as a buffering proxy releases one.

    ``wait``: seconds the reader was blocked before the first byte (request sent to
    response headers, plus the first read's own wait, not the app's delay before it
    started reading). ``spread``: first byte to the end of the body (it includes the
    app's own time per event). ``events``, ``first_bytes``: SSE events and bytes of the
    first read; ``total_bytes``: of the body. Buffered when ``wait >= min_wait``,
    ``events >= min_events`` and the body came in a burst: ``first_bytes >= BURST_SHARE
    * total_bytes`` or ``wait >= BURST_SHARE * (wait + spread)``. ``min_wait <= 0``
    turns the check off.
    """
    if not judged(events=events, min_wait=min_wait, min_events=min_events) or wait < min_wait:
        return False
    return bytes_burst(first_bytes, total_bytes) or wait >= BURST_SHARE * (wait + spread)


def judged(*, events: int, min_wait: float, min_events: int) -> bool:
    """Whether a stream whose first read carried ``events`` events can be found buffered
    at all (``min_wait <= 0`` turns the check off)."""
    return min_wait > 0 and events >= min_events


def bytes_burst(first_bytes: int, total_bytes: int) -> bool:
    """Whether the first read carried ``BURST_SHARE`` of the body's bytes: once the body
    outgrows ``first_bytes / BURST_SHARE``, no later byte makes it one."""
    return first_bytes >= BURST_SHARE * total_bytes
