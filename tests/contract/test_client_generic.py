"""The client's public calls of any dated domain (`records`, `summary`, `create`): the route from the domain list,
the query from the filters given, the body the contract's, parsed as the model asked for; the named calls are these."""

import json
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
from mcp_asrama.client.models import DaftarPelanggaran, Pelanggaran, RekapPelanggaran
from mcp_asrama.contract import DOMAINS, FITUR, FITUR_HEADER
from mcp_asrama.contract.pelanggaran import PelanggaranIn

pytestmark = pytest.mark.anyio
RECORD = {"id": "P1", "id_anak": "A001", "tanggal": "2026-10-06", "jenis": "membawa_hp", "kategori": "sedang",
          "poin": 25}  # fmt: skip
ANSWERS: dict[str, Any] = {
    "GET /pelanggaran": {"total": 1, "data": [RECORD]},
    "GET /pelanggaran/rekap": {
        "dari": "2026-10-01",
        "sampai": "2026-10-31",
        "jumlah_anak": 0,
        "total": {"ringan": 0, "sedang": 0, "berat": 0, "jumlah": 0, "poin": 0},
        "per_anak": [],
    },
    "POST /pelanggaran": RECORD,
}


class Upstream:
    """A service that records each request (method, path, query, body, write headers) and answers from ANSWERS."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, list[tuple[str, str]], Any, dict[str, str]]] = []
        self.app = Starlette(routes=[Route("/{path:path}", self.answer, methods=["GET", "POST"])])

    async def answer(self, request: Request) -> JSONResponse:
        route = f"{request.method} {request.url.path}"
        body = json.loads(await request.body()) if request.method == "POST" else None
        headers = {k: v for k, v in request.headers.items() if k in ("idempotency-key", "x-asrama-actor")}
        self.seen.append((route, list(request.query_params.multi_items()), body, headers))
        return JSONResponse(ANSWERS[route], status_code=201 if body else 200, headers={FITUR_HEADER: FITUR})


@pytest.fixture
async def upstream() -> AsyncIterator[tuple[AsramaClient, Upstream]]:
    service = Upstream()
    transport = httpx2.ASGITransport(app=service.app)
    async with make_http_client("http://127.0.0.1", token="t", timeout=5, transport=transport) as http:
        yield AsramaClient(http), service


async def test_the_generic_calls_ask_the_domains_routes(upstream: tuple[AsramaClient, Upstream]) -> None:
    client, service = upstream
    page = await client.records("pelanggaran", DaftarPelanggaran, id_anak="A001", kamar=["Aisyah 2"], offset=0)
    rekap = await client.summary("pelanggaran", RekapPelanggaran, date(2026, 10, 1), date(2026, 10, 31), kelas="7A")
    body = PelanggaranIn(id_anak="A001", tanggal=date(2026, 10, 6), jenis="membawa_hp")
    made = await client.create("pelanggaran", Pelanggaran, body, actor="Ustadz\nA", key="k-1")
    assert type(page) is DaftarPelanggaran and page.data[0].id == "P1"
    assert type(rekap) is RekapPelanggaran and type(made) is Pelanggaran and made.poin == 25
    assert service.seen == [
        ("GET /pelanggaran", [("id_anak", "A001"), ("kamar", "Aisyah 2"), ("limit", "100")], None, {}),
        ("GET /pelanggaran/rekap", [("dari", "2026-10-01"), ("sampai", "2026-10-31"), ("kelas", "7A")], None, {}),
        (
            "POST /pelanggaran",
            [],
            {"id_anak": "A001", "tanggal": "2026-10-06", "jenis": "membawa_hp"},
            {"idempotency-key": "k-1", "x-asrama-actor": "Ustadz?A"},
        ),
    ]


async def test_the_named_calls_are_the_generic_ones(upstream: tuple[AsramaClient, Upstream]) -> None:
    client, service = upstream
    body = PelanggaranIn(id_anak="A001", tanggal=date(2026, 10, 6), jenis="membawa_hp")
    await client.daftar_pelanggaran(id_anak="A001", kamar=["Aisyah 2"])
    await client.rekap_pelanggaran(date(2026, 10, 1), date(2026, 10, 31), kelas="7A")
    await client.catat_pelanggaran(body, actor="Ustadz\nA", key="k-1")
    named = list(service.seen)
    service.seen.clear()
    await client.records("pelanggaran", DaftarPelanggaran, id_anak="A001", kamar=["Aisyah 2"])
    await client.summary("pelanggaran", RekapPelanggaran, date(2026, 10, 1), date(2026, 10, 31), kelas="7A")
    await client.create("pelanggaran", Pelanggaran, body, actor="Ustadz\nA", key="k-1")
    assert service.seen == named


async def test_every_dated_domain_has_a_route_for_the_generic_calls(upstream: tuple[AsramaClient, Upstream]) -> None:
    client, _ = upstream
    dated = [d.name for d in DOMAINS if d.dated]
    assert {"pelanggaran", "hafalan", "kesehatan", "izin"} <= set(dated)
    with pytest.raises(KeyError):  # not a domain: nothing is asked
        await client.records("bukan_domain", DaftarPelanggaran)
