"""An `fsync` the event loop awaits without blocking: Linux native AIO, through caio.

The loop submits the fsync (`io_submit`); the kernel runs it while the loop goes on serving, and signals its end on an
eventfd the loop watches. No thread and no GIL handoff: the loop only pays for the submit and one wake-up. Where Linux
AIO is not there (another OS, a kernel before 4.18, a sandbox that refuses `io_setup`), `open_on` gives None and the
audit log fsyncs as before. caio's asyncio adapter reports a failed operation as a SystemError carrying only its
message; its `Context` hands the callback the kernel's result, so this thin adapter keeps the errno (ENOSPC, EIO) for
the log line an IT person reads.
"""

import asyncio
import contextlib
import functools
import logging
import os
from typing import Any

log = logging.getLogger(__name__)

_IN_FLIGHT = 4  # operations one context holds at once: an audit log has one batch in flight per loop
_unavailable: list[str] = []  # why Linux AIO is not there, once found (said once per process)


class LoopFsync:
    """One event loop's Linux AIO context: `await fsync(fd)` returns once the kernel's fsync of `fd` ended."""

    def __init__(self, loop: asyncio.AbstractEventLoop, linux_aio: Any) -> None:
        self.loop = loop
        self._aio = linux_aio
        self._context = linux_aio.Context(max_requests=_IN_FLIGHT)
        loop.add_reader(self._context.fileno, self._completed)

    async def fsync(self, fd: int) -> None:
        """Submit an fsync of `fd` and wait for its end; raises OSError (with its errno) when it failed, and
        `NotSubmitted` when the kernel refused to start it (nothing was synced: a blocking fsync may stand in)."""
        ended: asyncio.Future[int] = self.loop.create_future()
        operation = self._aio.Operation.fsync(fd)
        operation.set_callback(functools.partial(_settle, ended))
        try:
            accepted = self._context.submit(operation)
        except Exception as exc:  # caio: ValueError naming the errno (EINVAL: no fsync on this file system)
            raise NotSubmitted("fsync not submitted") from exc
        if accepted != 1:
            raise NotSubmitted("fsync not submitted")
        failed = await ended  # a caller that stops waiting leaves the kernel's fsync to end on its own
        if failed:
            raise OSError(failed, os.strerror(failed))

    def _completed(self) -> None:
        """The eventfd is readable: run the callbacks of every operation that ended."""
        with contextlib.suppress(BlockingIOError):  # the counter may already read zero: drain all the same
            self._context.poll()
        while self._context.process_events():
            pass

    def close(self) -> None:
        with contextlib.suppress(Exception):  # the loop may be closed already
            self.loop.remove_reader(self._context.fileno)


class NotSubmitted(OSError):
    """The kernel did not take the fsync: nothing was synced."""


def _settle(ended: asyncio.Future[int], result: int) -> None:
    """On the loop (from `_completed`): the operation's result, a negative errno as an unsigned 64-bit number."""
    if not ended.done():
        ended.set_result(2**64 - result if result >= 2**63 else 0)


def open_on(loop: asyncio.AbstractEventLoop) -> LoopFsync | None:
    """A Linux AIO context for `loop`, or None where Linux AIO is not there (said once, on stderr)."""
    if _unavailable:
        return None
    try:
        from caio import linux_aio  # loaded with the first audit line on a loop (its probe: ~30 ms)

        if linux_aio is None:  # caio is there, its Linux AIO module refused to load (kernel, sandbox)
            raise ImportError("caio.linux_aio did not load")
        return LoopFsync(loop, linux_aio)
    except Exception as exc:  # ImportError; io_setup refused (SystemError); a loop without add_reader; ...
        _unavailable.append(f"{type(exc).__name__}: {exc}")
        log.info("audit fsync without Linux AIO: the event loop waits for it", extra={"reason": _unavailable[0]})
        return None
