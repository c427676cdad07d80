"""A lean data service on SQLite (issue 24): the pool keeps as many connections as the service serves at once, so a
connection's set-up (its PRAGMAs, its memory map) is paid once, not per request; `PRAGMA optimize` runs on a
connection taken back at most once per interval and on every connection at shutdown, never as a burst's extra
connection closes; every pooled connection keeps its protections."""

import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
import pytest
from sqlalchemy import Engine, create_engine, event, insert, text
from sqlalchemy.pool import NullPool

from mcp_asrama.config import ServiceSettings
from mcp_asrama.service.app import create_app
from mcp_asrama.service.db import SQLITE_BUSY_TIMEOUT_MS, SQLITE_OVERFLOW, SQLITE_POOL_SIZE, init_schema, make_engine
from mcp_asrama.service.models import Anak, Kamar
from tests.conftest import TOKEN, TUTORIAL_ABSENSI, TUTORIAL_ANAK, TUTORIAL_KAMAR, insert_rows, service_client

# A read through an index: `PRAGMA optimize` analyses only tables whose indexes the connection's queries used.
COUNT_8B = text("SELECT count(*) FROM anak WHERE kelas_kunci = '8b'")
STUDENTS = [{"id": f"B{n:03d}", "nama": f"Anak {n:03d}", "kelas": "8B", "kamar": "Al-Fatih 1"} for n in range(60)]


def _analysed(path: Path) -> set[str]:
    """The tables SQLite holds statistics for, read on a connection of its own (not the pool's)."""
    with closing(sqlite3.connect(path)) as conn:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").fetchone() is None:
            return set()
        return {row[0] for row in conn.execute("SELECT DISTINCT tbl FROM sqlite_stat1")}


def _fill(path: Path, *, students: bool = True) -> None:
    """The schema and a room, and (`students`) students in a table without statistics, stored without the pool."""
    engine = make_engine(f"sqlite:///{path}")
    try:
        init_schema(engine)
        with engine.begin() as conn:
            conn.execute(insert(Kamar), TUTORIAL_KAMAR[:1])
    finally:
        engine.dispose()
    if students:
        _add_students(path)


def _add_students(path: Path) -> None:
    """Students stored by an engine that never optimizes (not ours): their table stays without statistics."""
    plain = create_engine(f"sqlite:///{path}", poolclass=NullPool)
    try:
        with plain.begin() as conn:
            conn.execute(insert(Anak), STUDENTS)
    finally:
        plain.dispose()
    assert "anak" not in _analysed(path)


def _read_students(engine: Engine) -> None:
    with engine.connect() as conn:
        assert conn.scalar(COUNT_8B) == len(STUDENTS)


class Counter:
    """How many connections an engine opens and closes."""

    def __init__(self, engine: Engine) -> None:
        self.opened = self.closed = 0
        event.listen(engine, "connect", self._open)
        event.listen(engine, "close", self._close)

    def _open(self, *_: Any) -> None:
        self.opened += 1

    def _close(self, *_: Any) -> None:
        self.closed += 1


