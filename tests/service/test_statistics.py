"""SQLite's planner statistics: a start analyses the tables that hold rows but have no statistics, a bulk fill
(the demo school, an import) refreshes them, a pooled connection runs `PRAGMA optimize` as it closes; with them a
class's izin page starts from the few izin, not from every student of the class, and from the class when it is
small and izin are many. Plans are read with EXPLAIN QUERY PLAN of the statements the service's own search runs."""

from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event, insert, select, text
from sqlalchemy.orm import Session

from mcp_asrama.service import demo
from mcp_asrama.service.crud import izin as crud_izin
from mcp_asrama.service.crud.common import Paging
from mcp_asrama.service.db import analyse_if_needed, init_schema, make_engine, make_sessionmaker
from mcp_asrama.service.importer import import_file
from mcp_asrama.service.models import Anak, Izin, Kamar

TODAY = date(2026, 12, 1)


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = make_engine(f"sqlite:///{tmp_path / 'asrama.db'}")
    init_schema(engine)
    yield engine
    engine.dispose()


def _school(engine: Engine, *, students: dict[str, int], izin_of: Callable[[int, str], int]) -> None:
    """`students[kelas]` students per class (ids KELAS-N), and `izin_of(n, kelas)` izin for the n-th of each."""
    kamar = [{"nama": "Kamar 1", "gedung": "Putra", "kapasitas": 1000}]
    anak: list[dict[str, Any]] = []
    izin: list[dict[str, Any]] = []
    for kelas, count in students.items():
        for n in range(count):
            id_ = f"{kelas}-{n}"
            anak.append({"id": id_, "nama": f"Anak {kelas} {n:05d}", "kelas": kelas, "kamar": "Kamar 1"})
            for k in range(izin_of(n, kelas)):
                dari = TODAY - timedelta(days=3 * k + 1)
                izin.append(
                    {
                        "id": f"{id_}-{k}",
                        "id_anak": id_,
                        "dari": dari,
                        "sampai": dari + timedelta(days=1),
                        "jenis": "pulang",
                        "dibuat": datetime(2026, 11, 1, tzinfo=UTC),
                    }
                )
    with make_sessionmaker(engine)() as session, session.begin():
        session.execute(insert(Kamar).prefix_with("OR IGNORE"), kamar)  # a second call keeps the room
        for table, rows in ((Anak, anak), (Izin, izin)):
            if rows:
                session.execute(insert(table), rows)


def _plans(engine: Engine, run: Callable[[Session], object]) -> list[str]:
    """The query plan of every SELECT that `run` sends, each as its plan lines joined by " | "."""
    plans: list[str] = []

    def explain(conn: Any, _cursor: Any, statement: str, params: Any, _context: Any, many: bool) -> None:
        if statement.lstrip().upper().startswith("SELECT") and not many:
            rows = conn.connection.dbapi_connection.execute(f"EXPLAIN QUERY PLAN {statement}", params).fetchall()
            plans.append(" | ".join(str(row[-1]) for row in rows))

    event.listen(engine, "before_cursor_execute", explain)
    try:
        with make_sessionmaker(engine)() as session:
            run(session)
    finally:
        event.remove(engine, "before_cursor_execute", explain)
    return plans


def _izin_page(kelas: str) -> Callable[[Session], object]:
    def run(session: Session) -> object:
        total, page = crud_izin.search(
            session, Paging(limit=500), aktif=None, kelas=kelas, kamar=None, id_anak=None, today=TODAY
        )
        assert total == len(page)
        return page

    return run


def _analysed(engine: Engine) -> set[str]:
    with engine.connect() as conn:
        if conn.scalar(text("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'")) is None:
            return set()
        return set(conn.scalars(text("SELECT DISTINCT tbl FROM sqlite_stat1")))


def test_a_class_izin_page_with_few_izin_starts_from_izin_once_analysed(engine: Engine) -> None:
    # A large class and two izin in the whole school (the demo's 100,000 students have two).
    _school(engine, students={"7A": 3000, "8B": 3000}, izin_of=lambda n, kelas: int(kelas == "7A" and n in (5, 6)))
    assert {"anak", "izin"} <= set(analyse_if_needed(engine))
    assert {"anak", "izin"} <= _analysed(engine)
    plans = _plans(engine, _izin_page("7a"))
    assert len(plans) == 2  # the count and the page
    for plan in plans:
        assert plan.startswith("SCAN izin"), plan  # the two izin, then their students: not the class's 3,000
        assert "ix_anak_kelas_kunci" not in plan


def test_a_small_class_izin_page_with_many_izin_starts_from_the_class(engine: Engine) -> None:
    # 30 classes of 40 and three izin each (SQLite keeps no histograms: an average class size, as real schools have)
    _school(engine, students={f"{7 + n % 6}{'ABCDE'[n // 6]}": 40 for n in range(30)}, izin_of=lambda n, _kelas: 3)
    analyse_if_needed(engine)
    plans = _plans(engine, _izin_page("9C"))
    assert plans
    for plan in plans:
        assert plan.startswith("SEARCH anak USING "), plan
        assert plan.removeprefix("SEARCH anak USING ").removeprefix("COVERING ").startswith("INDEX ix_anak_kelas_kunci")
        assert "SEARCH izin USING" in plan and "SCAN izin" not in plan


def test_an_empty_or_analysed_database_is_not_analysed_again(engine: Engine) -> None:
    assert analyse_if_needed(engine) == ["jenis_pelanggaran"]  # a fresh database: the kinds of violation it seeds
    assert analyse_if_needed(engine) == []  # then nothing, start after start
    _school(engine, students={"7A": 10}, izin_of=lambda n, _kelas: 0)
    first = analyse_if_needed(engine)
    assert {"anak", "kamar"} <= set(first) and "izin" not in first
    assert analyse_if_needed(engine) == []
    _school(engine, students={"8B": 10}, izin_of=lambda n, _kelas: 1)  # izin now hold rows: only they are new
    assert analyse_if_needed(engine) == ["izin"]


def test_a_connection_that_used_an_unanalysed_table_analyses_it_as_it_closes(engine: Engine) -> None:
    _school(engine, students={"7A": 50}, izin_of=lambda n, _kelas: n % 2)
    assert "izin" not in _analysed(engine)
    with make_sessionmaker(engine)() as session:
        assert session.scalars(select(Izin.id).where(Izin.id_anak == "7A-1")).all() == ["7A-1-0"]
    engine.dispose()  # the pool closes its connections: PRAGMA optimize on each
    assert "izin" in _analysed(engine)


def test_the_demo_school_and_an_import_leave_statistics(tmp_path: Path, engine: Engine) -> None:
    assert demo.seed_demo(make_sessionmaker(engine), TODAY, students=40, days=2)
    assert {"anak", "izin", "absensi", "hafalan"} <= _analysed(engine)

    other = make_engine(f"sqlite:///{tmp_path / 'import.db'}")
    try:
        init_schema(other)
        rooms = tmp_path / "kamar.csv"
        rooms.write_text("nama,gedung,kapasitas\nKamar 9,Putra,20\n", encoding="utf-8")
        report = import_file(make_sessionmaker(other), "kamar", rooms)
        assert report.added == 1
        assert "kamar" in _analysed(other)
    finally:
        other.dispose()
