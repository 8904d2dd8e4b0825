"""Benchmarks stopped by SIGTERM or SIGHUP clean up as on Ctrl-C.

A benchmark owns a loopback cluster and scheduler processes; if a signal killed the
Python process outright they would outlive it. Running the benchmark under
`until_signalled` turns the signal into a cancellation, so every shielded cleanup (the
schedulers' stop, the cluster's stop) runs first.
"""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

T = TypeVar("T")


async def until_signalled(fn: Callable[[], Awaitable[T]]) -> T | None:
    """fn's result, or None when SIGTERM or SIGHUP cancelled it."""
    result: list[T] = []
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
        async with anyio.create_task_group() as tg:

            async def cancel_on_signal() -> None:
                async for _ in signals:
                    tg.cancel_scope.cancel()
                    return

            tg.start_soon(cancel_on_signal)
            result.append(await fn())
            tg.cancel_scope.cancel()
    return result[0] if result else None
