"""`/prestasi`: recording an achievement (the actor kept, idempotent), listing with filters and paging, the rekap per
level, field and student checked by hand (every field, highest levels first); validation; the CSV import (a bad row
refused, nothing written); the demo school's few a month; and its change-feed event."""

from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest
from sqlalchemy import func, select

from mcp_asrama.service.db import init_schema, make_engine, make_sessionmaker
from mcp_asrama.service.demo import seed_demo
from mcp_asrama.service.import_files import ImportRejected
from mcp_asrama.service.importer import import_file
from mcp_asrama.service.models.prestasi import Prestasi
from tests.conftest import serve_db
from tests.service.test_perubahan import change, head_frame, live, opened, without_ids

pytestmark = pytest.mark.anyio

TODAY = date.today()
KEY = "konfirmasi-prestasi-0001"
BIDANG = ["tahfidz", "akademik", "olahraga", "seni", "lainnya"]


def day(offset: int) -> str:
    return (TODAY + timedelta(days=offset)).isoformat()


def rows(url: str) -> list[tuple[Any, ...]]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            query = select(Prestasi.id_anak, Prestasi.bidang, Prestasi.tingkat, Prestasi.dicatat_oleh)
            return [tuple(r) for r in conn.execute(query.order_by(Prestasi.tanggal, Prestasi.id_anak))]
    finally:
        engine.dispose()


def prestasi(
    id_anak: str = "A001", bidang: str = "tahfidz", tingkat: str = "pesantren", offset: int = 0, **extra: Any
) -> dict[str, Any]:
    return {"id_anak": id_anak, "tanggal": day(offset), "bidang": bidang, "tingkat": tingkat, **extra}


async def test_an_achievement_is_recorded_with_every_field_and_the_actor(
    service: httpx2.AsyncClient, tutorial_db: str
) -> None:
    body = prestasi(tingkat="kabupaten", keterangan="  Juara 2 MTQ cabang hifzil Qur'an ")
    response = await service.post("/prestasi", json=body, headers={"X-Asrama-Actor": "ust-ridwan"})
    assert response.status_code == 201, response.text
    got = response.json()
    assert len(got["id"]) == 16
    assert got == {
        "id": got["id"],
        "id_anak": "A001",
        "nama": "Ahmad Fauzi",
        "kelas": "7A",
        "kamar": "Al-Fatih 1",
        "tanggal": day(0),
        "bidang": "tahfidz",
        "tingkat": "kabupaten",
        "keterangan": "Juara 2 MTQ cabang hifzil Qur'an",
        "dicatat_oleh": "ust-ridwan",
    }
    assert rows(tutorial_db) == [("A001", "tahfidz", "kabupaten", "ust-ridwan")]
    bare = await service.post("/prestasi", json=prestasi("A003", "seni"))
    assert bare.status_code == 201 and not {"keterangan", "dicatat_oleh"} & set(bare.json())


@pytest.mark.parametrize(
    ("body", "status", "detail"),
    [
        (prestasi(id_anak="A999"), 404, "Anak tidak ditemukan"),
        (prestasi(offset=1), 422, "tanggal tidak boleh sesudah hari ini"),
    ],
)
async def test_an_unknown_student_or_a_future_day_is_refused(
    service: httpx2.AsyncClient, tutorial_db: str, body: dict[str, Any], status: int, detail: str
) -> None:
    response = await service.post("/prestasi", json=body)
    assert (response.status_code, response.json()["detail"]) == (status, detail)
    assert rows(tutorial_db) == []


@pytest.mark.parametrize(
    "body",
    [
        prestasi(bidang="tahfiz"),
        prestasi(bidang="Seni"),
        prestasi(tingkat="internasional"),
        prestasi(keterangan="x" * 501),
        prestasi(keterangan="a\x00b"),
        prestasi(id_anak="A 1"),
        {**prestasi(), "tanggal": "2026-02-30"},
        {**prestasi(), "juara": 1},
        {"id_anak": "A001", "tanggal": day(0), "bidang": "seni"},
    ],
)
async def test_every_field_is_validated(service: httpx2.AsyncClient, tutorial_db: str, body: dict[str, Any]) -> None:
    assert (await service.post("/prestasi", json=body)).status_code == 422
    assert rows(tutorial_db) == []


async def test_a_replay_answers_the_same_and_another_body_under_the_key_is_409(
    service: httpx2.AsyncClient, tutorial_db: str
) -> None:
    headers = {"Idempotency-Key": KEY, "X-Asrama-Actor": "kantor"}
    first = await service.post("/prestasi", json=prestasi(keterangan="Juara 1"), headers=headers)
    again = await service.post("/prestasi", json=prestasi(keterangan="Juara 1"), headers=headers)
    assert first.status_code == again.status_code == 201 and again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true" and len(rows(tutorial_db)) == 1
    other = await service.post("/prestasi", json=prestasi(bidang="seni"), headers=headers)
    assert other.status_code == 409 and len(rows(tutorial_db)) == 1


