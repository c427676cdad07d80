"""Kept aggregates (issue 24 item 2): on random schools written every way (roll calls, corrections and removals,
deposits through the service, an import, and another tool's own INSERT, UPDATE and DELETE), `/hafalan/progres` and
`/absensi/rekap` answer exactly as the recount they replaced (kept here, in `tests.service.aggregate_oracle`, as
the oracle), for many days, ranges and filters, on SQLite and PostgreSQL; revision 0009 fills them from a 0008
database's rows; the demo school is stored with them."""

import random
import secrets
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest
from sqlalchemy import Engine, column, event, func, insert, select, table, text

from mcp_asrama import quran
from mcp_asrama.service import demo
from mcp_asrama.service.crud import absensi as crud_absensi
from mcp_asrama.service.crud import hafalan as crud_hafalan
from mcp_asrama.service.crud.absensi import Catatan
from mcp_asrama.service.db import make_engine, make_sessionmaker
from mcp_asrama.service.importer import import_file
from mcp_asrama.service.migrations import upgrade
from mcp_asrama.service.models.agregat import HafalanProgres, HafalanProgresBasi
from mcp_asrama.service.schemas.common import STATUS_ABSENSI
from tests.conftest import TUTORIAL_KAMAR, insert_rows, serve_db
from tests.migration_support import school_at
from tests.service.aggregate_oracle import old_progres, old_rekap

pytestmark = pytest.mark.anyio

TODAY = date.today()
KELAS = ["7A", "8B", "9C"]
ROOMS = [k["nama"] for k in TUTORIAL_KAMAR]


def students(rng: random.Random, n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"R{i:03d}",
            "nama": rng.choice(["Ahmad", "Budi", "Citra", "Dewi"]) + f" {rng.randint(1, 4)}",  # names repeat
            "kelas": rng.choice(KELAS),
            "kamar": rng.choice([*ROOMS, None]),
            "status": "aktif",
        }
        for i in range(n)
    ]


def a_day(rng: random.Random, span: int = 400) -> date:
    return TODAY - timedelta(days=rng.choice([0, 1, 2, 27, 28, 29, rng.randint(0, span)]))


def a_range(rng: random.Random, *, valid: bool) -> tuple[int, int, int]:
    surah = rng.randint(1, 114) if valid or rng.random() < 0.7 else rng.choice([0, 115, 200])
    length = quran.surah(surah).jumlah_ayat if 1 <= surah <= 114 else 300
    first = rng.randint(1, length)
    last = rng.randint(first, length) if valid else rng.choice([first - 1, length + 3, 290, first])
    return surah, first, max(last, 0)


def deposit(rng: random.Random, id_anak: str, *, valid: bool = True, day: date | None = None) -> dict[str, Any]:
    surah, first, last = a_range(rng, valid=valid)
    return {
        "id_anak": id_anak,
        "tanggal": (day or a_day(rng)).isoformat(),
        "jenis": "ziyadah" if rng.random() < 0.8 else "murajaah",
        "surah": surah,
        "ayat_mulai": first,
        "ayat_selesai": last,
    }


def assert_same_answers(engine: Engine, rng: random.Random, ids: list[str]) -> None:
    """Progress on many days and rekap over many ranges, with and without filters: kept == recounted."""
    filters: list[dict[str, Any]] = [
        {"kelas": None, "kamar": None, "id_anak": None},
        {"kelas": ["8B"], "kamar": None, "id_anak": None},
        {"kelas": None, "kamar": [ROOMS[0]], "id_anak": None},
        {"kelas": ["7a", "9C"], "kamar": [ROOMS[1]], "id_anak": None},
        {"kelas": None, "kamar": None, "id_anak": rng.choice(ids)},
    ]
    days = [
        TODAY,
        TODAY - timedelta(days=1),
        TODAY - timedelta(days=27),
        TODAY - timedelta(days=30),
        TODAY + timedelta(days=3),
    ]
    days += [a_day(rng) for _ in range(4)]
    with make_sessionmaker(engine)() as session:
        for where in filters:
            for today in days:
                old = old_progres(session, today=today, **where)
                for limit in (None, 1, 5, 100):  # with a limit the database sorts and cuts (unless one is stale)
                    school = crud_hafalan.progres(session, today=today, limit=limit, **where)
                    assert school.data == old[:limit]
                    assert (school.jumlah_anak, school.ayat) == (len(old), sum(p.ayat for p in old))
                    assert school.juz == pytest.approx(sum(p.juz for p in old))
            for _ in range(12):
                dari = a_day(rng, 120)
                sampai = dari + timedelta(days=rng.choice([0, 1, 6, 29, 30, 90]))
                rows = old_rekap(session, dari, sampai, **where)
                for limit in (None, 1, 3):
                    got = crud_absensi.rekap_absensi(session, dari, sampai, limit=limit, **where)
                    assert got.per_anak == rows[:limit] and got.jumlah_anak == len(rows)
                    assert got.total == {k: sum(r[k] for r in rows) for k in (*STATUS_ABSENSI, "tidak_hadir")}


