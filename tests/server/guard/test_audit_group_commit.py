"""Group commit of the audit file: the lines of concurrent callers share one write and one fsync, each caller returns
only once the fsync covering its line succeeded, and a failed batch fails every caller in it (fail closed).

`os.fsync` and `os.write` are wrapped (the OS, not our component) to count them, hold the first fsync until the
other callers wait, fail one, or rotate the file between two batches as logrotate may; so is the kernel's AIO the
event loop submits its fsync to (`KernelAio`, standing in for caio's `linux_aio`). A held fsync of a line from the
event loop is the writer thread's: the log is told its disk is slow (`slow`), as after a slow batch
(tests/server/guard/test_audit_on_the_loop.py: the loop's own batches).
"""

import errno
import json
import os
import queue
import textwrap
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import caio
import pytest
from fastapi import FastAPI
from mcp import Client
from mcp_types import CallToolResult

from mcp_asrama.server.guard import audit, audit_check, audit_log
from tests.server.conftest import server_for
from tests.server.guard.test_audit_file import run_two_writers

pytestmark = pytest.mark.anyio

REAL_FSYNC, REAL_WRITE = os.fsync, os.write


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def line(subject: str, n: int) -> dict[str, Any]:
    return {"time": "t", "event": "request", "subject": subject, "method": "tools/call", "n": n}


KERNEL = "kernel"  # in `Disk.threads`: an fsync the event loop submitted to the kernel (Linux AIO)


class Disk:
    """Wraps `os.fsync`, `os.write` and the kernel's AIO (`KernelAio`): counts the fsyncs and the lines of each write,
    records the bytes made durable and each fsync's thread (or `KERNEL`), and on the k-th fsync (from 1) waits first
    until `hold[k]` lines in all are written or queued, takes `pause` seconds, fails (`fail`, with `fails_with`), or
    moves the file away after it (`rotate`). Each write takes `write_pause` seconds."""

    def __init__(self, writer: audit_log.AuditLog, monkeypatch: pytest.MonkeyPatch) -> None:
        self.writer, self.fsyncs, self.durable = writer, 0, 0
        self.lines: list[int] = []  # of each write
        self.hold: dict[int, int] = {}
        self.fail, self.rotate = set[int](), set[int]()
        self.fails_with = errno.EIO
        self.rotated: list[Path] = []
        self.threads: list[int | str] = []  # the thread of each fsync
        self.pause = self.write_pause = 0.0
        self.aio = KernelAio(self)
        monkeypatch.setattr(os, "fsync", self.fsync)
        monkeypatch.setattr(os, "write", self.write)
        monkeypatch.setattr(caio, "linux_aio", self.aio)

    def queued(self) -> int:
        with self.writer._turn:
            return len(self.writer._queue)

    @property
    def writes(self) -> int:
        return len(self.lines)

    def write(self, fd: int, data: Any) -> int:
        self.lines.append(bytes(data).count(b"\n"))
        time.sleep(self.write_pause)
        return REAL_WRITE(fd, data)

    def fsync(self, fd: int, by: int | str | None = None) -> None:
        self.fsyncs += 1  # one batch at a time in the process: no race
        self.threads.append(by or threading.get_ident())
        k = self.fsyncs
        if k in self.hold:
            deadline = time.monotonic() + 20
            while sum(self.lines) + self.queued() < self.hold[k]:
                assert time.monotonic() < deadline, "the other callers never queued"
                time.sleep(0.001)
        time.sleep(self.pause)
        if k in self.fail:
            raise OSError(self.fails_with, os.strerror(self.fails_with))
        REAL_FSYNC(fd)
        self.durable = os.fstat(fd).st_size
        if k in self.rotate:
            moved = self.writer.path.with_suffix(f".{len(self.rotated) + 1}")
            self.writer.path.rename(moved)
            self.rotated.append(moved)


class KernelAio:
    """Stands in for the kernel's AIO as caio's `linux_aio` module offers it (`Context`, `Operation.fsync`): an fsync
    submitted runs on a thread of its own through `Disk.fsync` while the loop goes on, and its end is signalled on a
    pipe the loop watches; `process_events` hands each callback the kernel's result (a negative errno, unsigned). With
    `refuse` set, `submit` raises as caio does when `io_submit` refuses (ValueError); with `refuse_setup`, `Context`
    as when `io_setup` does."""

    def __init__(self, disk: Disk) -> None:
        self.disk, self.refuse, self.refuse_setup = disk, False, False
        self.Operation = Operation

    def Context(self, max_requests: int) -> "AioContext":  # caio's name
        if self.refuse_setup:  # as caio reports a failed io_setup (here: the machine's AIO quota used up)
            raise SystemError(errno.EAGAIN, os.strerror(errno.EAGAIN))
        return AioContext(self)


