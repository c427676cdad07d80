"""The change feed's outbox: writes queue their changes with `catat`; the session's commit stores them in the same
transaction (`listen` hooks it in), so a write that is rolled back leaves no event and one that commits always does.

Ids are the newest plus one, taken as the last thing before the commit: on PostgreSQL under a transaction-level
advisory lock (released by the commit), so a transaction that takes ids commits before the next one can take any,
and ids become visible in commit order (a reader that has seen 45 can never later find a 44); SQLite has one writer
at a time anyway. No row lock is waited for while the advisory lock is held (pending rows are flushed first), so it
can add no deadlock. On PostgreSQL the same transaction sends NOTIFY (delivered on commit). Writers prune old
events now and then: always a prefix of ids, never the newest.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any, cast, get_args

from sqlalchemy import Connection, delete, event, func, insert, select, text
from sqlalchemy.orm import Session, SessionTransaction, sessionmaker

from mcp_asrama.contract import FEED_KINDS, FeedKind
from mcp_asrama.service.models import Anak, Perubahan

Jenis = FeedKind
"""A change's kind: the name of a domain with a feed (`contract.DOMAINS`)."""
JENIS: tuple[Jenis, ...] = get_args(FeedKind)
CHANNEL = "asrama_perubahan"  # PostgreSQL NOTIFY channel; the payload is the newest id
LOCK_KEY = 0x70657275626168  # the advisory lock taken while ids are given out: "perubah" in ASCII
_PENDING = "perubahan"  # session.info: the changes queued in this transaction
_STORED = "perubahan_disimpan"  # session.info: the newest id stored by the commit under way


def jenis(name: str) -> Jenis:
    """The feed kind of the domain `name`; ValueError when that domain has no feed."""
    if name not in FEED_KINDS:
        raise ValueError(f"no change feed for {name!r}")
    return cast(Jenis, name)


@dataclass(frozen=True)
class Retention:
    """How long events are kept (days) and how many at most; pruned every tenth of `maks` (at most every 100)."""

    hari: int = 7
    maks: int = 100_000

    @property
    def step(self) -> int:
        return max(1, min(100, self.maks // 10))


def catat(
    session: Session, jenis: Jenis, *, tanggal: date | None = None, id_anak: str | None = None, kamar: str | None = None
) -> None:
    """Queue one change of this transaction (begun if need be): its kind and keys (None: any of that kind may have
    changed)."""
    session.connection()
    session.info.setdefault(_PENDING, []).append(
        {"jenis": jenis, "tanggal": tanggal, "id_anak": id_anak, "kamar": kamar}
    )


def _store(session: Session, retention: Retention | None) -> None:
    """before_commit: the queued changes as rows with the next ids (see the module), and NOTIFY."""
    pending: list[dict[str, Any]] = session.info.pop(_PENDING, [])
    if not pending:
        return
    session.flush()  # every row lock this transaction needs, before the feed's lock
    postgres = session.get_bind().dialect.name == "postgresql"
    if postgres:
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": LOCK_KEY})
    before = head_of(session.connection())
    now = datetime.now(UTC)
    rows = [{**change, "id": before + n, "waktu": now} for n, change in enumerate(pending, start=1)]
    session.execute(insert(Perubahan), rows)
    newest = before + len(rows)
    if postgres:
        session.execute(text("SELECT pg_notify(:channel, :newest)"), {"channel": CHANNEL, "newest": str(newest)})
    if retention is not None and before // retention.step != newest // retention.step:
        _prune(session, retention, newest, now)
    session.info[_STORED] = newest


def _prune(session: Session, retention: Retention, newest: int, now: datetime) -> None:
    """Delete the events older than `retention.hari` days or beyond the newest `retention.maks`: the ids up to the
    newest such one (a prefix, so a reader's resume point is before or after every gap), never the newest event."""
    aged = session.scalar(select(func.max(Perubahan.id)).where(Perubahan.waktu < now - timedelta(days=retention.hari)))
    bound = min(max(aged or 0, newest - retention.maks), newest - 1)
    if bound > 0:
        session.execute(delete(Perubahan).where(Perubahan.id <= bound))


def _forget(session: Session, transaction: SessionTransaction) -> None:
    """When a transaction ends (committed, rolled back, closed), nothing it queued is left for the next one."""
    if transaction.parent is None:
        session.info.pop(_PENDING, None)
        session.info.pop(_STORED, None)


def listen(sessions: sessionmaker[Session], retention: Retention | None = None) -> None:
    """Store the changes queued in these sessions with each commit (pruning by `retention` when given)."""
    event.listen(sessions, "before_commit", lambda session: _store(session, retention))
    event.listen(sessions, "after_transaction_end", _forget)


def on_commit(sessions: sessionmaker[Session], callback: Callable[[int], None]) -> None:
    """Call `callback(newest id)` after each commit of these sessions that stored changes."""

    def committed(session: Session) -> None:
        newest = session.info.pop(_STORED, None)
        if newest is not None:
            callback(newest)

    event.listen(sessions, "after_commit", committed)


def head_of(conn: Connection) -> int:
    """The newest event's id (0: none)."""
    return int(conn.scalar(select(func.max(Perubahan.id))) or 0)


def oldest_of(conn: Connection) -> int | None:
    """The oldest retained event's id (None: none)."""
    return conn.scalar(select(func.min(Perubahan.id)))


def after(conn: Connection, since: int, limit: int) -> list[dict[str, Any]]:
    """Up to `limit` events after id `since`, oldest first: id, jenis and the keys, with the named student's room
    and class as they are when read (so a reader can tell only those who may see the student; null for a
    student no longer stored)."""
    t = Perubahan
    query = (
        select(
            t.id,
            t.jenis,
            t.tanggal,
            t.id_anak,
            func.coalesce(t.kamar, Anak.kamar).label("kamar"),
            Anak.kelas,
        )
        .outerjoin(Anak, Anak.id == t.id_anak)
        .where(t.id > since)
        .order_by(t.id)
        .limit(limit)
    )
    return [dict(row) for row in conn.execute(query).mappings()]
