"""The change feed between real `mcp-asrama service` processes: a write through one process reaches a stream of
another (on PostgreSQL by NOTIFY, well under the 2 s poll), and SIGTERM ends a process with streams open."""

import signal
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.conftest import TOKEN
from tests.e2e.conftest import EXECUTABLE, clean_env, free_port, start, stop, wait_until_up
from tests.service.test_perubahan import head_frame, opened, roll_call

pytestmark = pytest.mark.anyio


@pytest.fixture
def services(tutorial_db: str, tmp_path: Path) -> Iterator[list[tuple[str, subprocess.Popen[Any]]]]:
    """Two service processes on the tutorial's database (heartbeat every 0.2 s): their URLs and processes."""
    env = clean_env(ASRAMA_SERVICE_TOKEN=TOKEN, XDG_DATA_HOME=str(tmp_path), ASRAMA_PERUBAHAN_PING="0.2")
    running: list[tuple[str, subprocess.Popen[Any]]] = []
    try:
        for name in ("a", "b"):
            port, log = free_port(), tmp_path / f"service-{name}.log"
            process = start([EXECUTABLE, "service", "--port", str(port), "--buat", "--db", tutorial_db], env, log)
            running.append((f"http://127.0.0.1:{port}", process))
            wait_until_up(port, process, log)
        yield running
    finally:
        for _, process in running:
            if process.poll() is None:
                stop(process)


@asynccontextmanager
async def client_of(url: str) -> AsyncIterator[httpx2.AsyncClient]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx2.AsyncClient(base_url=url, headers=headers, timeout=10) as client:
        yield client


async def test_a_write_through_one_process_reaches_a_stream_of_the_other(
    services: list[tuple[str, subprocess.Popen[Any]]], tutorial_db: str
) -> None:
    (url_a, _), (url_b, _) = services
    latencies = []
    async with client_of(url_a) as a, client_of(url_b) as b, opened(a) as stream:
        assert await head_frame(stream) == 0
        for offset in (-2, -1, 0):
            started = time.monotonic()
            await roll_call(b, offset)
            changes = await stream.changes(3)
            latencies.append(time.monotonic() - started)
            assert {c["tanggal"] for c in changes} == {(changes[0]["tanggal"])}
    latencies.sort()
    if tutorial_db.startswith("postgresql"):
        assert latencies[1] < 0.6, latencies  # NOTIFY, not the 2 s poll
    else:
        assert latencies[-1] < 3.0, latencies  # another process's commit on SQLite: the poll


async def test_sigterm_ends_a_service_with_open_streams(services: list[tuple[str, subprocess.Popen[Any]]]) -> None:
    (url_a, process_a), _ = services
    async with client_of(url_a) as a, opened(a) as first, opened(a) as second:
        await head_frame(first)
        await head_frame(second)
        started = time.monotonic()
        process_a.send_signal(signal.SIGTERM)
        assert await first.ended() and await second.ended()
        # uvicorn stops serving, then raises the signal again for its default action.
        assert process_a.wait(timeout=10) in (0, -signal.SIGTERM)
        assert time.monotonic() - started < 5
