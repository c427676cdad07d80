"""What wakes this process's open change streams (`GET /perubahan`): a commit of this process (from any thread),
and on PostgreSQL the NOTIFY of a commit of any process, received on one LISTEN connection shared by all the
process's streams (opened with the first stream, closed with the last, reopened with backoff when PostgreSQL goes
away). Streams also read every `POLL_SECONDS` whatever wakes them, so a notification missed costs at most that.
"""

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

from sqlalchemy.engine import make_url

from mcp_asrama.service.crud.perubahan import CHANNEL

log = logging.getLogger(__name__)

POLL_SECONDS = 2.0  # the safety net: every stream reads at least this often
RETRY_FIRST, RETRY_MAX = 0.5, 10.0  # seconds between attempts to listen again (doubling)
# libpq keepalives: a LISTEN connection whose server vanished without a word is noticed within about 25 s.
_KEEPALIVES: dict[str, Any] = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3}


def listen_url(db_url: str) -> str | None:
    """The libpq URL to LISTEN on for a PostgreSQL `db_url` (SQLAlchemy form), None for SQLite."""
    url = make_url(db_url)
    if url.get_backend_name() != "postgresql":
        return None
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


class Feed:
    """The wake-ups of one process's change streams."""

    def __init__(self, db_url: str) -> None:
        self._url = listen_url(db_url)
        self._streams: set[asyncio.Event] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._listener: asyncio.Task[None] | None = None

    @property
    def streams(self) -> int:
        """How many streams are open."""
        return len(self._streams)

    @asynccontextmanager
    async def subscribe(self) -> AsyncIterator[asyncio.Event]:
        """An event set whenever changes may have been committed, while the context lasts."""
        self._loop = asyncio.get_running_loop()
        woken = asyncio.Event()
        self._streams.add(woken)
        if self._url is not None and (self._listener is None or self._listener.done()):
            self._listener = self._loop.create_task(self._listen(self._url))
        try:
            yield woken
        finally:
            self._streams.discard(woken)
            if not self._streams and self._listener is not None:
                self._listener.cancel()
                self._listener = None

    def wake(self) -> None:
        """Wake every stream; safe from any thread (commits run in the threadpool)."""
        loop = self._loop
        if loop is None or not self._streams:
            return
        with suppress(RuntimeError):  # the loop has closed: no stream is left to wake
            loop.call_soon_threadsafe(self._wake_all)

    def _wake_all(self) -> None:
        for woken in self._streams:
            woken.set()

    async def _listen(self, url: str) -> None:
        import psycopg

        delay = RETRY_FIRST
        while True:
            try:
                conninfo = psycopg.conninfo.make_conninfo(url, **_KEEPALIVES)
                async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    delay = RETRY_FIRST
                    self._wake_all()  # whatever was committed while nobody listened
                    async for _ in conn.notifies():
                        self._wake_all()
            except psycopg.Error as exc:
                log.warning(
                    "change feed: cannot listen to PostgreSQL (%s), trying again in %.1f s; streams poll meanwhile",
                    type(exc).__name__,
                    delay,
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX)
