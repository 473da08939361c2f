# From anthropic 2.15.0's sdist, tests/utils.py: only what test_open_telemetry.py imports.
from __future__ import annotations

import os
import contextlib
from typing import Iterator

from anthropic._types import Omit


@contextlib.contextmanager
def update_env(**new_env: str | Omit) -> Iterator[None]:
    old = os.environ.copy()

    try:
        for name, value in new_env.items():
            if isinstance(value, Omit):
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

        yield None
    finally:
        os.environ.clear()
        os.environ.update(old)