async def _achievements(service: httpx2.AsyncClient) -> None:
    """A001 (7A, Al-Fatih 1): tahfidz pesantren today, akademik provinsi 3 days ago, olahraga kabupaten 20 days ago;
    A002 (8B, Al-Fatih 1): seni nasional yesterday; A003 (7A, Aisyah 2): tahfidz provinsi and akademik pesantren 2
    days ago, lainnya pesantren 100 days ago."""
    for body in [
        prestasi("A001", "tahfidz", "pesantren", 0),
        prestasi("A001", "akademik", "provinsi", -3),
        prestasi("A001", "olahraga", "kabupaten", -20),
        prestasi("A002", "seni", "nasional", -1),
        prestasi("A003", "tahfidz", "provinsi", -2),
        prestasi("A003", "akademik", "pesantren", -2),
        prestasi("A003", "lainnya", "pesantren", -100),
    ]:
        assert (await service.post("/prestasi", json=body)).status_code == 201


async def test_the_list_filters_by_student_class_room_and_period_latest_first(service: httpx2.AsyncClient) -> None:
    await _achievements(service)
    everything = (await service.get("/prestasi")).json()
    assert everything["total"] == 7
    assert [r["tanggal"] for r in everything["data"]] == [day(n) for n in (0, -1, -2, -2, -3, -20, -100)]
    assert [r["bidang"] for r in everything["data"][2:4]] == ["akademik", "tahfidz"]  # the later recorded first
    cases = {
        "id_anak=A001": ["A001"] * 3,
        "kelas=7a": ["A001", "A003", "A003", "A001", "A001", "A003"],
        "kamar=AISYAH 2": ["A003"] * 3,
        "kamar=Aisyah 2&kelas=8B": [],
        "kelas=8B&kelas=7A&id_anak=A002": ["A002"],
        f"dari={day(-3)}&sampai={day(-1)}": ["A002", "A003", "A003", "A001"],
        f"sampai={day(-50)}": ["A003"],
        "id_anak=A999": [],
    }
    for params, expected in cases.items():
        response = await service.get(f"/prestasi?{params}")
        assert response.status_code == 200, params
        assert [r["id_anak"] for r in response.json()["data"]] == expected, params
        assert response.json()["total"] == len(expected), params
    page = (await service.get("/prestasi?limit=2&offset=4")).json()
    assert page["total"] == 7 and [r["tanggal"] for r in page["data"]] == [day(-3), day(-20)]


def counts(pesantren: int = 0, kabupaten: int = 0, provinsi: int = 0, nasional: int = 0) -> dict[str, int]:
    jumlah = pesantren + kabupaten + provinsi + nasional
    return {
        "pesantren": pesantren,
        "kabupaten": kabupaten,
        "provinsi": provinsi,
        "nasional": nasional,
        "jumlah": jumlah,
    }


async def test_the_rekap_counts_per_level_every_field_and_each_student_highest_levels_first(
    service: httpx2.AsyncClient,
) -> None:
    await _achievements(service)
    response = await service.get(f"/prestasi/rekap?dari={day(-29)}&sampai={day(0)}")
    assert response.status_code == 200
    # Last 30 days: 6 achievements of 3 students. A002 has a nasional: first; A003 and A001 each a provinsi, and
    # A003's pesantren (1) equals A001's, A001 a kabupaten more: A001 before A003.
    assert response.json() == {
        "dari": day(-29),
        "sampai": day(0),
        "jumlah_anak": 3,
        "total": counts(2, 1, 2, 1),
        "per_bidang": [
            {"bidang": "tahfidz", **counts(pesantren=1, provinsi=1)},
            {"bidang": "akademik", **counts(pesantren=1, provinsi=1)},
            {"bidang": "olahraga", **counts(kabupaten=1)},
            {"bidang": "seni", **counts(nasional=1)},
            {"bidang": "lainnya", **counts()},
        ],
        "per_anak": [
            {"id_anak": "A002", "nama": "Budi Santoso", "kelas": "8B", "kamar": "Al-Fatih 1", **counts(nasional=1)},
            {"id_anak": "A001", "nama": "Ahmad Fauzi", "kelas": "7A", "kamar": "Al-Fatih 1", **counts(1, 1, 1)},
            {"id_anak": "A003", "nama": "Citra Lestari", "kelas": "7A", "kamar": "Aisyah 2", **counts(1, 0, 1)},
        ],
    }
    kelas = (await service.get(f"/prestasi/rekap?dari={day(-200)}&sampai={day(0)}&kelas=7A")).json()
    assert [(a["id_anak"], a["jumlah"]) for a in kelas["per_anak"]] == [
        ("A001", 3),
        ("A003", 3),
    ]  # A001 has the kabupaten
    assert kelas["total"] == counts(3, 1, 2, 0) and kelas["jumlah_anak"] == 2
    room = (await service.get(f"/prestasi/rekap?dari={day(-10)}&sampai={day(0)}&kamar=al-fatih 1")).json()
    assert [a["id_anak"] for a in room["per_anak"]] == ["A002", "A001"] and room["total"]["jumlah"] == 3
    empty = (await service.get(f"/prestasi/rekap?dari={day(-400)}&sampai={day(-300)}")).json()
    assert [b["bidang"] for b in empty["per_bidang"]] == BIDANG and empty["per_anak"] == []
    assert empty["total"] == counts() and empty["jumlah_anak"] == 0


