"""Group commit of the audit file: the lines of concurrent callers share one write and one fsync, each caller returns
only once the fsync covering its line succeeded, and a failed batch fails every caller in it (fail closed).

`os.fsync` and `os.write` are wrapped (the OS, not our component) to count them, hold the first fsync until the
other callers wait, fail one, or rotate the file between two batches as logrotate may.
"""

import errno
import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastapi import FastAPI
from mcp import Client
from mcp_types import CallToolResult

from mcp_asrama.server.guard import audit, audit_check, audit_log
from tests.server.conftest import server_for

pytestmark = pytest.mark.anyio

REAL_FSYNC, REAL_WRITE = os.fsync, os.write


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def line(subject: str, n: int) -> dict[str, Any]:
    return {"time": "t", "event": "request", "subject": subject, "method": "tools/call", "n": n}


class Disk:
    """Wraps `os.fsync` and `os.write`: counts them, records the bytes made durable, and on the k-th fsync (from 1)
    waits first until `hold[k]` lines queue behind it, fails (`fail`), or moves the file away after it (`rotate`)."""

    def __init__(self, writer: audit_log.AuditLog, monkeypatch: pytest.MonkeyPatch) -> None:
        self.writer, self.fsyncs, self.writes, self.durable = writer, 0, 0, 0
        self.hold: dict[int, int] = {}
        self.fail: set[int] = set()
        self.rotate: set[int] = set()
        self.rotated: list[Path] = []
        self.pause = 0.0
        monkeypatch.setattr(os, "fsync", self.fsync)
        monkeypatch.setattr(os, "write", self.write)

    def queued(self) -> int:
        with self.writer._turn:
            return len(self.writer._queue)

    def write(self, fd: int, data: Any) -> int:
        self.writes += 1
        return REAL_WRITE(fd, data)

    def fsync(self, fd: int) -> None:
        self.fsyncs += 1  # one batch at a time in the process: no race
        k = self.fsyncs
        if k in self.hold:
            deadline = time.monotonic() + 20
            while self.queued() < self.hold[k]:
                assert time.monotonic() < deadline, "the other callers never queued"
                time.sleep(0.001)
        time.sleep(self.pause)
        if k in self.fail:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        REAL_FSYNC(fd)
        self.durable = os.fstat(fd).st_size
        if k in self.rotate:
            moved = self.writer.path.with_suffix(f".{len(self.rotated) + 1}")
            self.writer.path.rename(moved)
            self.rotated.append(moved)


def concurrently(calls: list[Callable[[], Any]]) -> list[Future[Any]]:
    """Run every call in a thread of its own, all at once; their futures once all ended."""
    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        futures = [pool.submit(call) for call in calls]
    return futures


def held_batch(writer: audit_log.AuditLog, disk: Disk, followers: list[dict[str, Any]]) -> list[Future[Any]]:
    """One line whose fsync is held until every follower's line waits in the queue, then the followers' lines."""
    disk.hold[1] = len(followers)
    with ThreadPoolExecutor(max_workers=len(followers) + 1) as pool:
        first = pool.submit(writer.append, line("first", 0))
        while disk.fsyncs < 1:
            time.sleep(0.001)
        futures = [first, *(pool.submit(writer.append, fields) for fields in followers)]
    return futures


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "audit.jsonl"


