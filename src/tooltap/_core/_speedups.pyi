from collections.abc import Callable
from typing import Any

def match_run(
    chunk: bytes, pos: int, head: bytes, tail: bytes, cap: int, /
) -> tuple[bytes, int]: ...

class Hot:
    def __init__(
        self, sse: Any, reducer: Any, fallback: Callable[[bytes], Any], cap: int, limit: int
    ) -> None: ...
    def __call__(self, chunk: bytes, /) -> Any: ...
