"""The client's calls of a dated record, one generic call under each: the route comes from the domain list, the
query from the filters given (empty ones left out), the answer is parsed as the contract's shape."""

from collections.abc import AsyncIterator
from datetime import date
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcp_asrama.client import AsramaClient, make_http_client
from mcp_asrama.client.models import DaftarKunjungan, DaftarKunjunganKlinik
from mcp_asrama.contract import FITUR, FITUR_HEADER

pytestmark = pytest.mark.anyio
PAGE = {"total": 0, "data": []}
VISIT = {"id": "K1", "id_anak": "A001", "nama": "Ahmad", "tanggal": "2026-10-06", "kategori": "demam",
         "keluhan": "panas"}  # fmt: skip
REKAP = {"dari": "2026-10-01", "sampai": "2026-10-31", "jumlah_anak": 0, "kunjungan": 0, "anak": 0,
         "total": {}, "per_anak": [], "per_kategori": []}  # fmt: skip


class Upstream:
    """A service that records each request's path and query and answers with an empty page or rekap."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, list[tuple[str, str]]]] = []
        self.app = Starlette(routes=[Route("/{path:path}", self.answer)])

    async def answer(self, request: Request) -> JSONResponse:
        self.seen.append((request.url.path, list(request.query_params.multi_items())))
        body: dict[str, Any] = REKAP if request.url.path.endswith("/rekap") else PAGE
        if request.url.path == "/kesehatan":
            body = {"total": 1, "data": [VISIT]}
        return JSONResponse(body, headers={FITUR_HEADER: FITUR})


@pytest.fixture
async def upstream() -> AsyncIterator[tuple[AsramaClient, Upstream]]:
    service = Upstream()
    transport = httpx2.ASGITransport(app=service.app)
    async with make_http_client("http://127.0.0.1", token="t", timeout=5, transport=transport) as http:
        yield AsramaClient(http), service


async def test_each_list_call_asks_its_domains_route_with_the_filters_given(
    upstream: tuple[AsramaClient, Upstream],
) -> None:
    client, service = upstream
    await client.daftar_pelanggaran(id_anak="A001", dari=date(2026, 10, 1), sampai=date(2026, 10, 31))
    await client.daftar_hafalan(kelas=["7A", "8B"], jenis="ziyadah", limit=10, offset=20)
    await client.daftar_izin(aktif=False, tanggal=date(2026, 10, 6), kamar="")
    await client.daftar_kunjungan(klinik=False, kamar="Aisyah 2", offset=0)
    assert service.seen == [
        ("/pelanggaran", [("id_anak", "A001"), ("dari", "2026-10-01"), ("sampai", "2026-10-31"), ("limit", "100")]),
        ("/hafalan", [("kelas", "7A"), ("kelas", "8B"), ("jenis", "ziyadah"), ("limit", "10"), ("offset", "20")]),
        ("/izin", [("aktif", "false"), ("tanggal", "2026-10-06"), ("limit", "100")]),
        ("/kesehatan", [("kamar", "Aisyah 2"), ("limit", "100")]),
    ]


async def test_a_rekap_call_asks_the_domains_rekap_route(upstream: tuple[AsramaClient, Upstream]) -> None:
    client, service = upstream
    await client.rekap_kesehatan(date(2026, 10, 1), date(2026, 10, 31), kelas="7A")
    await client.rekap_pelanggaran(date(2026, 10, 1), date(2026, 10, 31))
    await client.rekap(date(2026, 10, 1), date(2026, 10, 31), id_anak="A001", limit=3)
    period = [("dari", "2026-10-01"), ("sampai", "2026-10-31")]
    assert service.seen == [
        ("/kesehatan/rekap", [*period, ("kelas", "7A")]),
        ("/pelanggaran/rekap", period),
        ("/absensi/rekap", [*period, ("id_anak", "A001"), ("limit", "3")]),
    ]


async def test_a_visit_keeps_its_health_details_only_for_the_clinic(upstream: tuple[AsramaClient, Upstream]) -> None:
    client, _ = upstream
    anyone = await client.daftar_kunjungan(klinik=False)
    clinic = await client.daftar_kunjungan(klinik=True)
    assert type(anyone) is DaftarKunjungan and "keluhan" not in anyone.data[0].model_dump()
    assert type(clinic) is DaftarKunjunganKlinik and clinic.data[0].keluhan == "panas"
