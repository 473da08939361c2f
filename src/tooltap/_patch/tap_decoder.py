"""The client's content decoder, wrapped so a tapped body sees what the app gets."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Literal, Protocol

from .._quietly import quietly

__all__ = ["TapDecoder"]


class _Tap(Protocol):
    """What the decoder tells the tapped body's state."""

    def decoded(self, data: bytes) -> None: ...
    def flushed(self) -> None: ...
    def finish(self, end: Literal["error"], exc: BaseException | None = None) -> None: ...


class TapDecoder:
    """The client's own content decoder for the response, wrapped: every piece it decodes
    for the app is handed to the tap too, so the tap sees exactly what the app gets (and
    nothing when the client does not decode an encoding). A decoder that raises is the
    client failing on the body: the tap settles with that error, and it propagates."""

    __slots__ = ("_inner", "_state")

    def __init__(self, inner: Any, state: _Tap) -> None:
        self._inner = inner
        self._state = state

    def decode(self, data: bytes) -> Any:
        return self._pass(self._inner.decode, data)

    def flush(self) -> Any:
        try:
            return self._pass(self._inner.flush)
        finally:
            self._state.flushed()

    def _pass(self, step: Callable[..., Any], *args: bytes) -> Any:
        try:
            out = step(*args)
        except BaseException as exc:
            quietly(self._state.finish, "error", exc)
            raise
        if isinstance(out, bytes):  # httpx: one piece
            self._state.decoded(out)
            return out
        return self._each(out)  # httpx2: pieces of bounded size, lazily

    def _each(self, pieces: Iterator[bytes]) -> Iterator[bytes]:
        try:
            for piece in pieces:
                self._state.decoded(piece)
                yield piece
        except GeneratorExit:
            raise
        except BaseException as exc:
            quietly(self._state.finish, "error", exc)
            raise
