"""The demo school's pesantren life: deterministic, at realistic rates (violations ~10% of students a month, hafalan
0.5-2 pages a week with a spread, clinic 2-5% a week), valid for the service, and served by its routes."""

from collections import Counter, defaultdict
from datetime import date, timedelta
from statistics import mean
from typing import Any

import pytest
from sqlalchemy import select

from mcp_asrama import quran
from mcp_asrama.config import ServiceSettings
from mcp_asrama.contract import BY_NAME, DOMAINS
from mcp_asrama.service import demo_pesantren
from mcp_asrama.service.app import create_app
from mcp_asrama.service.crud.pelanggaran import DEFAULT_JENIS
from mcp_asrama.service.db import init_schema, make_engine, make_sessionmaker
from mcp_asrama.service.demo import DemoSchool, example_tables, generate, seed_demo
from mcp_asrama.service.demo_pesantren import ORDER, PAGE
from mcp_asrama.service.models import table_class
from tests.conftest import TOKEN, service_client

TODAY = date(2026, 10, 6)
DAYS = 60


@pytest.fixture(scope="module")
def school() -> DemoSchool:
    return generate(TODAY, days=DAYS)


@pytest.fixture(scope="module")
def rows(school: DemoSchool) -> dict[str, list[dict[str, Any]]]:
    return {
        "pelanggaran": list(school.pelanggaran()),
        "hafalan": list(school.hafalan()),
        "kesehatan": list(school.kesehatan()),
    }


def _ago(row: dict[str, Any]) -> int:
    return (TODAY - row["tanggal"]).days


def test_same_seed_gives_the_same_rows_and_another_seed_others(rows: dict[str, list[dict[str, Any]]]) -> None:
    again = generate(TODAY, days=DAYS)
    assert list(again.pelanggaran()) == rows["pelanggaran"]
    assert list(again.hafalan()) == rows["hafalan"]
    assert list(again.kesehatan()) == rows["kesehatan"]
    other = generate(TODAY, days=DAYS, seed=7)
    assert list(other.pelanggaran()) != rows["pelanggaran"]
    assert list(other.kesehatan()) != rows["kesehatan"]
    ids = [r["id"] for domain in rows.values() for r in domain]
    assert len(set(ids)) == len(ids) and all(len(i) == 16 for i in ids)


