"""Writing the audit file: append-only, hash-chained, fsync'd lines, safe between threads and processes.

Lines are written by group commit: the lines of concurrent callers go out in one `write` on an `O_APPEND` file and one
`fsync`, and each caller returns only once the `fsync` covering its line succeeded (a failed `write` or `fsync` fails
every caller of that batch: none is reported durable). In the process one batch is written at a time:
- by the first waiting caller's thread, for callers in threads (`append`);
- for callers on the event loop (`append_async`, the server's), on the loop itself while the disk is fast (the last
  batch took at most `_FAST`): no thread to wake. The loop writes the batch and, on Linux, submits its `fsync` to the
  kernel (`audit_aio`): it serves on until the `fsync` ends, and the lines that come meanwhile form the next batch;
  elsewhere it waits for the `fsync`. A line never waits for lines still to come: one that finds no batch in flight
  goes out in the loop's next turn, with the lines queued by then. After a slower batch, batches go
  to the log's writer thread, which wakes the loop once per batch and ends after a second idle, so that a slow disk
  never stalls the loop; a fast batch there brings them back.
Between processes `flock` serializes them (POSIX; on Windows assume one writer). The file stays open between lines;
before each batch, under `flock`, the path is checked to still name the open file (device and inode): a file moved
away or deleted (rotation) is closed and the path opened again (created 0600 if need be). A writer that finds the file
grown, shrunk or replaced re-reads the tail before chaining. A line cut short by a crash (no newline at the end) is
never chained over silently: the next writer ends it and writes a `torn_tail` entry chained to the torn bytes'
SHA-256, which `verify` reports by line number. After a write, the free space of the file's folder is checked (at
most once a minute, `audit_file.FreeSpace`): low, a warning goes to stderr; the check never delays or refuses a
request.
"""

import asyncio
import contextlib
import functools
import logging
import os
import threading
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp_asrama.server.guard import audit_aio
from mcp_asrama.server.guard.audit_file import FreeSpace, flock, last_lines, unlock
from mcp_asrama.server.guard.audit_seal import (
    GENESIS,
    HASH,
    HMAC,
    seal,
    sha256_hex,
    unseal,
)

log = logging.getLogger(__name__)

_IDLE = 1.0  # seconds the writer thread waits for a line before it ends (the next `append_async` starts another)
_FAST = 0.002  # seconds the loop may be held by a batch (its write; its fsync too without Linux AIO) and keep them


@dataclass(eq=False)
class _Ticket:
    """One caller's line in the queue: its fields, then the entry written or why not, and whether its batch ended."""

    fields: Mapping[str, Any]
    future: asyncio.Future[dict[str, Any]] | None = None  # an `append_async` caller's, settled on its loop
    written: dict[str, Any] | None = None
    error: BaseException | None = None
    done: bool = False

    def outcome(self) -> dict[str, Any]:
        if self.written is not None:
            return self.written
        raise self.error or OSError("audit line not written")


def _settle(tickets: list[_Ticket]) -> None:
    """On their event loop: each `append_async` caller's outcome (unless it stopped waiting: cancelled)."""
    for ticket in tickets:
        if ticket.future is None or ticket.future.done():
            continue
        if ticket.written is not None:
            ticket.future.set_result(ticket.written)
        else:
            ticket.future.set_exception(ticket.error or OSError("audit line not written"))


