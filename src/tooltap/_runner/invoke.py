"""Call a tool's handler: sync ones in a thread, under the tool's timeout if it has one."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import threading
from collections.abc import Callable
from typing import Any, Final

from .ledger import LedgerEntry
from .tool import Tool

__all__ = ["MAX_ERROR_TEXT", "TimedOut", "invoke"]

#: The longest error text a failed handler gives the model.
MAX_ERROR_TEXT: Final = 500


class TimedOut(Exception):
    """An attempt outlived the tool's ``timeout`` (distinct from a handler's TimeoutError)."""


async def invoke(
    tool: Tool,
    args: dict[str, Any],
    threaded: bool,
    late: Callable[[LedgerEntry], None] | None,
) -> Any:
    """Call the handler with ``args`` as keywords; sync ones in a thread when ``threaded``.

    Under a ``timeout``, an async handler is cancelled when it expires; a sync one runs
    in its own daemon thread that is no longer waited for (it cannot be killed).
    """
    if tool.timeout is not None:
        if tool.is_async:
            return await _bounded(tool.handler(**args), tool.timeout)
        return await _in_own_thread(tool, args, tool.timeout, late)
    if tool.is_async:
        return await tool.handler(**args)
    if threaded:
        result = await asyncio.to_thread(tool.handler, **args)
    else:
        result = tool.handler(**args)
    if inspect.isawaitable(result):
        result = await result
    return result


async def _bounded(awaitable: Any, timeout: float) -> Any:
    """Await ``awaitable``, cancelling it after ``timeout`` seconds (then ``TimedOut``)."""
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not done:
        task.cancel()
        task.add_done_callback(_consume)
        raise TimedOut(f"did not finish within {timeout:g} s")
    return task.result()


def _consume(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


class _Worker:
    """One sync handler run in its own thread, which the caller may stop waiting for."""

    __slots__ = ("abandoned", "error", "finished", "lock", "result", "wake")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.finished = False
        self.abandoned = False
        self.result: Any = None
        self.error: BaseException | None = None
        self.wake = asyncio.Event()


async def _in_own_thread(
    tool: Tool,
    args: dict[str, Any],
    timeout: float,
    late: Callable[[LedgerEntry], None] | None,
) -> Any:
    """Run a sync handler in a daemon thread; stop waiting after ``timeout`` seconds.

    A side-effecting run that finishes after that records its outcome through ``late``.
    """
    loop = asyncio.get_running_loop()
    worker = _Worker()
    context = contextvars.copy_context()

    def work() -> None:
        try:
            worker.result = context.run(tool.handler, **args)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting side
            worker.error = exc
        with worker.lock:
            worker.finished = True
            abandoned = worker.abandoned
        if not abandoned:
            with contextlib.suppress(RuntimeError):  # the loop has closed meanwhile
                loop.call_soon_threadsafe(worker.wake.set)
        elif late is not None:
            late(_late_entry(tool, worker))

    threading.Thread(target=work, name=f"tooltap-{tool.name}", daemon=True).start()
    try:
        await asyncio.wait_for(worker.wake.wait(), timeout)
    except asyncio.CancelledError:
        with worker.lock:
            worker.abandoned = not worker.finished
        raise
    except TimeoutError:
        with worker.lock:
            worker.abandoned = not worker.finished
        if worker.abandoned:
            raise TimedOut(f"did not finish within {timeout:g} s") from None
    if worker.error is not None:
        raise worker.error
    result = worker.result
    if inspect.isawaitable(result):
        result = await result
    return result


def _late_entry(tool: Tool, worker: _Worker) -> LedgerEntry:
    if worker.error is None:
        return LedgerEntry("done", tool.name, worker.result)
    error = worker.error
    text = f"The tool {tool.name!r} failed: {type(error).__name__}: {error}"[:MAX_ERROR_TEXT]
    return LedgerEntry("done", tool.name, text, True, type(error).__name__)