class Operation:
    def __init__(self, fd: int) -> None:
        self.fd, self.callback = fd, None

    @classmethod
    def fsync(cls, fd: int) -> "Operation":
        return cls(fd)

    def set_callback(self, callback: Any) -> bool:
        self.callback = callback
        return True


class AioContext:
    def __init__(self, kernel: KernelAio) -> None:
        self.kernel, self.ended = kernel, queue.SimpleQueue[tuple[Operation, int]]()
        self.fileno, self._signal = os.pipe()
        os.set_blocking(self.fileno, False)

    def __del__(self) -> None:
        os.close(self.fileno)
        os.close(self._signal)

    def submit(self, *operations: Operation) -> int:
        if self.kernel.refuse:
            raise ValueError("the operation specified is invalid for the file descriptor in the iocb [EINVAL]")
        for operation in operations:
            threading.Thread(target=self._run, args=(operation,), daemon=True).start()
        return len(operations)

    def _run(self, operation: Operation) -> None:
        try:
            self.kernel.disk.fsync(operation.fd, by=KERNEL)
            result = 0
        except OSError as exc:
            result = 2**64 - (exc.errno or errno.EIO)
        self.ended.put((operation, result))
        REAL_WRITE(self._signal, b"\0")

    def poll(self) -> int:
        return len(os.read(self.fileno, 4096))  # BlockingIOError when nothing ended, as an eventfd's read

    def process_events(self) -> int:
        ended = 0
        while not self.ended.empty():
            operation, result = self.ended.get()
            assert operation.callback is not None
            operation.callback(result)
            ended += 1
        return ended


def slow(writer: audit_log.AuditLog) -> audit_log.AuditLog:
    """`writer` as after a batch slower than `_FAST`: the event loop's lines go to the writer thread."""
    writer._slow = True
    return writer


def held_batch(writer: audit_log.AuditLog, disk: Disk, followers: list[dict[str, Any]]) -> list[Future[Any]]:
    """One line whose fsync is held until every follower's line waits in the queue, then the followers' lines."""
    disk.hold[1] = 1 + len(followers)
    with ThreadPoolExecutor(max_workers=len(followers) + 1) as pool:
        first = pool.submit(writer.append, line("first", 0))
        while disk.fsyncs < 1:
            time.sleep(0.001)
        futures = [first, *(pool.submit(writer.append, fields) for fields in followers)]
    return futures


async def until(condition: Callable[[], bool]) -> None:
    with anyio.fail_after(20):
        while not condition():
            await anyio.sleep(0.001)


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "audit.jsonl"


