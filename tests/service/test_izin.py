"""`/izin`: asking for a leave (its days and the student follow), listing, ending early or late; validation,
conflicts, unguessable handles, idempotent replays and no personal data in any answer."""

import asyncio
import re
from datetime import date, timedelta
from typing import Any

import httpx2
import pytest
from sqlalchemy import func, insert, inspect, select

from mcp_asrama.service.db import init_schema, make_engine, make_sessionmaker
from mcp_asrama.service.demo import seed_demo
from mcp_asrama.service.models import Absensi, Anak, Base, Izin, Kamar, RiwayatAbsensi
from tests.conftest import TUTORIAL_ANAK, serve_db

pytestmark = pytest.mark.anyio

TODAY = date.today()
KEY = "konfirmasi-izin-000001"
PERSONAL = [str(a[f]) for a in TUTORIAL_ANAK for f in ("nik", "no_hp_wali", "alamat", "tanggal_lahir")]
PERSONAL_FIELDS = {"nik", "no_hp_wali", "alamat", "tanggal_lahir", "nama_wali"}


def day(offset: int) -> str:
    return (TODAY + timedelta(days=offset)).isoformat()


def izin(id_anak: str = "A001", dari: int = -1, sampai: int = 2, jenis: str = "pulang", **extra: Any) -> dict[str, Any]:
    return {"id_anak": id_anak, "dari": day(dari), "sampai": day(sampai), "jenis": jenis, **extra}


def query(url: str, statement: Any) -> list[Any]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return list(conn.execute(statement))
    finally:
        engine.dispose()


def status_of(url: str, id_anak: str) -> str:
    return str(query(url, select(Anak.status).where(Anak.id == id_anak))[0][0])


def days_of(url: str, id_anak: str) -> dict[str, tuple[str, str | None]]:
    rows = query(url, select(Absensi.tanggal, Absensi.status, Absensi.keterangan).where(Absensi.id_anak == id_anak))
    return {r.tanggal.isoformat(): (r.status, r.keterangan) for r in rows}


def count(url: str, table: Any) -> int:
    return int(query(url, select(func.count()).select_from(table))[0][0])