def test_concurrent_lines_share_fsyncs_and_each_returns_only_once_its_line_is_durable(
    log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = audit_log.AuditLog(log_path)
    disk = Disk(writer, monkeypatch)
    disk.pause = 0.002  # a disk's fsync takes time: the other threads queue meanwhile
    threads, each = 8, 25

    def appender(subject: str) -> list[tuple[int, int]]:
        seen = []
        for n in range(each):
            written = writer.append(line(subject, n))
            seen.append((written["seq"], disk.durable))  # how far the file was durable when it returned
        return seen

    futures = concurrently([lambda s=f"t{i}": appender(s) for i in range(threads)])
    returned = [seen for future in futures for seen in future.result()]

    raw = log_path.read_bytes().splitlines(keepends=True)
    ends = [sum(len(r) for r in raw[: i + 1]) for i in range(len(raw))]
    assert len(raw) == threads * each
    assert sorted(seq for seq, _ in returned) == list(range(1, threads * each + 1))
    assert all(ends[seq - 1] <= durable for seq, durable in returned)  # no caller returned before its fsync
    for i in range(threads):
        assert [e["n"] for e in entries(log_path) if e["subject"] == f"t{i}"] == list(range(each))
    assert disk.fsyncs < threads * each  # lines shared fsyncs
    assert disk.writes == disk.fsyncs  # one write per batch
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

    for future in concurrently([lambda s=f"t{i}": appender(s) for i in range(threads)]):
        future.result()

    files = [*disk.rotated, log_path]
    assert len(files) == 4
    kept: list[tuple[str, int]] = []
    for path in files:
        logged = entries(path)
        assert logged, f"{path.name} got no line: the rotation was not mid-stream"
        assert [e["seq"] for e in logged] == list(range(1, len(logged) + 1))  # each new file starts at genesis
        intact, verdict = audit_check.verify(path)
        assert intact, verdict
        kept += [(e["subject"], e["n"]) for e in logged]
    assert sorted(kept) == sorted((f"t{i}", n) for i in range(threads) for n in range(each))


WRITER = textwrap.dedent(
    """
    import json, sys, threading, time
    from pathlib import Path
    from mcp_asrama.server.guard.audit_log import AuditLog

    path, name, go = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[5])
    threads, each = int(sys.argv[3]), int(sys.argv[4])
    writer = AuditLog(path)
    Path(f"{go}.{name}").touch()  # ready
    while not go.exists():
        time.sleep(0.001)

    def the_other_has_written():
        try:
            return any(json.loads(line)["subject"] != name for line in path.read_bytes().splitlines())
        except ValueError:  # a line read while it was being written
            return False

    def appender(t):
        for n in range(each):
            if n == each // 2:  # halfway, wait for the other process: the batches interleave however busy the machine
                deadline = time.monotonic() + 30
                while not the_other_has_written() and time.monotonic() < deadline:
                    time.sleep(0.001)
            writer.append({"time": "t", "event": "request", "subject": name, "method": "tools/call", "n": [t, n]})

    workers = [threading.Thread(target=appender, args=(t,)) for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    """
)


def test_threads_in_two_processes_keep_one_chain(log_path: Path, tmp_path: Path) -> None:
    go, threads, each = tmp_path / "go", 4, 20
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASRAMA_")}
    command = [sys.executable, "-c", WRITER, str(log_path)]
    writers = [subprocess.Popen([*command, name, str(threads), str(each), str(go)], env=env) for name in ("p1", "p2")]
    try:
        deadline = time.monotonic() + 30
        while not all(go.with_name(f"go.{name}").exists() for name in ("p1", "p2")):
            assert time.monotonic() < deadline and all(w.poll() is None for w in writers)
            time.sleep(0.01)
        go.touch()
        assert [w.wait(timeout=60) for w in writers] == [0, 0]
    finally:
        for writer in writers:
            writer.kill()

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
    """Eight `cari_anak` calls at once through a server auditing to `path`; the first line's fsync held until the
    seven others wait, the fsyncs numbered in `fail` failing."""
    server = server_for(app, audit_log=path)
    [auditor] = [m for m in server.middleware if isinstance(m, audit.Auditor)]
    disk = Disk(auditor.log, monkeypatch)
    disk.hold[1], disk.fail = 7, fail
    results: list[CallToolResult] = []
    async with Client(server, mode="2026-07-28", cache=None) as client:

        async def call() -> None:
            results.append(await client.call_tool("cari_anak", {"kelas": "7A"}))

        async with anyio.create_task_group() as group:
            for _ in range(8):
                group.start_soon(call)
    return results, disk


async def test_eight_requests_at_once_share_two_fsyncs_and_each_answers(
    service_app: FastAPI, log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results, disk = await eight_calls(service_app, log_path, monkeypatch, fail=set())

    assert [r.is_error for r in results] == [False] * 8
    assert all(r.structured_content and r.structured_content["data"] for r in results)
    assert disk.fsyncs == 2
    assert [e["outcome"] for e in entries(log_path)] == ["ok"] * 8
    assert audit_check.verify(log_path)[0]


async def test_requests_of_a_batch_whose_fsync_failed_get_no_data(
    service_app: FastAPI, log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results, disk = await eight_calls(service_app, log_path, monkeypatch, fail={2})

    withheld = [r for r in results if r.is_error]
    assert (len(withheld), disk.fsyncs) == (7, 2)  # the whole second batch; the first call's line was durable
    assert all([getattr(c, "text", None) for c in r.content] == [audit.WITHHELD] for r in withheld)
    assert all(r.structured_content is None for r in withheld)
