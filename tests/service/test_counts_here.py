"""Counts computed where the data is: `GET /absensi?ringkas=true` counts a day per status and lists only the
students asked for, as the whole day would show them; `GET /pelanggaran/rekap?limit=` keeps the totals of all.

A random school (names repeating, so the order is kelas, nama *then* id; some students without a record) is
compared with the day asked the old way (`semua_anak=true`), counted and filtered here.
"""

import random
from collections import Counter
from collections.abc import AsyncIterator
from datetime import date
from typing import Any

import httpx2
import pytest

from tests.conftest import TUTORIAL_ANAK, insert_rows, serve_db

pytestmark = pytest.mark.anyio

HARI = "2026-10-06"
ROOMS = ["Al-Fatih 1", "Al-Fatih 2", "Aisyah 2"]
CLASSES = ["7A", "7B", "8A"]
NAMES = ["Ahmad", "Budi", "Citra", "Dewi"]
STATUSES = ["hadir", "izin", "sakit", "alpa", None]  # None: no record that day
KINDS = ["terlambat_sholat", "membawa_hp", "berkelahi", "tidak_piket"]
FILTERS: list[dict[str, Any]] = [{}, {"kelas": "7a"}, {"kamar": ["Al-Fatih 1", "Aisyah 2"]}, {"kelas": "9Z"}]
DAFTAR = [None, "hadir", "izin", "alpa", "belum_dicatat"]


def _school(seed: int, size: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(seed)
    anak = [
        {
            **TUTORIAL_ANAK[0],
            "id": f"S{rng.randrange(10**6):06d}-{i}",
            "nama": f"{rng.choice(NAMES)} {rng.choice(['Santoso', 'Lestari'])}",
            "kelas": rng.choice(CLASSES),
            "kamar": rng.choice(ROOMS),
            "nik": None,
        }
        for i in range(size)
    ]
    absensi = [
        {"id_anak": a["id"], "tanggal": date.fromisoformat(HARI), "status": status, "keterangan": None}
        for a in anak
        if (status := rng.choices(STATUSES, weights=[6, 1, 1, 1, 2])[0]) is not None
    ]
    return anak, absensi


@pytest.fixture
async def rest(db_url: str) -> AsyncIterator[httpx2.AsyncClient]:
    anak, absensi = _school(24, 70)
    rooms = [{"nama": r, "gedung": "G", "kapasitas": 40, "musyrif": "Ust."} for r in ROOMS]
    insert_rows(db_url, kamar=rooms, anak=anak, absensi=absensi)
    async for client in serve_db(db_url):
        yield client


def _expected(day: list[dict[str, Any]], daftar: str | None, limit: int) -> tuple[dict[str, int], list[Any]]:
    """What the whole day shows: counts per status, then the listed students (recorded first), the first `limit`."""
    counts = Counter(r["status"] for r in day)
    wanted = [r for r in day if (r["status"] == daftar if daftar else r["status"] != "hadir")]
    listed = sorted(wanted, key=lambda r: r["status"] == "belum_dicatat")
    per_status = {s: counts[s] for s in ("hadir", "izin", "sakit", "alpa", "belum_dicatat")}
    return per_status, listed[:limit]


@pytest.mark.parametrize("filters", FILTERS)
async def test_ringkas_counts_and_lists_what_the_whole_day_shows(
    rest: httpx2.AsyncClient, filters: dict[str, Any]
) -> None:
    whole = await rest.get("/absensi", params={"tanggal": HARI, "semua_anak": "true", **filters})
    assert whole.status_code == 200
    day = whole.json()["data"]
    for daftar in DAFTAR:
        for limit in (3, 1000):
            params = {"tanggal": HARI, "ringkas": "true", "limit": limit, **filters}
            answer = await rest.get("/absensi", params={**params, **({"daftar": daftar} if daftar else {})})
            assert answer.status_code == 200, answer.text
            body = answer.json()
            per_status, listed = _expected(day, daftar, limit)
            assert body["per_status"] == per_status, (filters, daftar)
            assert body["jumlah_anak"] == len(day)
            assert body["data"] == listed, (filters, daftar, limit)
            assert "semua_anak" not in body


async def test_ringkas_counts_only_the_students_named(rest: httpx2.AsyncClient) -> None:
    day = (await rest.get("/absensi", params={"tanggal": HARI, "semua_anak": "true"})).json()["data"]
    named = [r for r in day if r["kamar"] == "Aisyah 2"][:9]
    params = [("tanggal", HARI), ("ringkas", "true"), *(("id_anak", r["id_anak"]) for r in named), ("id_anak", "X9")]
    body = (await rest.get("/absensi", params=params)).json()
    assert body["jumlah_anak"] == len(named)
    assert (body["per_status"], body["data"]) == _expected(named, None, 100)


async def test_ringkas_with_status_is_refused_and_the_day_without_it_is_unchanged(rest: httpx2.AsyncClient) -> None:
    refused = await rest.get("/absensi", params={"tanggal": HARI, "ringkas": "true", "status": "izin"})
    assert refused.status_code == 422
    assert "daftar" in refused.json()["detail"]
    plain = (await rest.get("/absensi", params={"tanggal": HARI, "limit": 1, "daftar": "izin"})).json()
    assert set(plain) == {"tanggal", "data"}
    assert len(plain["data"]) > 1 and {r["status"] for r in plain["data"]} > {"izin"}


async def test_rekap_pelanggaran_limit_keeps_the_totals_of_all(rest: httpx2.AsyncClient) -> None:
    rng = random.Random(7)
    ids = [
        r["id_anak"]
        for r in (await rest.get("/absensi", params={"tanggal": HARI, "semua_anak": "true"})).json()["data"]
    ]
    for n in range(40):
        body = {"id_anak": rng.choice(ids), "tanggal": f"2026-10-{rng.randint(1, 28):02d}", "jenis": rng.choice(KINDS)}
        made = await rest.post("/pelanggaran", json=body, headers={"Idempotency-Key": f"counts-here-{n:06d}"})
        assert made.status_code == 201, made.text
    period = {"dari": "2026-10-01", "sampai": "2026-10-31"}
    whole = (await rest.get("/pelanggaran/rekap", params=period)).json()
    assert whole["jumlah_anak"] > 10
    for limit in (1, 10, 10_000):
        top = (await rest.get("/pelanggaran/rekap", params={**period, "limit": limit})).json()
        assert top == {**whole, "per_anak": whole["per_anak"][:limit]}
    assert (await rest.get("/pelanggaran/rekap", params={**period, "limit": 0})).status_code == 422
