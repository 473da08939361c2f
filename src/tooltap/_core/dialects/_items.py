"""What SDK item readers share: the base that holds the reducer, and ``Declined``.

Readers take the fields of the events most of a stream is made of from each model's
``__dict__``: a pydantic model defines ``__getattr__``, so every attribute read takes
CPython's slow path (the hook, then type lookups, unspecialized), where one read of the
dict and then dict lookups cost a fraction of it. An object whose fields are not in such
a dict is read by attribute.
"""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar

__all__ = ["Declined", "ItemReader"]


class Declined(Exception):
    """The item is valid, but only its bytes tell all the reducer needs (no warning)."""


class _Ending(Protocol):
    @property
    def ended(self) -> bool: ...


R = TypeVar("R", bound=_Ending)


class ItemReader(Generic[R]):
    """Folds one SDK's decoded stream items into a dialect's reducer (``item`` in each)."""

    __slots__ = ("reducer",)

    def __init__(self, reducer: R) -> None:
        self.reducer = reducer

    @property
    def ended(self) -> bool:
        """Whether the stream ended as it should, as the reducer tells it."""
        return self.reducer.ended

    def flush(self) -> None:
        """Hand the reducer whatever the reader holds back (before the reducer is read)."""