def test_about_ten_percent_of_students_have_a_violation_a_month_mostly_ringan(
    school: DemoSchool, rows: dict[str, list[dict[str, Any]]]
) -> None:
    students = len(school.anak)
    for month in range(DAYS // 30):
        who = {r["id_anak"] for r in rows["pelanggaran"] if month * 30 <= _ago(r) < (month + 1) * 30}
        assert 0.05 <= len(who) / students <= 0.15, month
    kinds = {kode: (kategori, poin) for kode, _, kategori, poin in DEFAULT_JENIS}
    assert all(kinds[r["jenis"]] == (r["kategori"], r["poin"]) for r in rows["pelanggaran"])
    per_kategori = Counter(r["kategori"] for r in rows["pelanggaran"])
    assert per_kategori["ringan"] > 0.6 * len(rows["pelanggaran"])
    assert per_kategori["ringan"] > per_kategori["sedang"] > per_kategori["berat"] > 0
    assert all(0 <= _ago(r) < DAYS for r in rows["pelanggaran"])


def test_hafalan_runs_at_half_a_page_to_two_pages_a_week_with_a_spread(
    school: DemoSchool, rows: dict[str, list[dict[str, Any]]]
) -> None:
    weeks = 8
    ayat: dict[str, int] = defaultdict(int)
    for r in rows["hafalan"]:
        if r["jenis"] == "ziyadah" and _ago(r) < weeks * 7:
            ayat[r["id_anak"]] += r["ayat_selesai"] - r["ayat_mulai"] + 1
    pages = sorted(ayat.get(a["id"], 0) / PAGE / weeks for a in school.anak)
    assert 0.5 <= mean(pages) <= 2.0
    assert pages[len(pages) // 10] >= 0.4 and pages[-len(pages) // 10] <= 2.2
    assert pages[-1] > 2.5 * pages[0] > 0  # each student their own pace
    for r in rows["hafalan"]:
        quran.validate_range(r["surah"], r["ayat_mulai"], r["ayat_selesai"])
        assert r["surah"] in ORDER  # juz 30 and 29 only
        assert r["nilai"] is None or 0 <= r["nilai"] <= 100
    murajaah = sum(r["jenis"] == "murajaah" for r in rows["hafalan"] if _ago(r) < DAYS)
    assert 0.05 < murajaah / sum(_ago(r) < DAYS for r in rows["hafalan"]) < 0.4
    assert any(r["surah"] < 78 for r in rows["hafalan"])  # the older classes are into juz 29


def test_hafalan_goes_from_an_nas_backwards(school: DemoSchool, rows: dict[str, list[dict[str, Any]]]) -> None:
    first = school.anak[0]["id"]
    mine = [r for r in rows["hafalan"] if r["id_anak"] == first and r["jenis"] == "ziyadah" and _ago(r) < DAYS]
    positions = [ORDER.index(r["surah"]) for r in sorted(mine, key=lambda r: (r["tanggal"], ORDER.index(r["surah"])))]
    assert positions == sorted(positions) and positions


def test_two_to_five_percent_of_students_visit_the_clinic_a_week(
    school: DemoSchool, rows: dict[str, list[dict[str, Any]]]
) -> None:
    students = len(school.anak)
    shares = [
        len({r["id_anak"] for r in rows["kesehatan"] if week * 7 <= _ago(r) < (week + 1) * 7}) / students
        for week in range(DAYS // 7)
    ]
    assert 0.02 <= mean(shares) <= 0.05
    assert all(0.005 <= s <= 0.08 for s in shares)
    kategori = Counter(r["kategori"] for r in rows["kesehatan"])
    assert kategori["demam"] + kategori["batuk-pilek"] > 0.45 * len(rows["kesehatan"])
    assert set(kategori) <= {"demam", "batuk-pilek", "pencernaan", "cedera", "kulit", "lainnya"}
    assert all(r["keluhan"] and len(r["keluhan"]) <= 500 for r in rows["kesehatan"])


@pytest.mark.anyio
async def test_the_seeded_demo_is_served_by_the_new_routes(db_url: str) -> None:
    engine = make_engine(db_url)
    init_schema(engine)
    today = date.today()
    assert seed_demo(make_sessionmaker(engine), today, students=120, days=30)
    engine.dispose()
    app = create_app(ServiceSettings(db_url=db_url, service_token=TOKEN))
    async with service_client(app) as client:
        dari = (today - timedelta(days=29)).isoformat()
        rekap = (await client.get(f"/pelanggaran/rekap?dari={dari}&sampai={today}")).json()
        assert 0.05 * 120 <= rekap["jumlah_anak"] <= 0.2 * 120
        assert rekap["total"]["poin"] == sum(r["poin"] for r in rekap["per_anak"]) > 0
        progres = (await client.get("/hafalan/progres?kelas=7A")).json()
        assert progres["jumlah_anak"] > 0 and all(p["ayat_per_pekan"] > 0 for p in progres["data"])
        klinik = (await client.get(f"/kesehatan/rekap?dari={dari}&sampai={today}")).json()
        assert klinik["kunjungan"] == sum(k["kunjungan"] for k in klinik["per_kategori"]) > 0
        jenis = (await client.get("/pelanggaran/jenis")).json()["data"]
        assert {j["kode"] for j in jenis} == {k for k, *_ in DEFAULT_JENIS}
    app.state.engine.dispose()


# --- a few records a month of every dated domain that gives examples ------------------------------------------------

CONTOH = ({"warna": "merah", "ukuran": 3}, {"warna": "biru", "ukuran": None})


def test_records_from_examples_are_a_few_a_month_over_random_students_and_days(school: DemoSchool) -> None:
    made = list(demo_pesantren.examples("contoh", CONTOH, school.anak, TODAY, DAYS, seed=5))
    assert made == list(demo_pesantren.examples("contoh", CONTOH, school.anak, TODAY, DAYS, seed=5))
    assert made != list(demo_pesantren.examples("contoh", CONTOH, school.anak, TODAY, DAYS, seed=6))
    assert made != list(demo_pesantren.examples("lain", CONTOH, school.anak, TODAY, DAYS, seed=5))
    for month in range(DAYS // 30):
        count = sum(month * 30 <= _ago(r) < (month + 1) * 30 for r in made)
        assert 0.02 * len(school.anak) - 1 <= count <= 0.04 * len(school.anak) + 1, month
    ids = {a["id"] for a in school.anak}
    assert all(r["id_anak"] in ids and 0 <= _ago(r) < DAYS and r["dicatat_oleh"] == "demo" for r in made)
    own = [
        {k: v for k, v in r.items() if k not in ("id", "id_anak", "tanggal", "dicatat_oleh", "dibuat")} for r in made
    ]
    assert all(o in CONTOH for o in own) and {o["warna"] for o in own} == {"merah", "biru"}
    assert len({r["id_anak"] for r in made}) > len(made) / 2 and len({r["tanggal"] for r in made}) > len(made) / 3
    assert len({r["id"] for r in made}) == len(made) and all(r["dibuat"].date() == r["tanggal"] for r in made)
    assert list(demo_pesantren.examples("contoh", CONTOH, [], TODAY, DAYS, seed=5)) == []


def test_the_seeded_demo_has_records_of_every_dated_domain_with_examples(db_url: str) -> None:
    assert example_tables() == {
        d.name: table_class(d.name) for d in DOMAINS if d.dated and d.contoh and table_class(d.name) is not None
    }
    engine = make_engine(db_url)
    init_schema(engine)
    sessions = make_sessionmaker(engine)
    assert seed_demo(sessions, TODAY, students=150, days=DAYS)
    with sessions() as session:
        for name, table in example_tables().items():
            stored = session.execute(select(table.__table__)).mappings().all()
            assert 0.02 * 150 * 2 - 2 <= len(stored) <= 0.04 * 150 * 2 + 2, name
            fields = BY_NAME[name].contoh[0].keys()
            assert all({k: r[k] for k in fields} in BY_NAME[name].contoh for r in stored), name
            assert {r["dicatat_oleh"] for r in stored} == {"demo"}
    engine.dispose()