@pytest.mark.parametrize("callers", ["threads", "event loop", "both"])
async def test_concurrent_lines_share_fsyncs_and_each_returns_only_once_its_line_is_durable(
    callers: str, log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Callers in threads (`append`), on the event loop (`append_async`), or half and half, 25 lines each."""
    writer = audit_log.AuditLog(log_path)
    disk = Disk(writer, monkeypatch)
    disk.pause = 0.002  # a disk's fsync takes time: the other callers queue meanwhile
    workers, each = 8, 25
    returned: list[tuple[int, int]] = []  # (seq, how far the file was durable when the caller got it back)

    def in_a_thread(subject: str) -> None:
        for n in range(each):
            returned.append((writer.append(line(subject, n))["seq"], disk.durable))

    async def on_the_loop(subject: str) -> None:
        for n in range(each):
            returned.append(((await writer.append_async(line(subject, n)))["seq"], disk.durable))

    async with anyio.create_task_group() as group:
        for i in range(workers):
            if callers == "threads" or (callers == "both" and i % 2):
                group.start_soon(anyio.to_thread.run_sync, in_a_thread, f"w{i}")
            else:
                group.start_soon(on_the_loop, f"w{i}")

    raw = log_path.read_bytes().splitlines(keepends=True)
    ends = [sum(len(r) for r in raw[: i + 1]) for i in range(len(raw))]
    assert sorted(seq for seq, _ in returned) == list(range(1, workers * each + 1)) and len(raw) == workers * each
    assert all(ends[seq - 1] <= durable for seq, durable in returned)  # no caller returned before its fsync
    for i in range(workers):
        assert [e["n"] for e in entries(log_path) if e["subject"] == f"w{i}"] == list(range(each))
    assert disk.writes == disk.fsyncs < workers * each  # lines shared fsyncs, one write per batch
    intact, verdict = audit_check.verify(log_path)
    assert intact, verdict


def test_the_lines_queued_behind_a_batch_go_out_in_one_write_and_one_fsync(
    log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = audit_log.AuditLog(log_path)
    disk = Disk(writer, monkeypatch)

    futures = held_batch(writer, disk, [line("follower", n) for n in range(7)])

    written = [future.result() for future in futures]
    assert (disk.writes, disk.fsyncs) == (2, 2)
    assert [e["seq"] for e in written] == [1, *sorted(e["seq"] for e in written[1:])]
    assert [e["hash"] for e in entries(log_path)] == [e["hash"] for e in sorted(written, key=lambda e: e["seq"])]
    assert audit_check.verify(log_path)[1].startswith("intact: 8 entries")


def test_a_failed_fsync_fails_every_caller_of_its_batch_and_the_chain_goes_on(
    log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = audit_log.AuditLog(log_path)
    disk = Disk(writer, monkeypatch)
    disk.fail = {2}

    futures = held_batch(writer, disk, [line("follower", n) for n in range(7)])

    assert futures[0].result()["seq"] == 1
    failures = [future.exception() for future in futures[1:]]
    assert all(isinstance(e, OSError) and e.errno == errno.EIO for e in failures), failures  # none durable
    assert disk.durable == len(log_path.read_bytes().splitlines(keepends=True)[0])
    # The batch's lines reached the file, unconfirmed: the log may hold more than went out, never less.
    assert writer.append(line("after", 0))["seq"] == 9
    assert audit_check.verify(log_path)[1].startswith("intact: 9 entries")


def test_a_line_that_cannot_be_sealed_fails_alone_and_its_batch_goes_out(
    log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = audit_log.AuditLog(log_path)
    disk = Disk(writer, monkeypatch)
    followers = [line("follower", n) for n in range(7)]
    followers[3] = {**followers[3], "arguments": object()}  # not JSON

    futures = held_batch(writer, disk, followers)

    assert isinstance(futures[4].exception(), TypeError)
    good = [future.result() for i, future in enumerate(futures) if i != 4]
    assert sorted(e["seq"] for e in good) == list(range(1, 8))
    assert sorted(e["n"] for e in entries(log_path) if e["subject"] == "follower") == [0, 1, 2, 4, 5, 6]
    assert (disk.writes, disk.fsyncs) == (2, 2)
    assert audit_check.verify(log_path)[1].startswith("intact: 7 entries")


def test_rotations_between_batches_under_load_keep_every_line_and_each_file_chained(
    log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = audit_log.AuditLog(log_path)
    disk = Disk(writer, monkeypatch)
    disk.pause, disk.rotate = 0.002, {3, 6, 9}
    threads, each = 6, 30

    def appender(subject: str) -> None:
        for n in range(each):
            writer.append(line(subject, n))

    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(appender, [f"t{i}" for i in range(threads)]))

    assert len(disk.rotated) == 3
    kept: list[tuple[str, int]] = []
    for path in [*disk.rotated, log_path]:
        logged = entries(path)
        assert logged, f"{path.name} got no line: the rotation was not mid-stream"
        assert [e["seq"] for e in logged] == list(range(1, len(logged) + 1))  # each new file starts at genesis
        assert audit_check.verify(path)[0], path.name
        kept += [(e["subject"], e["n"]) for e in logged]
    assert sorted(kept) == sorted((f"t{i}", n) for i in range(threads) for n in range(each))


# --- callers on the event loop ------------------------------------------------------------------------------------


async def test_a_failed_fsync_fails_every_awaiting_caller_of_its_batch(
    log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = slow(audit_log.AuditLog(log_path))
    disk = Disk(writer, monkeypatch)
    disk.hold[1], disk.fail = 8, {2}
    outcomes: list[BaseException | int] = []

    async def appender(n: int) -> None:
        try:
            outcomes.append((await writer.append_async(line("task", n)))["seq"])
        except OSError as exc:
            outcomes.append(exc)

    async with anyio.create_task_group() as group:
        group.start_soon(appender, 0)
        await until(lambda: disk.fsyncs >= 1)  # the first line's batch is held in its fsync
        for n in range(1, 8):
            group.start_soon(appender, n)

    assert outcomes[0] == 1 and disk.lines == [1, 7]
    assert all(isinstance(e, OSError) and e.errno == errno.EIO for e in outcomes[1:]), outcomes  # none durable


async def test_a_caller_that_stops_waiting_leaves_the_others_and_its_line_is_written(
    log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = slow(audit_log.AuditLog(log_path))
    disk = Disk(writer, monkeypatch)
    disk.hold[1] = 3
    seqs: dict[str, int] = {}
    scope = anyio.CancelScope()

    async def appender(subject: str) -> None:
        seqs[subject] = (await writer.append_async(line(subject, 0)))["seq"]

    async def impatient() -> None:
        with scope:
            await appender("impatient")

    async with anyio.create_task_group() as group:
        group.start_soon(appender, "first")
        await until(lambda: disk.fsyncs >= 1)  # the first batch is held in its fsync
        group.start_soon(impatient)
        await until(lambda: disk.queued() >= 1)
        scope.cancel()
        await until(lambda: scope.cancelled_caught)  # it stopped waiting, its line still queued
        group.start_soon(appender, "patient")

    assert seqs == {"first": 1, "patient": 3}
    assert [e["subject"] for e in entries(log_path)] == ["first", "impatient", "patient"]
    assert (await writer.append_async(line("after", 0)))["seq"] == 4
    assert audit_check.verify(log_path)[0]


async def test_the_writer_thread_ends_when_idle_and_the_next_line_starts_another(
    log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(audit_log, "_IDLE", 0.05)
    writer = slow(audit_log.AuditLog(log_path))
    assert (await writer.append_async(line("task", 0)))["seq"] == 1
    assert writer._writer == os.getpid()
    deadline = time.monotonic() + 10
    while writer._writer:
        assert time.monotonic() < deadline, "the writer thread never ended"
        await anyio.sleep(0.01)
    writer._slow = True
    assert (await writer.append_async(line("task", 1)))["seq"] == 2
    assert writer._writer == os.getpid()
    assert audit_check.verify(log_path)[1].startswith("intact: 2 entries")


WRITER = textwrap.dedent(
    """
    import sys, time
    from concurrent.futures import ThreadPoolExecutor
    from pathlib import Path
    from mcp_asrama.server.guard.audit_log import AuditLog

    path, name, go, threads, each = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), 4, 20
    other = ('"subject":"%s"' % ("p2" if name == "p1" else "p1")).encode()
    writer = AuditLog(path)
    Path(f"{go}.{name}").touch()  # ready
    while not go.exists():
        time.sleep(0.001)

    def appender(t):
        for n in range(each):
            deadline = time.monotonic() + 30
            while n == each // 2 and other not in path.read_bytes() and time.monotonic() < deadline:
                time.sleep(0.001)  # halfway, wait for the other process: they interleave however busy the machine
            writer.append({"time": "t", "event": "request", "subject": name, "method": "tools/call", "n": [t, n]})

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(appender, range(threads)))
    """
)


def test_threads_in_two_processes_keep_one_chain(log_path: Path, tmp_path: Path) -> None:
    go, threads, each = tmp_path / "go", 4, 20  # as in WRITER
    run_two_writers(WRITER, go, str(log_path), str(go))

    logged = entries(log_path)
    assert [e["seq"] for e in logged] == list(range(1, 2 * threads * each + 1))
    for name in ("p1", "p2"):
        got = sorted(tuple(e["n"]) for e in logged if e["subject"] == name)
        assert got == [(t, n) for t in range(threads) for n in range(each)]
    assert len({e["subject"] for e in logged[: len(logged) // 2 + 1]}) == 2, "the processes did not interleave"
    intact, verdict = audit_check.verify(log_path)
    assert intact, verdict


# --- through the server -------------------------------------------------------------------------------------------


async def eight_calls(
    app: FastAPI, path: Path, monkeypatch: pytest.MonkeyPatch, fail: set[int]
) -> tuple[list[CallToolResult], Disk]:
    """Eight `cari_anak` calls through a server auditing to `path`: one, then seven more while its line's fsync is
    held (until their lines wait); the fsyncs numbered in `fail` fail."""
    server = server_for(app, audit_log=path)
    [auditor] = [m for m in server.middleware if isinstance(m, audit.Auditor)]
    disk = Disk(slow(auditor.log), monkeypatch)
    disk.hold[1], disk.fail = 8, fail
    results: list[CallToolResult] = []
    async with Client(server, mode="2026-07-28", cache=None) as client:

        async def call() -> None:
            results.append(await client.call_tool("cari_anak", {"kelas": "7A"}))

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            await until(lambda: disk.fsyncs >= 1)  # the first line's batch is held in its fsync
            for _ in range(7):
                group.start_soon(call)
    return results, disk


async def test_eight_requests_at_once_share_two_fsyncs_and_each_answers(
    service_app: FastAPI, log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results, disk = await eight_calls(service_app, log_path, monkeypatch, fail=set())

    assert [r.is_error for r in results] == [False] * 8
    assert all(r.structured_content and r.structured_content["data"] for r in results)
    assert disk.lines == [1, 7] and disk.fsyncs == 2
    assert [e["outcome"] for e in entries(log_path)] == ["ok"] * 8
    assert audit_check.verify(log_path)[0]


async def test_requests_of_a_batch_whose_fsync_failed_get_no_data(
    service_app: FastAPI, log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results, disk = await eight_calls(service_app, log_path, monkeypatch, fail={2})

    withheld = [r for r in results if r.is_error]
    assert disk.lines == [1, 7] and disk.fsyncs == 2
    assert len(withheld) == 7 and not results[0].is_error  # the whole second batch; the first line was durable
    assert all([getattr(c, "text", None) for c in r.content] == [audit.WITHHELD] for r in withheld)
    assert all(r.structured_content is None for r in withheld)