@pytest.mark.parametrize(
    ("path", "status"),
    [
        (f"/prestasi/rekap?dari={day(0)}&sampai={day(-1)}", 422),
        (f"/prestasi/rekap?dari={day(-366)}&sampai={day(0)}", 422),
        (f"/prestasi/rekap?dari={day(-365)}&sampai={day(0)}", 200),
        (f"/prestasi/rekap?dari={day(-1)}", 422),
        (f"/prestasi?dari={day(0)}&sampai={day(-1)}", 422),
        ("/prestasi?limit=501", 422),
        ("/prestasi?offset=-1", 422),
        ("/prestasi", 200),
    ],
)
async def test_queries_are_checked(reader: httpx2.AsyncClient, path: str, status: int) -> None:
    assert (await reader.get(path)).status_code == status


async def test_a_csv_imports_every_row_and_a_bad_row_stops_the_whole_file(tutorial_db: str, tmp_path: Path) -> None:
    engine = make_engine(tutorial_db)
    sessions = make_sessionmaker(engine)
    good = tmp_path / "prestasi.csv"
    good.write_text(
        f"id_anak;tanggal;bidang;tingkat;keterangan\nA001;{day(-1)};tahfidz;kabupaten;Juara 2 MTQ\nA003;{day(-5)};seni;"
        "pesantren;\n",
        encoding="utf-8",
    )
    report = import_file(sessions, "prestasi", good)
    assert (report.added, report.updated) == (2, 0)
    assert rows(tutorial_db) == [("A003", "seni", "pesantren", "import"), ("A001", "tahfidz", "kabupaten", "import")]
    bad = tmp_path / "buruk.csv"
    bad.write_text(
        f"id_anak,tanggal,bidang,tingkat\nA002,{day(0)},seni,nasional\nA002,{day(0)},musik,nasional\n"
        f"A999,{day(1)},seni,dunia\n",
        encoding="utf-8",
    )
    with pytest.raises(ImportRejected) as caught:
        import_file(sessions, "prestasi", bad)
    assert caught.value.errors == [
        "row 3: bidang: one of tahfidz, akademik, olahraga, seni, lainnya",
        "row 4: tingkat: one of pesantren, kabupaten, provinsi, nasional",
    ]
    assert len(rows(tutorial_db)) == 2
    engine.dispose()
    async for client in serve_db(tutorial_db):
        listed = (await client.get("/prestasi?id_anak=A001")).json()["data"]
        assert [(p["keterangan"], p["dicatat_oleh"]) for p in listed] == [("Juara 2 MTQ", "import")]


async def test_the_demo_school_has_a_few_achievements_a_month(db_url: str) -> None:
    engine = make_engine(db_url)
    init_schema(engine)
    assert seed_demo(make_sessionmaker(engine), TODAY, students=200, days=60)
    with engine.connect() as conn:
        stored = conn.scalar(select(func.count()).select_from(Prestasi))
    engine.dispose()
    assert stored is not None and 0.02 * 200 * 2 - 2 <= stored <= 0.04 * 200 * 2 + 2
    async for client in serve_db(db_url):
        listed = (await client.get("/prestasi?limit=500")).json()
        assert listed["total"] == stored
        assert {p["dicatat_oleh"] for p in listed["data"]} == {"demo"}
        assert all(p["tanggal"] <= day(0) and p["bidang"] in BIDANG for p in listed["data"])
        rekap = (await client.get(f"/prestasi/rekap?dari={day(-59)}&sampai={day(0)}")).json()
        assert rekap["total"]["jumlah"] == stored and rekap["jumlah_anak"] == len(rekap["per_anak"]) > 0


async def test_a_recorded_achievement_is_one_change_feed_event_and_a_replay_none(tutorial_db: str) -> None:
    headers = {"Idempotency-Key": KEY}
    async with live(tutorial_db) as (client, _), opened(client) as stream:
        assert await head_frame(stream) == 0
        for _ in range(2):
            response = await client.post("/prestasi", json=prestasi("A003", offset=-2), headers=headers)
            assert response.status_code == 201
        assert without_ids(await stream.changes(1)) == [change("prestasi", day(-2), "A003")]
        await stream.nothing_for(0.5)