def _failed(exc: BaseException) -> OSError:
    """The failure of a batch as each of its callers raises it: an OSError of its own (with errno and strerror when
    the cause has them), caused by `exc`."""
    if isinstance(exc, OSError) and exc.errno is not None:
        copy = OSError(exc.errno, exc.strerror)
    else:
        copy = OSError(f"audit log not written: {type(exc).__name__}")
    copy.__cause__ = exc
    return copy


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class AuditLog:
    """The append-only, hash-chained file, sealed with `key` when given (HMAC).

    `append` blocks (write + fsync): call it from a worker thread, or await `append_async` on the event loop; concurrent
    calls share a write and an fsync. The file stays open between lines; `close` closes it (the next `append` opens it
    again), and so does the writer's garbage collection.
    """

    def __init__(self, path: Path, key: bytes | None = None, space: FreeSpace | None = None) -> None:
        self.path = path
        self.key = key
        self.space = space or FreeSpace()
        lock = threading.Lock()  # guards `_queue`, `_writing` and `_writer`
        self._turn = threading.Condition(lock)  # wakes the callers waiting in `append` when a batch ends
        self._queue: list[_Ticket] = []  # lines waiting for the next batch
        self._writing = False  # a batch is being written (by a caller, the event loop or the writer thread)
        self._work = threading.Condition(lock)  # wakes the writer thread: lines wait and no batch is in flight
        self._writer = 0  # the process whose writer thread runs (0: none; another pid: inherited through a fork)
        self._slow = False  # the last batch took longer than `_FAST`: the writer thread writes the loop's lines
        self._flush: tuple[asyncio.AbstractEventLoop, asyncio.Handle] | None = None  # the loop's next batch, planned
        self._aio: dict[asyncio.AbstractEventLoop, audit_aio.LoopFsync | None] = {}  # each loop's (None: none)
        self._syncing: asyncio.Task[float] | None = None  # the loop's batch waiting for its fsync
        self._known: tuple[int, int, int] | None = None  # (device, inode, size) after our last write
        self._prev, self._seq = GENESIS, 0
        self._fd: int | None = None  # the file, open between lines, by the process that opened it
        self._opened: tuple[int, int, int] = (0, 0, 0)  # (process, device, inode) of `_fd`
        self._closer: weakref.finalize[Any, Any] | None = None

    def append(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Chain and write one entry, durable (fsync'd) when this returns; returns it with `seq`, `prev` and its
        seal. Raises OSError when it, or the batch it went out in, could not be written.

        The line joins the queue; the first caller to find no batch in flight takes every queued line and writes
        them as one batch, while later callers queue for the next; each waits until the batch holding its line ended.
        """
        ticket = _Ticket(fields)
        with self._turn:
            self._queue.append(ticket)
            while self._writing and not ticket.done:
                self._turn.wait()
            if ticket.done:
                return ticket.outcome()
            self._writing = True
            batch, self._queue = self._queue, []
        self._batch(batch)
        return ticket.outcome()

    async def append_async(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """`append` for a caller on an asyncio event loop, without a thread per call: the line joins the queue and
        its batch is written on the loop (or, after a slow batch, by the log's writer thread, started when needed,
        which then wakes the loop once for all its lines). Returns once the line is durable; raises as `append`
        does."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        with self._turn:
            self._queue.append(_Ticket(fields, future))
            slow = self._slow
            if slow:
                self._wake_writer()
        if not slow:
            self._schedule(loop)
        return await future

    def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        """Have the loop write the queue in its next turn."""
        if self._flush is not None:
            planned_on, planned = self._flush
            if planned_on is loop:
                return  # it will take this line too
            planned.cancel()
        self._flush = (loop, loop.call_soon(self._on_loop, loop))

    def _on_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """On the loop: write the queue as one batch, unless a batch is in flight or the disk got slow (then the
        writer thread takes it)."""
        self._flush = None
        with self._turn:
            if not self._queue or (self._syncing is not None and self._syncing.get_loop() is loop):
                return  # (the batch waiting for its fsync here takes the queue when it ends)
            if self._writing or self._slow:
                self._wake_writer()
                return
            self._writing = True
            batch, self._queue = self._queue, []
        aio = self._aio_on(loop)  # (opened with the loop's first batch, not for a line the writer thread takes)
        if aio is not None:
            self._syncing = loop.create_task(self._batch_async(batch, aio))
            self._syncing.add_done_callback(functools.partial(self._synced, batch, loop))
            return
        with contextlib.suppress(Exception):  # each caller gets its outcome from its ticket
            self._batch(batch, loop)

    def _aio_on(self, loop: asyncio.AbstractEventLoop) -> audit_aio.LoopFsync | None:
        """`loop`'s Linux AIO fsync (opened on its first batch), or None: fsync on the loop."""
        if loop not in self._aio:
            for ended in [known for known in self._aio if known.is_closed()]:
                if (fsync := self._aio.pop(ended)) is not None:
                    fsync.close()
            self._aio[loop] = audit_aio.open_on(loop)
        return self._aio[loop]

    async def _batch_async(self, batch: list[_Ticket], aio: audit_aio.LoopFsync) -> float:
        """Write `batch` on the loop and submit its `fsync` (Linux AIO): the loop serves on meanwhile. Returns the
        seconds the loop was held (the write: what makes a batch slow)."""
        started = time.perf_counter()
        fd, written = self._commit(batch, synced=False)
        took = time.perf_counter() - started
        try:
            try:
                await aio.fsync(fd)
            except audit_aio.NotSubmitted:  # nothing synced: from now on this loop waits for the fsync
                log.info("audit fsync: the kernel refused Linux AIO, the event loop waits for it")
                self._aio[aio.loop] = None
                os.fsync(fd)
        except BaseException as exc:
            self._lost(batch, exc)
            raise
        for ticket, entry in written:
            ticket.written = entry
        return took

    def _synced(self, batch: list[_Ticket], loop: asyncio.AbstractEventLoop, task: asyncio.Task[float]) -> None:
        """`_batch_async` ended, however (even cancelled before it began): wake the callers of `batch`, and have
        the lines that came meanwhile go out as the next batch."""
        self._syncing = None
        self._ended(batch, loop, 0.0 if task.cancelled() or task.exception() else task.result())
        if self._queue and not self._slow:
            self._schedule(loop)

    def _wake_writer(self) -> None:
        """(Under the lock.) Have the writer thread write the queue: start it, or wake it if it waits idle."""
        if self._writer != os.getpid():
            threading.Thread(target=self._serve, name="audit-log-writer", daemon=True).start()
            self._writer = os.getpid()
        elif not self._writing:
            self._work.notify()

    def _serve(self) -> None:
        """The writer thread: batch after batch while lines come, then (a second idle) it ends."""
        while True:
            with self._turn:
                while self._writing or not self._queue:
                    if not self._work.wait(_IDLE) and not self._queue:
                        self._writer = 0
                        return
                self._writing = True
                batch, self._queue = self._queue, []
            with contextlib.suppress(BaseException):  # each caller gets its outcome from its ticket
                self._batch(batch)

    def _batch(self, batch: list[_Ticket], here: asyncio.AbstractEventLoop | None = None) -> None:
        """Write `batch` (taken from the queue, `_writing` set), then wake its callers: threads waiting in `append`,
        and each event loop with lines in it, once (`here`, the loop this runs on, directly)."""
        started = time.perf_counter()
        try:
            self._commit(batch)
        finally:
            self._ended(batch, here, time.perf_counter() - started)

    def _ended(self, batch: list[_Ticket], here: asyncio.AbstractEventLoop | None, took: float) -> None:
        """A batch ended (in `took` seconds): wake its callers (see `_batch`), and check the free space."""
        self._slow = took > _FAST
        waiting: dict[asyncio.AbstractEventLoop, list[_Ticket]] = {}
        with self._turn:
            self._writing = False
            for queued in batch:
                queued.done = True
                if queued.future is not None:
                    waiting.setdefault(queued.future.get_loop(), []).append(queued)
            self._turn.notify_all()
            if self._queue and (self._slow or here is None):
                self._wake_writer()
        for loop, tickets in waiting.items():
            if loop is here:
                _settle(tickets)
            else:
                with contextlib.suppress(RuntimeError):  # a loop closed meanwhile: nobody waits there
                    loop.call_soon_threadsafe(_settle, tickets)
        self.space.check(self.path)

    def close(self) -> None:
        """Close the file (the next `append` opens it again)."""
        if self._closer is not None:
            self._closer()
        self._fd = self._closer = None

    def _commit(self, batch: list[_Ticket], synced: bool = True) -> tuple[int, list[tuple[_Ticket, dict[str, Any]]]]:
        """Write `batch` under `flock` and fsync it: each ticket gets its entry. With `synced` False the caller
        fsyncs the returned descriptor, then hands each ticket its entry from the returned pairs. On a failure every
        line not yet refused gets it (`_lost`)."""
        try:
            fd, stat = self._locked()
            try:
                if (stat.st_dev, stat.st_ino, stat.st_size) != self._known:
                    self._resync(fd, stat)
                written = self._write(fd, batch, synced)
            finally:
                unlock(fd)
        except BaseException as exc:
            self._lost(batch, exc)
            raise
        if synced:
            for ticket, entry in written:
                ticket.written = entry
        return fd, written

    def _lost(self, batch: list[_Ticket], exc: BaseException) -> None:
        """`batch` failed with `exc`: none of its lines is durable, and the next batch re-reads the file's tail."""
        self._known = None
        self.close()
        for ticket in batch:
            ticket.error = ticket.error or _failed(exc)

    def _locked(self) -> tuple[int, os.stat_result]:
        """The file the path names now, open and `flock`ed, and its stat: the open one while the path still names
        it (checked under the lock: another process may rotate it just before), else the path opened again."""
        while True:
            if self._opened[0] != os.getpid():  # inherited through a fork: a descriptor (and a lock) of its own
                self.close()
            if self._fd is None:
                fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o600)
                self._closer = weakref.finalize(self, os.close, fd)
                opened = os.fstat(fd)
                self._fd, self._opened = fd, (os.getpid(), opened.st_dev, opened.st_ino)
            flock(self._fd)
            try:
                stat = os.stat(self.path)
            except FileNotFoundError:  # moved away or deleted
                stat = None
            if stat is not None and (stat.st_dev, stat.st_ino) == self._opened[1:]:
                return self._fd, stat
            self.close()  # (which unlocks it)

    def _write(
        self, fd: int, batch: list[_Ticket], synced: bool = True, prefix: bytes = b""
    ) -> list[tuple[_Ticket, dict[str, Any]]]:
        """Chain, seal and write the lines of `batch` (after `prefix`) in one `write`, then one `fsync` (unless not
        `synced`); returns each written ticket with its entry. A line that cannot be sealed (not JSON) is refused
        alone, left out of the chain."""
        prev, seq, data, sealed = self._prev, self._seq, [prefix], []
        for ticket in batch:
            try:
                entry = {"seq": seq + 1, **ticket.fields, "prev": prev}
                line, digest = seal(entry, self.key)
                seq = int(entry["seq"])
            except Exception as exc:  # that caller's own error (not JSON): the others' lines go on
                ticket.error = exc
                continue
            data.append(line + b"\n")
            sealed.append((ticket, {**entry, HASH if self.key is None else HMAC: digest}))
            prev = digest
        if not sealed and not prefix:
            return []
        joined = b"".join(data)
        if os.write(fd, joined) != len(joined):
            raise OSError("short write to the audit log")
        if synced:
            os.fsync(fd)
        stat = os.fstat(fd)
        self._known = (stat.st_dev, stat.st_ino, stat.st_size)
        self._prev, self._seq = prev, seq
        return sealed

    def _resync(self, fd: int, stat: os.stat_result) -> None:
        """Continue the chain from the file's last line (another writer, a restart, a rotation)."""
        if self._known is not None and self._known[:2] == (stat.st_dev, stat.st_ino) and stat.st_size < self._known[2]:
            log.warning("audit log shrank since our last write", extra={"path": str(self.path)})
        self._prev, self._seq = GENESIS, 0
        lines = last_lines(fd, stat.st_size) if stat.st_size else []
        opened = [unseal(raw, self.key) for _, raw, _ in lines]
        for entry, _, _ in opened:
            if entry is not None and isinstance(entry.get("seq"), int):
                self._seq = entry["seq"]
        if not lines:
            return
        (offset, raw, terminated), last = lines[-1], opened[-1]
        if not terminated:
            log.warning("audit log ends mid-line (interrupted write): marking it", extra={"path": str(self.path)})
            self._prev = sha256_hex(raw)
            torn = {"offset": offset, "bytes": len(raw), "sha256": self._prev}
            self._write(fd, [_Ticket({"time": utc_now(), "event": "torn_tail", "torn": torn})], prefix=b"\n")
        elif last.entry is None:
            log.error("audit log's last line is not a valid entry; `audit verify` will name it")
            self._prev = sha256_hex(raw)
        else:
            self._prev = last.digest