def a_school(db_url: str, rng: random.Random, n: int, *, days_each: int) -> list[str]:
    """`n` students stored with attendance on up to `days_each` random days each; their ids."""
    anak = students(rng, n)
    ids = [a["id"] for a in anak]
    days = [{"tanggal": a_day(rng, 60), "id_anak": i, "status": rng.choice(STATUS_ABSENSI)} for i in ids * days_each]
    absensi = list({(r["tanggal"], r["id_anak"]): r for r in days}.values())
    insert_rows(db_url, kamar=TUTORIAL_KAMAR, anak=anak, absensi=absensi)
    return ids


def roll_call(rng: random.Random, ids: list[str]) -> list[dict[str, Any]]:
    return [
        {"id_anak": i, "status": rng.choice(STATUS_ABSENSI), "keterangan": rng.choice([None, "x"])}
        for i in rng.sample(ids, rng.randint(1, len(ids)))
    ]


async def test_kept_answers_equal_the_recount_after_every_kind_of_write(db_url: str, tmp_path: Path) -> None:
    rng = random.Random(24)
    anak = students(rng, 24)
    ids = [a["id"] for a in anak]
    existing = [{"tanggal": a_day(rng, 60), "id_anak": i, "status": rng.choice(STATUS_ABSENSI)} for i in ids]
    insert_rows(
        db_url,
        kamar=TUTORIAL_KAMAR,
        anak=anak,
        absensi=list({(r["tanggal"], r["id_anak"]): r for r in existing}.values()),
    )
    engine = make_engine(db_url)
    sessions = make_sessionmaker(engine)
    try:
        async for client in serve_db(db_url):
            for _ in range(25):  # roll calls on random days, later and earlier ones, the same day again
                day = a_day(rng, 60).isoformat()
                answer = await client.post(f"/absensi/{day}", json={"entri": roll_call(rng, ids)})
                assert answer.status_code == 200, answer.text
            for _ in range(15):
                one = await client.put(f"/absensi/{a_day(rng, 60)}/{rng.choice(ids)}", json={"status": "sakit"})
                assert one.status_code == 200
            for _ in range(60):
                posted = await client.post("/hafalan", json=deposit(rng, rng.choice(ids)))
                assert posted.status_code == 201, posted.text
            with sessions() as session:  # removals and corrections as the service writes them (izin does)
                days = [a_day(rng, 60) for _ in range(10)]
                gone = [Catatan(d, rng.choice(ids), rng.choice([None, "izin"])) for d in days]
                crud_absensi.write(
                    session, list({(c.tanggal, c.id_anak): c for c in gone}.values()), actor="t", key=None
                )
                session.commit()
            csv = tmp_path / "hafalan.csv"
            lines = [deposit(rng, rng.choice(ids)) for _ in range(30)]
            csv.write_text(
                "id_anak,tanggal,jenis,surah,ayat_mulai,ayat_selesai\n"
                + "".join(",".join(str(v) for v in d.values()) + "\n" for d in lines)
            )
            assert import_file(sessions, "hafalan", csv).added == 30
            with sessions() as session:
                assert session.scalar(select(func.count()).select_from(HafalanProgresBasi)) == 0
                kept = session.scalar(select(func.count()).select_from(HafalanProgres))
                assert kept == session.scalar(text("SELECT count(DISTINCT id_anak) FROM hafalan"))
            assert_same_answers(engine, rng, ids)
            another_tool_writes(engine, rng, ids)
            with sessions() as session:
                assert session.scalar(select(func.count()).select_from(HafalanProgresBasi))
            assert_same_answers(engine, rng, ids)  # the students it wrote counted from their deposits
            posted = await client.post("/hafalan", json=deposit(rng, ids[0], day=TODAY))  # refreshes its student only
            assert posted.status_code == 201
            with sessions() as session:
                assert ids[0] not in set(session.scalars(select(HafalanProgresBasi.id_anak)))
                crud_hafalan.refresh(session, ids)
                session.commit()
                assert session.scalar(select(func.count()).select_from(HafalanProgresBasi)) == 0
            assert_same_answers(engine, rng, ids)
            await same_as_the_route(client, engine)
    finally:
        engine.dispose()


