"""What bounds the data service's memory on SQLite: each pooled connection has a small private page cache and
reads through a memory map of the file, which the OS page cache holds once for all of them."""

from typing import Any

from sqlalchemy import text

from mcp_asrama.service.db import SQLITE_CACHE_KIB, SQLITE_MMAP_BYTES, make_engine


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
