"""PostgreSQL: each service process listens on one connection, which it opens again when it is lost (here cut by
pg_terminate_backend, as a restart of PostgreSQL would); meanwhile and after, streams go on, and another
process's writes arrive by NOTIFY again, well under the 2 s poll."""

import asyncio
import time

import pytest
from sqlalchemy import text

from mcp_asrama.service.db import make_engine
from tests.service.test_perubahan import head_frame, live, opened, roll_call

pytestmark = pytest.mark.anyio
LISTENERS = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'"


async def listeners(url: str, other_than: frozenset[int] = frozenset(), timeout: float = 10.0) -> set[int]:
    """The backends listening on `url`'s database, once one of them is not in `other_than`."""
    engine = make_engine(url)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with engine.connect() as conn:
                found = set(conn.scalars(text(LISTENERS)))
            if found - other_than:
                return found
            await asyncio.sleep(0.1)
    finally:
        engine.dispose()
    raise AssertionError("no service listens")


async def test_a_lost_listen_connection_is_opened_again(tutorial_db: str) -> None:
    if not tutorial_db.startswith("postgresql"):
        pytest.skip("LISTEN/NOTIFY is PostgreSQL's; SQLite wakes streams in process")
    async with live(tutorial_db) as (reader, _), live(tutorial_db) as (writer, _), opened(reader) as stream:
        await head_frame(stream)
        before = await listeners(tutorial_db)
        assert len(before) == 1  # one connection for the process, none for a process without streams
        engine = make_engine(tutorial_db)
        with engine.connect() as conn:
            conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": next(iter(before))})
        engine.dispose()
        assert not (await listeners(tutorial_db, other_than=frozenset(before))) & before
        latencies = []
        for offset in (-2, -1, 0):
            started = time.monotonic()
            await roll_call(writer, offset)
            await stream.changes(3)
            latencies.append(time.monotonic() - started)
    assert sorted(latencies)[1] < 0.6, latencies
