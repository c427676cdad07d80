"""The scope check and the data service compare room names one way (`mcp_asrama.names.fold`): a musyrif whose claim
names `kamar:strasse 1` sees every student the service stores in `Straße 1`, however another tool spelled it, and
nothing of another room; before, the service's SQL lower() found none of them for him."""

from collections.abc import AsyncIterator, Iterator
from datetime import date
from typing import Any

import pytest
from fastapi import FastAPI
from mcp import Client

from tests.conftest import insert_rows
from tests.server.conftest import connect, make_service, server_for
from tests.server.support import call_ok

pytestmark = pytest.mark.anyio

DAY = date(2026, 10, 6)
KAMAR = [{"nama": n, "gedung": "Putra", "kapasitas": 6, "musyrif": None} for n in ("Straße 1", "Al-Fatih 1")]
ANAK = [
    {"id": i, "nama": f"Santri {i}", "kelas": k, "kamar": r, "status": "aktif"}
    for i, k, r in (("S1", "7A", "Straße 1"), ("S2", "7a ", "STRASSE  1"), ("F1", "8B", "Al-Fatih 1"))
]
ABSENSI = [{"tanggal": DAY, "id_anak": a["id"], "status": "hadir", "keterangan": None} for a in ANAK]


@pytest.fixture
def spelled_app(db_url: str) -> Iterator[FastAPI]:
    insert_rows(db_url, kamar=KAMAR, anak=ANAK, absensi=ABSENSI)
    app = make_service(db_url)
    yield app
    app.state.engine.dispose()


@pytest.fixture(params=[["kamar:strasse 1"], ["kamar:STRAẞE  1"], ["kelas: 7A"]])
async def musyrif(spelled_app: FastAPI, era: str, request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    async with connect(server_for(spelled_app, stdio_scope=request.param), era) as client:
        yield client


def _ids(body: dict[str, Any]) -> list[str]:
    return sorted(a["id"] for a in body["data"])


async def test_a_scope_spelled_otherwise_sees_every_spelling_of_its_room(musyrif: Client) -> None:
    body = await call_ok(musyrif, "cari_anak", {})
    assert (body["total"], _ids(body)) == (2, ["S1", "S2"])
    for kamar in ("Straße 1", "STRASSE 1", "strasse  1"):
        assert _ids(await call_ok(musyrif, "cari_anak", {"kamar": kamar})) == ["S1", "S2"]
    outside = await call_ok(musyrif, "cari_anak", {"kamar": "Al-Fatih 1"})
    assert (outside["total"], outside["data"]) == (0, [])


async def test_the_day_of_a_scope_spelled_otherwise_counts_its_students(musyrif: Client) -> None:
    day = await call_ok(musyrif, "absensi_harian", {"tanggal": DAY.isoformat()})
    assert (day["jumlah_anak"], day["per_status"]["hadir"]) == (2, 2)


async def test_the_room_of_a_scope_spelled_otherwise_is_listed_with_its_occupancy(
    spelled_app: FastAPI, era: str
) -> None:
    async with connect(server_for(spelled_app, stdio_scope=["kamar:STRASSE 1"]), era) as client:
        rooms = await call_ok(client, "daftar_kamar", {})
        assert [(r["nama"], r["terisi"]) for r in rooms["data"]] == [("Straße 1", 2)]
