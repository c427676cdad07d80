"""What every domain's queries share: the dialect, upsert, which ids exist, one page of a student's records, whether
the database is empty, the names' keys, rows as the driver returns them, a rekap summed and cut by the database."""

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Connection, Executable, func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from mcp_asrama.names import fold
from mcp_asrama.service.crud.kamar import refuse_clashes
from mcp_asrama.service.models import Anak, Base, Kamar
from mcp_asrama.service.models.anak import NAME_KEYS

log = logging.getLogger(__name__)


def dialect(session: Session) -> str:
    return session.get_bind().dialect.name


def plain_rows(session: Session, query: Executable) -> list[Any]:
    """Every row of `query` as the driver returns it, without SQLAlchemy's rows or type processing: for 100,000 rows
    of text and numbers only (which every driver returns as Python's own), about 0.05 s less a query."""
    return list(session.connection().execute(query).cursor.fetchall())


def by_codepoint(session: Session, column: Any) -> Any:
    """`column` ordered by code point, as Python orders strings, whatever the database's collation (SQLite's default
    BINARY already does: UTF-8 bytes sort as their code points)."""
    return column.collate("C") if dialect(session) == "postgresql" else column


@dataclass(frozen=True)
class Rekap:
    """Numbers over a range of days: how many students have any, the numbers in all, and the first students (or
    all), each with theirs."""

    jumlah_anak: int
    total: dict[str, int]
    per_anak: list[dict[str, Any]]


def ranked(
    session: Session,
    source: Any,
    students: Sequence[Any],
    numbers: dict[str, Any],
    where: Sequence[ColumnElement[bool]],
    first: Sequence[Any],
    limit: int | None,
) -> Rekap:
    """A `Rekap` of the rows of `source` (one a student) that `where` keeps: `students` (id, nama, kelas, kamar) and
    `numbers` (name: expression) of each, the first `limit` (or all) ordered by `first`, then by name and id in code
    point order. Summed, counted and sorted by the database (window sums): it sends only the rows asked for."""
    columns = list(numbers.values())
    query = (
        select(*students, *columns, func.count().over(), *(func.sum(c).over() for c in columns))
        .select_from(source)
        .where(*where)
        .order_by(*first, by_codepoint(session, students[1]), by_codepoint(session, students[0]))
        .limit(limit)
    )
    rows = plain_rows(session, query)
    width = len(students) + len(columns)
    if not rows:
        return Rekap(0, dict.fromkeys(numbers, 0), [])
    shown = []
    for row in rows:
        id_, nama, kelas, kamar, *values = row[:width]
        counts = dict(zip(numbers, map(int, values), strict=True))
        shown.append({"id_anak": id_, "nama": nama, "kelas": kelas, "kamar": kamar, **counts})
    total = dict(zip(numbers, map(int, rows[0][width + 1 :]), strict=True))
    return Rekap(jumlah_anak=int(rows[0][width]), total=total, per_anak=shown)


def upsert(session: Session, model: type[Base], rows: Sequence[dict[str, Any]], key: Iterable[str]) -> None:
    """Insert `rows` into `model`'s table, updating the rows whose `key` columns already exist; a name's key column
    follows the name (`NAME_KEYS`). Rooms: NameClash when a new name folds onto a stored room's or another row's."""
    if not rows:
        return
    if model is Kamar:
        refuse_clashes(session, [row["nama"] for row in rows])
    key = list(key)
    insert = postgresql.insert if dialect(session) == "postgresql" else sqlite.insert
    statement = insert(model)
    names = NAME_KEYS.get(model.__tablename__, {})
    written = [*rows[0], *(names[c] for c in rows[0] if c in names)]
    updates = {c: statement.excluded[c] for c in written if c not in key}
    session.execute(statement.on_conflict_do_update(index_elements=key, set_=updates), rows)


def existing_ids(session: Session, column_: Any, ids: Sequence[str], chunk: int = 500) -> set[str]:
    """Which of `ids` are already stored in `column_`."""
    found: set[str] = set()
    for start in range(0, len(ids), chunk):
        found.update(session.scalars(select(column_).where(column_.in_(ids[start : start + chunk]))))
    return found


@dataclass(frozen=True)
class Paging:
    """One page of a list: at most `limit` rows after the first `offset`."""

    limit: int = 100
    offset: int = 0


Join = tuple[Any, ColumnElement[bool]]
"""A table joined, and on what."""


def page(
    session: Session,
    model: Any,
    filters: Iterable[ColumnElement[bool]],
    paging: Paging,
    *,
    order: Sequence[Any],
    extra: Sequence[Any] = (),
    joins: Sequence[Join] = (),
) -> tuple[int, list[tuple[Any, ...]]]:
    """`model`'s records matching `filters`, each with its student and the `extra` columns (of `joins`): (how
    many, one page in `order`)."""
    base = select(model, Anak, *extra).join(Anak, Anak.id == model.id_anak)
    for target, on in joins:
        base = base.join(target, on)
    base = base.where(*filters)
    total = session.scalar(select(func.count()).select_from(base.subquery())) or 0
    rows = session.execute(base.order_by(*order).limit(paging.limit).offset(paging.offset))
    return total, [tuple(row) for row in rows]


def is_empty(session: Session) -> bool:
    """True when the database holds no student and no room."""
    return session.scalar(select(Anak.id).limit(1)) is None and session.scalar(select(Kamar.nama).limit(1)) is None


def rekey_names(conn: Connection) -> int:
    """Give the names that another tool wrote straight into the tables (without a key, or keeping the key of a
    former name) their key, so that filters find them; run at start, it writes only when one is wrong. One read of
    each name column's distinct (name, key) pairs; the number of names re-keyed is logged (never the names)."""
    wrong = 0
    for table_name, keys in NAME_KEYS.items():
        table = Base.metadata.tables[table_name]
        for name, key in keys.items():
            pairs = conn.execute(select(table.c[name], table.c[key]).distinct()).all()
            for value in {n for n, k in pairs if k != (None if n is None else fold(n))}:
                same = table.c[name].is_(None) if value is None else table.c[name] == value
                conn.execute(update(table).where(same).values({key: None if value is None else fold(value)}))
                wrong += 1
    if wrong:
        log.warning("%d room or class names had no key or a stale one (written by another tool): re-keyed", wrong)
    return wrong
