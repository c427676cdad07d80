"""The server's audit lines are written on its event loop while the disk is fast: no thread to wake for a lone line,
and on Linux the fsync goes to the kernel (Linux AIO) while the loop serves on, the lines that come meanwhile forming
the next batch; the lines queued in one turn of the loop share one fsync, a line never waits for lines still to come, a
failed fsync fails every line of its batch with its errno, and a slow write moves writing to the writer thread until
a fast batch there brings it back. Without Linux AIO the loop waits for each fsync, and a slow one moves writing off
the loop. `os.fsync`, `os.write` and the kernel's AIO are wrapped as in test_audit_group_commit (the OS, not our
component); the last tests use the real kernel."""

import asyncio
import errno
import os
import threading
from pathlib import Path
from typing import Any

import anyio
import caio
import pytest
from fastapi import FastAPI
from mcp import Client

from mcp_asrama.server.guard import audit_aio, audit_check, audit_log
from tests.server.conftest import server_for
from tests.server.guard.test_audit_group_commit import KERNEL, Disk, entries, line

pytestmark = pytest.mark.anyio


SLOW = 0.3  # seconds the slow disks below take: well above the 0.1 s `fast_here` sets


@pytest.fixture(autouse=True)
def fast_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch counts as slow from 0.1 s here (the product's `_FAST` is 2 ms), so that a real fsync on a busy test
    machine (make test runs test files side by side) never passes for a slow disk; the slow disks take `SLOW`."""
    monkeypatch.setattr(audit_log, "_FAST", 0.1)


@pytest.fixture
def writer(tmp_path: Path) -> audit_log.AuditLog:
    return audit_log.AuditLog(tmp_path / "audit.jsonl")


def without_aio(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine without Linux AIO: caio's module did not load (another OS, an old kernel, a sandbox)."""
    monkeypatch.setattr(audit_aio, "_unavailable", [])  # what this test finds is forgotten after it
    monkeypatch.setattr(caio, "linux_aio", None)


async def ticking(ticks: list[int]) -> None:
    """Counts the loop's turns (one a millisecond) while it is free to turn."""
    while True:
        ticks[0] += 1
        await anyio.sleep(0.001)


async def test_a_lone_line_is_written_on_the_loop_at_once_and_no_thread_starts(
    writer: audit_log.AuditLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = Disk(writer, monkeypatch)
    with anyio.fail_after(10):
        written = [await writer.append_async(line("lone", n)) for n in range(3)]

    assert [e["seq"] for e in written] == [1, 2, 3] and disk.lines == [1, 1, 1]
    assert disk.threads == [KERNEL] * 3 and writer._writer == 0
    assert disk.durable == writer.path.stat().st_size  # each returned once its fsync was done
    assert audit_check.verify(writer.path)[1].startswith("intact: 3 entries")


async def test_the_lines_queued_in_one_turn_of_the_loop_share_one_fsync(
    writer: audit_log.AuditLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = Disk(writer, monkeypatch)
    with anyio.fail_after(10):
        assert (await writer.append_async(line("first", 0)))["seq"] == 1
        together = [writer.append_async(line("together", n)) for n in range(3)]
        written = [entry["seq"] for entry in await asyncio.gather(*together)]

    assert written == [2, 3, 4] and disk.lines == [1, 3] and disk.fsyncs == 2
    assert disk.durable == writer.path.stat().st_size
    assert audit_check.verify(writer.path)[1].startswith("intact: 4 entries")


async def test_a_failed_fsync_on_the_loop_fails_every_line_of_its_batch_with_its_errno_and_the_chain_goes_on(
    writer: audit_log.AuditLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = Disk(writer, monkeypatch)
    disk.fail, disk.fails_with = {1}, errno.ENOSPC  # a full disk: the IT person reads why
    outcomes: list[Any] = []

    async def appender(n: int) -> None:
        try:
            outcomes.append((await writer.append_async(line("task", n)))["seq"])
        except OSError as exc:
            outcomes.append(exc.errno)

    async with anyio.create_task_group() as group:  # both queue before the loop writes: one batch
        group.start_soon(appender, 0)
        group.start_soon(appender, 1)

    assert outcomes == [errno.ENOSPC, errno.ENOSPC] and disk.lines == [2]
    assert disk.threads == [KERNEL]
    assert (await writer.append_async(line("after", 0)))["seq"] == 3
    assert audit_check.verify(writer.path)[1].startswith("intact: 3 entries")


async def test_the_loop_serves_on_while_the_kernel_syncs_and_the_lines_meanwhile_go_out_together_next(
    writer: audit_log.AuditLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = Disk(writer, monkeypatch)
    disk.pause = 0.2  # a slow disk: it holds no turn of the loop
    ticks, seqs = [0], list[int]()

    async def appender(n: int) -> None:
        seqs.append((await writer.append_async(line("task", n)))["seq"])

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(ticking, ticks)
            async with anyio.create_task_group() as lines:
                lines.start_soon(appender, 0)
                await anyio.sleep(0.05)  # its fsync runs in the kernel
                for n in range(1, 4):
                    lines.start_soon(appender, n)
            group.cancel_scope.cancel()

    assert sorted(seqs) == [1, 2, 3, 4] and disk.lines == [1, 3] and disk.threads == [KERNEL, KERNEL]
    assert ticks[0] >= 100 and writer._writer == 0  # the loop turned through both fsyncs; no thread started
    assert disk.durable == writer.path.stat().st_size
    assert audit_check.verify(writer.path)[1].startswith("intact: 4 entries")


async def test_a_slow_write_moves_writing_off_the_loop_and_a_fast_one_brings_it_back(
    writer: audit_log.AuditLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = Disk(writer, monkeypatch)
    disk.write_pause = SLOW  # the write itself holds the loop: a disk that cannot keep up
    await writer.append_async(line("slow", 0))  # on the loop, as the disk was fast
    disk.write_pause = 0.0
    await writer.append_async(line("fast", 0))  # on the writer thread; a fast batch
    await writer.append_async(line("fast", 1))  # back on the loop

    assert disk.threads[0] == disk.threads[2] == KERNEL
    assert disk.threads[1] not in (KERNEL, threading.get_ident()) and writer._writer == os.getpid()
    assert audit_check.verify(writer.path)[1].startswith("intact: 3 entries")


async def test_without_linux_aio_a_slow_fsync_moves_writing_off_the_loop_and_a_fast_one_brings_it_back(
    writer: audit_log.AuditLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = Disk(writer, monkeypatch)
    without_aio(monkeypatch)
    loop = threading.get_ident()
    ticks = [0]

    async with anyio.create_task_group() as group:
        group.start_soon(ticking, ticks)
        disk.pause = SLOW  # a slow disk
        await writer.append_async(line("slow", 0))  # on the loop, as the disk was fast: the loop waited
        before = ticks[0]
        await writer.append_async(line("slow", 1))  # on the writer thread: the loop went on
        ticked = ticks[0] - before
        disk.pause = 0.0
        await writer.append_async(line("fast", 0))  # still off the loop; a fast batch
        await writer.append_async(line("fast", 1))  # back on the loop
        group.cancel_scope.cancel()

    assert disk.threads[0] == loop and disk.threads[3] == loop
    assert disk.threads[1] == disk.threads[2] != loop and writer._writer == os.getpid()
    assert ticked >= 10  # the loop ran during the slow fsync it no longer waited for
    assert audit_check.verify(writer.path)[1].startswith("intact: 4 entries")


async def test_when_the_kernel_refuses_the_fsync_the_loop_syncs_itself_from_then_on(
    writer: audit_log.AuditLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = Disk(writer, monkeypatch)
    disk.aio.refuse = True  # io_submit refuses (a file system without AIO fsync): nothing was synced
    assert (await writer.append_async(line("refused", 0)))["seq"] == 1
    disk.aio.refuse = False
    assert (await writer.append_async(line("after", 0)))["seq"] == 2

    assert disk.threads == [threading.get_ident()] * 2 and disk.durable == writer.path.stat().st_size
    assert audit_check.verify(writer.path)[1].startswith("intact: 2 entries")


async def test_when_the_kernel_refuses_an_aio_context_the_loop_syncs_itself_and_says_so_once(
    writer: audit_log.AuditLog, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    disk = Disk(writer, monkeypatch)
    disk.aio.refuse_setup = True
    monkeypatch.setattr(audit_aio, "_unavailable", [])  # what this test finds is forgotten after it
    other = audit_log.AuditLog(writer.path.with_name("other.jsonl"))
    with caplog.at_level("INFO", logger=audit_aio.__name__):
        for log in (writer, other, writer):
            await log.append_async(line("no aio", 0))

    assert disk.threads == [threading.get_ident()] * 3 and writer._writer == other._writer == 0
    assert [r.getMessage() for r in caplog.records] == ["audit fsync without Linux AIO: the event loop waits for it"]
    assert audit_check.verify(writer.path)[1].startswith("intact: 2 entries")


def test_a_loop_that_ends_while_its_batch_syncs_leaves_the_log_to_the_next_loop(
    writer: audit_log.AuditLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = Disk(writer, monkeypatch)
    disk.pause = 0.3

    async def abandoned() -> None:
        asyncio.get_running_loop().create_task(writer.append_async(line("abandoned", 0)))
        await asyncio.sleep(0.05)  # its batch waits for the kernel; then the loop ends, cancelling both

    asyncio.run(abandoned())
    assert not writer._writing  # the batch ended (its line unconfirmed, not durable to anyone)

    async def later() -> dict[str, Any]:
        return await writer.append_async(line("later", 0))

    assert asyncio.run(later())["seq"] == 2  # chained after the line the file holds
    assert audit_check.verify(writer.path)[1].startswith("intact: 2 entries")


async def test_on_linux_the_loop_hands_its_fsync_to_the_kernel(writer: audit_log.AuditLog) -> None:
    """The real kernel, through caio: lines durable and chained, the loop's context open; a descriptor the kernel
    cannot fsync by AIO (a pipe) is refused before anything ran, which lets the loop fsync instead."""
    written = [await writer.append_async(line("real", n)) for n in range(3)]

    assert [e["seq"] for e in written] == [1, 2, 3] and writer._writer == 0
    assert isinstance(writer._aio[asyncio.get_running_loop()], audit_aio.LoopFsync)
    assert audit_check.verify(writer.path)[1].startswith("intact: 3 entries")
    fsync = audit_aio.open_on(asyncio.get_running_loop())
    assert fsync is not None
    read, write = os.pipe()
    try:
        with pytest.raises(audit_aio.NotSubmitted):
            await fsync.fsync(write)
    finally:
        fsync.close()
        os.close(read)
        os.close(write)


async def test_a_listen_stream_open_holds_no_line_back(service_app: FastAPI, tmp_path: Path) -> None:
    """A stream stays open: the lines of calls meanwhile go out without it, and its own when it ends."""
    path = tmp_path / "audit.jsonl"
    server = server_for(service_app, audit_log=path)
    async with (
        Client(server, mode="2026-07-28", cache=None) as client,
        client.listen(resource_subscriptions=["asrama://anak/A001"]),
    ):
        with anyio.fail_after(10):
            for _ in range(3):
                assert not (await client.call_tool("detail_anak", {"id_anak": "A001"})).is_error
    assert [e["method"] for e in entries(path)] == ["tools/call"] * 3 + ["subscriptions/listen"]
