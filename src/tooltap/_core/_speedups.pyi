from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

def match_run(
    chunk: bytes, pos: int, head: bytes, tail: bytes, cap: int, /
) -> tuple[bytes, int]: ...

class Hot:
    def __init__(
        self, sse: Any, reducer: Any, fallback: Callable[[bytes], Any], cap: int, limit: int
    ) -> None: ...
    def __call__(self, chunk: bytes, /) -> Any: ...

class Tap(Iterator[bytes]):
    def __init__(
        self,
        stream: Any,
        state: Any,
        received: Callable[[Any], Any],
        broken: Callable[[Exception], Any],
        settle: Callable[[str, BaseException | None], Any],
    ) -> None: ...
    def __next__(self) -> bytes: ...
    def close(self) -> None: ...

class ATap(AsyncIterator[bytes]):
    def __init__(
        self,
        stream: Any,
        state: Any,
        received: Callable[[Any], Any],
        broken: Callable[[Exception], Any],
        settle: Callable[[str, BaseException | None], Any],
    ) -> None: ...
    def __anext__(self) -> Awaitable[bytes]: ...
    def aclose(self) -> Awaitable[None]: ...