async def test_a_service_start_sums_up_the_students_another_tool_wrote(db_url: str) -> None:
    rng = random.Random(9)
    ids = a_school(db_url, rng, 12, days_each=3)
    engine = make_engine(db_url)
    try:
        another_tool_writes(engine, rng, ids)
        with make_sessionmaker(engine)() as session:
            assert session.scalar(select(func.count()).select_from(HafalanProgresBasi))
        async for client in serve_db(db_url):  # the service starts: what it did not write is summed up once
            with make_sessionmaker(engine)() as session:
                assert session.scalar(select(func.count()).select_from(HafalanProgresBasi)) == 0
                kept = session.scalar(select(func.count()).select_from(HafalanProgres))
                assert kept == session.scalar(text("SELECT count(DISTINCT id_anak) FROM hafalan"))
            assert_same_answers(engine, rng, ids)
            await same_as_the_route(client, engine)
    finally:
        engine.dispose()


def another_tool_writes(engine: Engine, rng: random.Random, ids: list[str]) -> None:
    """Rows written straight into the tables: deposits (some outside their surah, one after today), attendance
    inserted, changed (status, day) and deleted."""
    hafalan = table(
        "hafalan",
        *(column(c) for c in ("id", "id_anak", "tanggal", "jenis", "surah", "ayat_mulai", "ayat_selesai", "dibuat")),
    )
    rows = [deposit(rng, rng.choice(ids), valid=rng.random() < 0.6) for _ in range(25)]
    rows.append(deposit(rng, ids[1], day=TODAY + timedelta(days=2)))
    for r in rows:
        r.update(id=secrets.token_urlsafe(12), dibuat=datetime.now(UTC), tanggal=date.fromisoformat(r["tanggal"]))
    with engine.begin() as conn:
        conn.execute(insert(hafalan), rows)
        conn.execute(text("DELETE FROM hafalan WHERE id IN (SELECT id FROM hafalan ORDER BY id LIMIT 3)"))
        conn.execute(
            text("UPDATE hafalan SET jenis = 'murajaah' WHERE id IN (SELECT id FROM hafalan ORDER BY id DESC LIMIT 3)")
        )
        stored = conn.execute(text("SELECT tanggal, id_anak FROM absensi ORDER BY id_anak, tanggal")).all()
        for tanggal, id_anak in rng.sample(stored, 12):
            conn.execute(
                text("UPDATE absensi SET status = 'alpa' WHERE tanggal = :t AND id_anak = :i"),
                {"t": tanggal, "i": id_anak},
            )
        for tanggal, id_anak in rng.sample(stored, 8):
            conn.execute(text("DELETE FROM absensi WHERE tanggal = :t AND id_anak = :i"), {"t": tanggal, "i": id_anak})
        moved = conn.execute(text("SELECT tanggal, id_anak FROM absensi ORDER BY tanggal, id_anak LIMIT 1")).one()
        conn.execute(
            text("UPDATE absensi SET tanggal = :d WHERE tanggal = :t AND id_anak = :i"),
            {"d": TODAY + timedelta(days=400), "t": moved[0], "i": moved[1]},
        )
        free = TODAY - timedelta(days=500)
        conn.execute(
            text("INSERT INTO absensi (tanggal, id_anak, status) VALUES (:d, :i, 'izin')"), {"d": free, "i": ids[2]}
        )


async def same_as_the_route(client: httpx2.AsyncClient, engine: Engine) -> None:
    """What the routes send is built from these answers: the whole school's today, as the recount gives it."""
    progres = (await client.get("/hafalan/progres")).json()
    with make_sessionmaker(engine)() as session:
        recounted = old_progres(session, today=date.today(), kelas=None, kamar=None, id_anak=None)
    assert [(p["id_anak"], p["ayat"], p["ayat_per_pekan"]) for p in progres["data"]] == [
        (p.id_anak, p.ayat, p.ayat_per_pekan) for p in recounted
    ]
    rekap = (
        await client.get("/absensi/rekap", params={"dari": str(TODAY - timedelta(days=29)), "sampai": str(TODAY)})
    ).json()
    with make_sessionmaker(engine)() as session:
        rows = old_rekap(session, TODAY - timedelta(days=29), TODAY, kelas=None, kamar=None, id_anak=None)
    assert rekap["per_anak"] == rows and rekap["jumlah_anak"] == len(rows) > 0


def waiting(engine: Engine) -> set[str]:
    with make_sessionmaker(engine)() as session:
        return set(session.scalars(select(HafalanProgresBasi.id_anak)))


def refusing_writes(url: str) -> Engine:
    """An engine on `url` whose every transaction the database refuses to write in."""
    engine = make_engine(url)
    statement = "PRAGMA query_only = ON" if engine.dialect.name == "sqlite" else "SET TRANSACTION READ ONLY"
    event.listen(engine, "begin", lambda connection: connection.exec_driver_sql(statement))
    return engine