async def test_ajukan_izin_marks_the_days_and_the_student(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    response = await service.post("/izin", json=izin(alasan="Nenek sakit keras"), headers={"X-Asrama-Actor": "wk"})
    assert response.status_code == 201
    body = response.json()
    assert body["id_anak"] == "A001" and body["nama"] == "Ahmad Fauzi" and body["kelas"] == "7A"
    assert body["kamar"] == "Al-Fatih 1" and body["jenis"] == "pulang" and body["aktif"] is True
    assert body["dari"] == day(-1) and body["sampai"] == day(2) and "tanggal_kembali" not in body
    recorded = days_of(tutorial_db, "A001")
    assert {day(n): recorded.get(day(n)) for n in range(-2, 4)} == {
        day(-2): None,
        **{day(n): ("izin", "Izin pulang") for n in range(-1, 3)},
        day(3): None,
    }
    assert status_of(tutorial_db, "A001") == "izin"
    # The reason is kept with the izin only, never in an attendance note the assistant reads.
    assert query(tutorial_db, select(Izin.alasan))[0][0] == "Nenek sakit keras"
    assert not any("Nenek" in (k or "") for _, k in days_of(tutorial_db, "A001").values())
    oleh = {r[0] for r in query(tutorial_db, select(RiwayatAbsensi.oleh))}
    assert oleh == {"wk"}


async def test_izin_overwrites_recorded_days_with_history(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    await service.put(f"/absensi/{day(0)}/A002", json={"status": "hadir"})
    response = await service.post("/izin", json=izin("A002", 0, 1, "sakit"), headers={"Idempotency-Key": KEY})
    assert response.status_code == 201
    chain = (await service.get(f"/absensi/{day(0)}/A002/riwayat")).json()["data"]
    assert [(c.get("status_lama"), c["status_baru"]) for c in chain] == [(None, "hadir"), ("hadir", "izin")]
    assert chain[-1]["kunci"] == KEY


async def test_a_future_izin_does_not_change_the_student_yet(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    response = await service.post("/izin", json=izin(dari=3, sampai=5))
    assert response.status_code == 201 and response.json()["aktif"] is False
    assert status_of(tutorial_db, "A001") == "aktif"


async def test_handles_are_unguessable(service: httpx2.AsyncClient) -> None:
    ids = []
    for n in range(4):
        response = await service.post("/izin", json=izin(dari=10 * n, sampai=10 * n + 1))
        assert response.status_code == 201
        ids.append(response.json()["id"])
    assert len(set(ids)) == 4
    assert all(re.fullmatch(r"[A-Za-z0-9_\-]{16,}", i) for i in ids)
    assert not any(i.isdigit() for i in ids)
    assert len({i[:4] for i in ids}) > 1  # not a shared prefix and a counter


@pytest.mark.parametrize(
    ("other", "expected"),
    [((2, 4), 409), ((-3, -1), 409), ((-5, 10), 409), ((0, 0), 409), ((3, 5), 201), ((-4, -2), 201)],
)
async def test_an_overlapping_izin_is_409(
    service: httpx2.AsyncClient, tutorial_db: str, other: tuple[int, int], expected: int
) -> None:
    assert (await service.post("/izin", json=izin(dari=-1, sampai=2))).status_code == 201
    response = await service.post("/izin", json=izin(dari=other[0], sampai=other[1], jenis="keperluan"))
    assert response.status_code == expected
    if expected == 409:
        assert response.json()["detail"] == "Anak sudah punya izin pada sebagian tanggal itu"
        assert count(tutorial_db, Izin) == 1


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (izin(dari=2, sampai=1), "sampai"),
        (izin(dari=0, sampai=30), "30 hari"),
        (izin(jenis="liburan"), None),
        (izin(alasan="x" * 501), None),
        ({**izin(), "dari": "2026-02-30"}, None),
        ({**izin(), "sampai": "besok"}, None),
        ({**izin(), "dari": 1700000000}, None),
        ({**izin(), "id_anak": "A" * 5000}, None),
        ({**izin(), "lain": "x"}, None),
        (izin(alasan="a\x00b"), None),
    ],
)
async def test_invalid_izin_is_422_and_writes_nothing(
    service: httpx2.AsyncClient, tutorial_db: str, body: dict[str, Any], fragment: str | None
) -> None:
    response = await service.post("/izin", json=body)
    assert response.status_code == 422
    if fragment:
        assert fragment in response.json()["detail"]
    assert count(tutorial_db, Izin) == 0 and count(tutorial_db, RiwayatAbsensi) == 0


async def test_thirty_days_is_allowed(service: httpx2.AsyncClient) -> None:
    assert (await service.post("/izin", json=izin(dari=0, sampai=29))).status_code == 201


async def test_izin_for_unknown_student_is_404(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    response = await service.post("/izin", json=izin("X999"))
    assert response.status_code == 404
    assert count(tutorial_db, Izin) == 0


async def test_list_filters_and_never_shows_personal_data(service: httpx2.AsyncClient) -> None:
    running = (await service.post("/izin", json=izin("A001", -1, 2, alasan="Rahasia keluarga"))).json()
    later = (await service.post("/izin", json=izin("A002", 5, 6, "keperluan"))).json()
    everything = await service.get("/izin")
    assert everything.status_code == 200
    assert everything.json()["total"] == 2
    assert [i["id"] for i in everything.json()["data"]] == [later["id"], running["id"]]
    for params, expected in [
        ({"aktif": "true"}, [running["id"]]),
        ({"aktif": "false"}, [later["id"]]),
        ({"kelas": "8b"}, [later["id"]]),
        ({"kamar": "al-fatih 1"}, [later["id"], running["id"]]),
        ({"kamar": "Aisyah 2"}, []),
        ({"id_anak": "A001"}, [running["id"]]),
        ({"id_anak": "A001", "aktif": "false"}, []),
        ({"tanggal": day(5)}, [later["id"]]),
        ({"tanggal": day(0)}, [running["id"]]),
        ({"tanggal": day(3)}, []),
    ]:
        response = await service.get("/izin", params=params)
        assert [i["id"] for i in response.json()["data"]] == expected, params
    for record in everything.json()["data"]:
        assert not PERSONAL_FIELDS & set(record)
    assert not [p for p in PERSONAL if p in everything.text]


async def test_one_izin_by_its_handle(service: httpx2.AsyncClient) -> None:
    made = (await service.post("/izin", json=izin("A002", 5, 6, "keperluan", alasan="Lomba"))).json()
    found = await service.get(f"/izin/{made['id']}")
    assert found.status_code == 200 and found.json() == made
    for unknown in ("tidak-ada", made["id"][:-1], "x" * 65):
        assert (await service.get(f"/izin/{unknown}")).status_code in (404, 422), unknown


@pytest.mark.parametrize(
    "params", [{"aktif": "mungkin"}, {"limit": "0"}, {"limit": "501"}, {"kelas": "x" * 201}, {"tanggal": "2026-02-30"}]
)
async def test_bad_list_parameters_are_422(service: httpx2.AsyncClient, params: dict[str, str]) -> None:
    assert (await service.get("/izin", params=params)).status_code == 422


async def test_early_return_gives_the_student_back_and_removes_the_later_days(
    service: httpx2.AsyncClient, tutorial_db: str
) -> None:
    created = (await service.post("/izin", json=izin(dari=-2, sampai=3))).json()
    assert status_of(tutorial_db, "A001") == "izin"
    await service.put(f"/absensi/{day(3)}/A001", json={"status": "sakit"})  # changed since: kept
    response = await service.post(
        f"/izin/{created['id']}/selesai", json={"tanggal_kembali": day(0)}, headers={"X-Asrama-Actor": "musyrif"}
    )
    assert response.status_code == 200
    assert response.json()["tanggal_kembali"] == day(0) and response.json()["aktif"] is False
    assert status_of(tutorial_db, "A001") == "aktif"
    days = days_of(tutorial_db, "A001")
    assert days[day(-2)] == days[day(-1)] == ("izin", "Izin pulang")
    assert day(0) not in days and day(1) not in days and day(2) not in days
    assert days[day(3)] == ("sakit", None)
    [removed] = (await service.get(f"/absensi/{day(2)}/A001/riwayat")).json()["data"][-1:]
    assert removed["status_lama"] == "izin" and "status_baru" not in removed and removed["oleh"] == "musyrif"
    # The days freed may be asked for again.
    assert (await service.post("/izin", json=izin(dari=1, sampai=2, jenis="sakit"))).status_code == 201


async def test_late_return_keeps_every_izin_day(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    created = (await service.post("/izin", json=izin(dari=-3, sampai=-2))).json()
    response = await service.post(f"/izin/{created['id']}/selesai", json={"tanggal_kembali": day(0)})
    assert response.status_code == 200
    assert status_of(tutorial_db, "A001") == "aktif"
    assert days_of(tutorial_db, "A001")[day(-2)] == ("izin", "Izin pulang")


async def test_ending_twice_is_409_and_unknown_or_bad_end_is_4xx(service: httpx2.AsyncClient) -> None:
    created = (await service.post("/izin", json=izin(dari=-1, sampai=2))).json()
    path = f"/izin/{created['id']}/selesai"
    assert (await service.post(path, json={"tanggal_kembali": day(-2)})).status_code == 422
    assert (await service.post(path, json={"tanggal_kembali": "2026-02-30"})).status_code == 422
    assert (await service.post(path, json={"tanggal_kembali": day(1)})).status_code == 422  # not back yet
    assert (await service.post(path, json={"tanggal_kembali": day(0)})).status_code == 200
    again = await service.post(path, json={"tanggal_kembali": day(0)})
    assert again.status_code == 409 and again.json()["detail"] == "Izin ini sudah selesai"
    unknown = await service.post("/izin/tidakada1234567890/selesai", json={"tanggal_kembali": day(0)})
    assert unknown.status_code == 404
    assert (await service.post("/izin/" + "x" * 5000 + "/selesai", json={"tanggal_kembali": day(0)})).status_code in (
        404,
        422,
    )


async def test_a_repeated_key_returns_the_same_izin_and_writes_once(
    service: httpx2.AsyncClient, tutorial_db: str
) -> None:
    headers = {"Idempotency-Key": KEY}
    first = await service.post("/izin", json=izin(), headers=headers)
    second = await service.post("/izin", json=izin(), headers=headers)
    assert first.status_code == second.status_code == 201
    assert second.json() == first.json()
    assert count(tutorial_db, Izin) == 1
    other = await service.post("/izin", json=izin(dari=5, sampai=6), headers=headers)
    assert other.status_code == 409 and "Idempotency-Key" in other.json()["detail"]
    end_key = {"Idempotency-Key": KEY + "-selesai"}
    path = f"/izin/{first.json()['id']}/selesai"
    ended = [await service.post(path, json={"tanggal_kembali": day(0)}, headers=end_key) for _ in range(2)]
    assert [r.status_code for r in ended] == [200, 200] and ended[0].json() == ended[1].json()


async def test_concurrent_overlapping_izin_give_one_201_and_one_409(
    service: httpx2.AsyncClient, tutorial_db: str
) -> None:
    answers = await asyncio.gather(*(service.post("/izin", json=izin(dari=n, sampai=n + 2)) for n in range(2)))
    assert sorted(r.status_code for r in answers) == [201, 409]
    assert count(tutorial_db, Izin) == 1


async def test_a_database_of_the_earlier_schema_gains_the_new_tables(db_url: str) -> None:
    engine = make_engine(db_url)
    Base.metadata.create_all(engine, tables=[Kamar.__table__, Anak.__table__, Absensi.__table__])
    with engine.begin() as conn:
        conn.execute(insert(Anak), TUTORIAL_ANAK)
    assert not inspect(engine).has_table("izin")
    engine.dispose()
    async for client in serve_db(db_url):
        assert (await client.post("/izin", json=izin(), headers={"Idempotency-Key": KEY})).status_code == 201
        assert (
            await client.post(f"/absensi/{day(5)}", json={"entri": [{"id_anak": "A002", "status": "hadir"}]})
        ).json()["baru"] == 1
    assert count(db_url, Izin) == 1 and count(db_url, RiwayatAbsensi) == 5


async def test_the_demo_shows_running_izin(db_url: str) -> None:
    engine = make_engine(db_url)
    init_schema(engine)
    assert seed_demo(make_sessionmaker(engine), TODAY, students=40, days=5)
    engine.dispose()
    async for client in serve_db(db_url):
        running = (await client.get("/izin", params={"aktif": "true"})).json()
        assert running["total"] == 2
        for record in running["data"]:
            assert record["sampai"] == TODAY.isoformat()
            day_of = (await client.get("/absensi", params={"tanggal": TODAY.isoformat()})).json()["data"]
            assert {"id_anak": record["id_anak"], "status": "izin", "keterangan": "Izin pulang"}.items() <= next(
                r for r in day_of if r["id_anak"] == record["id_anak"]
            ).items()
            assert (await client.get(f"/anak/{record['id_anak']}")).json()["status"] == "izin"