@pytest.fixture
def db_path(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "asrama.db"
    insert_rows(f"sqlite:///{path}", kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK, absensi=TUTORIAL_ABSENSI)
    yield path


@pytest.mark.anyio
async def test_200_requests_from_8_clients_reuse_the_pools_connections(db_path: Path) -> None:
    app = create_app(ServiceSettings(db_url=f"sqlite:///{db_path}", service_token=TOKEN))
    counter = Counter(app.state.engine)
    statuses: list[int] = []

    async def client_of_its_own(client: Any) -> None:
        for _ in range(25):
            statuses.append((await client.get("/anak/A001")).status_code)

    try:
        async with service_client(app) as client, anyio.create_task_group() as tasks:
            for _ in range(8):
                tasks.start_soon(client_of_its_own, client)
    finally:
        app.state.engine.dispose()
    assert statuses == [200] * 200
    # With 2 kept (before issue 24) this opened a connection every other request or so, each with its PRAGMAs.
    assert counter.opened <= SQLITE_POOL_SIZE
    assert counter.closed == counter.opened + 1  # none before the shutdown, which closes them and the start's


@pytest.mark.anyio
async def test_a_burst_of_72_at_once_is_served_and_the_pool_keeps_its_size(db_path: Path) -> None:
    """A sync route holds its session's connection until the answer is serialized, which takes a worker thread
    (40): with connections all held and every thread waiting for one, the pool's timeout (30 s) ends in 503s. That
    needs 40 + 40 requests at once now (2 + 13 kept and overflowing before issue 24 failed 40 of 60)."""
    app = create_app(ServiceSettings(db_url=f"sqlite:///{db_path}", service_token=TOKEN))
    counter = Counter(app.state.engine)
    statuses: list[int] = []

    async def one(client: Any) -> None:
        statuses.append((await client.get("/anak/A001")).status_code)

    try:
        async with service_client(app) as client, anyio.create_task_group() as tasks:
            for _ in range(72):
                tasks.start_soon(one, client)
        assert statuses == [200] * 72
        assert counter.opened <= SQLITE_POOL_SIZE + SQLITE_OVERFLOW
        assert app.state.engine.pool.checkedin() <= SQLITE_POOL_SIZE  # the burst's extra connections closed
    finally:
        app.state.engine.dispose()


def test_every_pooled_connection_keeps_its_protections(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'asrama.db'}", optimize_every=0)  # optimize on every return
    try:
        for _ in range(3):
            connections = [engine.connect() for _ in range(SQLITE_POOL_SIZE + 1)]
            for conn in connections:
                assert conn.scalar(text("PRAGMA journal_mode")) == "wal"
                assert conn.scalar(text("PRAGMA synchronous")) == 1  # NORMAL
                assert conn.scalar(text("PRAGMA foreign_keys")) == 1
                assert conn.scalar(text("PRAGMA busy_timeout")) == SQLITE_BUSY_TIMEOUT_MS  # restored after optimize
            for conn in connections:
                conn.close()
        assert SQLITE_POOL_SIZE + SQLITE_OVERFLOW == 40  # anyio's worker threads, which run the sync routes
    finally:
        engine.dispose()


def test_optimize_runs_on_a_returned_connection_once_the_interval_has_passed(tmp_path: Path) -> None:
    path = tmp_path / "asrama.db"
    _fill(path)
    engine = make_engine(f"sqlite:///{path}", optimize_every=0.5)
    try:
        _read_students(engine)
        assert "anak" not in _analysed(path)  # returned before the interval passed: not yet
        time.sleep(0.6)
        _read_students(engine)
        assert "anak" in _analysed(path)
    finally:
        engine.dispose()


def test_optimize_runs_at_shutdown_and_not_as_a_bursts_extra_connections_close(tmp_path: Path) -> None:
    path = tmp_path / "asrama.db"
    _fill(path)
    engine = make_engine(f"sqlite:///{path}")  # the default interval: an hour
    counter = Counter(engine)
    try:
        burst = [engine.connect() for _ in range(SQLITE_POOL_SIZE + 3)]
        for conn in burst:
            assert conn.scalar(COUNT_8B) == len(STUDENTS)
        for conn in reversed(burst):
            conn.close()
        assert counter.closed == 3  # the burst's extra connections: closed, unoptimized
        assert "anak" not in _analysed(path)
    finally:
        engine.dispose()
    assert counter.closed == SQLITE_POOL_SIZE + 3
    assert "anak" in _analysed(path)


@pytest.mark.anyio
async def test_the_services_shutdown_optimizes_the_tables_its_requests_read(tmp_path: Path) -> None:
    path = tmp_path / "asrama.db"
    _fill(path, students=False)
    app = create_app(ServiceSettings(db_url=f"sqlite:///{path}", service_token=TOKEN))
    _add_students(path)  # after the start (which analyses only the tables holding rows): by an import, say
    async with app.router.lifespan_context(app), service_client(app) as client:
        page = await client.get("/anak", params={"kelas": "8B", "limit": 100})
        assert page.status_code == 200 and page.json()["total"] == len(STUDENTS)
        assert "anak" not in _analysed(path)
    assert "anak" in _analysed(path)