async def test_a_read_that_finds_students_another_tool_wrote_has_them_summed_up_for_the_next(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(31)
    ids = a_school(db_url, rng, 14, days_each=2)
    engine, refused = make_engine(db_url), refusing_writes(db_url)
    try:
        async for client in serve_db(db_url):
            another_tool_writes(engine, rng, ids)
            listed = waiting(engine)
            assert listed
            # A database that refuses the write now, or a summing up already running here: nothing lost, still listed
            assert crud_hafalan.sum_up_waiting(make_sessionmaker(refused)) == 0
            with crud_hafalan._summing:
                assert crud_hafalan.sum_up_waiting(make_sessionmaker(engine)) == 0
            assert waiting(engine) == listed
            with make_sessionmaker(engine)() as session:
                oracle = old_progres(session, today=date.today(), kelas=None, kamar=None, id_anak=None)
                with monkeypatch.context() as patched:  # too many waiting for the database's sort: all read here
                    patched.setattr(crud_hafalan, "SORTED_WAITING", len(listed) - 1)
                    school = crud_hafalan.progres(
                        session, id_anak=None, kelas=None, kamar=None, today=date.today(), limit=5
                    )
                    assert school.waiting and school.data == oracle[:5]
                    assert (school.jumlah_anak, school.ayat) == (len(oracle), sum(p.ayat for p in oracle))
            first = await client.get("/hafalan/progres", params={"limit": 5})  # counted from their deposits
            assert first.status_code == 200
            assert [(p["id_anak"], p["ayat"]) for p in first.json()["data"]] == [
                (p.id_anak, p.ayat) for p in oracle[:5]
            ]
            assert waiting(engine) == set()  # summed up once the answer went out
            with make_sessionmaker(engine)() as session:
                kept = crud_hafalan.progres(session, id_anak=None, kelas=None, kamar=None, today=date.today(), limit=5)
            assert not kept.waiting
            again = await client.get("/hafalan/progres", params={"limit": 5})  # from the kept rows: the same
            assert again.json() == first.json()
            assert_same_answers(engine, rng, ids)
    finally:
        engine.dispose()
        refused.dispose()


async def test_revision_0009_fills_the_aggregates_from_a_0008_database(db_url: str) -> None:
    rng = random.Random(9)
    with school_at(db_url, "0008") as engine:
        anak = students(rng, 15)
        ids = [a["id"] for a in anak]
        absensi = {(a_day(rng, 90), rng.choice(ids)): rng.choice([*STATUS_ABSENSI, "lain"]) for _ in range(300)}
        deposits = [deposit(rng, rng.choice(ids), valid=rng.random() < 0.8) for _ in range(120)]
        for d in deposits:
            d.update(id=secrets.token_urlsafe(12), dibuat=datetime.now(UTC), tanggal=date.fromisoformat(d["tanggal"]))
        with engine.begin() as conn:
            conn.execute(insert(table("anak", *(column(c) for c in anak[0]))), anak)
            rows = [{"tanggal": t, "id_anak": i, "status": s} for (t, i), s in absensi.items()]
            conn.execute(insert(table("absensi", column("tanggal"), column("id_anak"), column("status"))), rows)
            conn.execute(insert(table("hafalan", *(column(c) for c in deposits[0]))), deposits)
        with make_sessionmaker(engine)() as session:
            before = old_rekap(session, TODAY - timedelta(days=89), TODAY, kelas=None, kamar=None, id_anak=None)
        done = upgrade(engine)
        assert done.before == "0008"
        with make_sessionmaker(engine)() as session:
            assert session.scalar(select(func.count()).select_from(HafalanProgresBasi)) == 0
            assert session.scalar(select(func.count()).select_from(HafalanProgres)) == len(
                {d["id_anak"] for d in deposits}
            )
            # "lain" (no status of ours) counts nowhere; such a student is listed only with a record of ours
            got = crud_absensi.rekap_absensi(
                session, TODAY - timedelta(days=89), TODAY, kelas=None, kamar=None, id_anak=None
            )
            assert got.per_anak == [r for r in before if r["hadir"] + r["tidak_hadir"]]
        with engine.begin() as conn:  # "lain" rows, gone, leave a school of our statuses: the same answers then
            conn.execute(text("DELETE FROM absensi WHERE status = 'lain'"))
        assert_same_answers(engine, rng, ids)


def test_the_demo_school_is_stored_with_its_aggregates(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        upgrade(engine)
        with make_sessionmaker(engine)() as session:
            demo.insert_school(session, demo.generate(TODAY, students=40, days=31))
            ids = list(session.scalars(text("SELECT id FROM anak")))
            assert session.scalar(select(func.count()).select_from(HafalanProgresBasi)) == 0
        assert_same_answers(engine, random.Random(3), ids)
    finally:
        engine.dispose()
