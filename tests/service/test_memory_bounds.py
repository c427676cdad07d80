"""What bounds the data service's memory on SQLite: each connection has a small private page cache and reads
through a memory map of the file, which the OS page cache holds once for all of them; eight connections stay open."""

from typing import Any

from sqlalchemy import text
from sqlalchemy.pool import QueuePool, SingletonThreadPool

from mcp_asrama.service.db import SQLITE_CACHE_KIB, SQLITE_MMAP_BYTES, SQLITE_OVERFLOW, SQLITE_POOL_SIZE, make_engine


def test_each_sqlite_connection_has_a_small_cache_and_the_memory_map(tmp_path: Any) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'asrama.db'}")
    try:
        with engine.connect() as first, engine.connect() as second:
            for conn in (first, second):
                assert conn.scalar(text("PRAGMA cache_size")) == -SQLITE_CACHE_KIB
                assert conn.scalar(text("PRAGMA mmap_size")) == SQLITE_MMAP_BYTES
                assert conn.scalar(text("PRAGMA journal_mode")) == "wal"
    finally:
        engine.dispose()


def test_eight_sqlite_connections_stay_open_and_a_burst_may_open_up_to_forty(tmp_path: Any) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'asrama.db'}")
    try:
        burst = [engine.connect() for _ in range(SQLITE_POOL_SIZE + SQLITE_OVERFLOW)]
        for conn in burst:
            assert conn.scalar(text("SELECT 1")) == 1
            conn.close()
        assert isinstance(engine.pool, QueuePool)
        assert engine.pool.checkedin() == SQLITE_POOL_SIZE == 8  # the others closed, their caches and maps too
        assert SQLITE_POOL_SIZE + SQLITE_OVERFLOW == 40  # anyio's worker threads
    finally:
        engine.dispose()


def test_an_in_memory_sqlite_database_keeps_its_own_pool() -> None:
    engine = make_engine("sqlite://")
    try:
        assert isinstance(engine.pool, SingletonThreadPool)  # which takes no pool_size/max_overflow of ours
        with engine.connect() as conn:
            assert conn.scalar(text("SELECT 1")) == 1
    finally:
        engine.dispose()
