"""The service as a whole: bearer token, `/healthz`, OpenAPI, 503 when the database fails, and bad input
that never turns into a 5xx."""

import shutil
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from mcp_asrama.config import ServiceSettings
from mcp_asrama.contract import DOMAINS
from mcp_asrama.service.app import NoToken, create_app
from tests.conftest import (
    PG_URL,
    TOKEN,
    TUTORIAL_ABSENSI,
    TUTORIAL_ANAK,
    TUTORIAL_KAMAR,
    fresh_database,
    insert_rows,
    service_client,
)

pytestmark = pytest.mark.anyio

DATA_ROUTES = [
    ("GET", "/anak"),
    ("GET", "/anak/A001"),
    ("GET", "/kamar"),
    ("GET", "/absensi?tanggal=2026-10-06"),
    ("GET", "/absensi/rekap?dari=2026-10-01&sampai=2026-10-31"),
    ("PUT", "/absensi/2026-10-07/A001"),
]
UNAVAILABLE = {"detail": "Database tidak tersedia, coba lagi nanti"}


# Reads share one database per backend (a fresh PostgreSQL database per test costs more than the test); tests
# that break their database get one of their own through conftest's `tutorial_db` / `service`.
@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def tutorial_shared(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with fresh_database(request.param, tmp_path_factory.mktemp("db")) as url:
        insert_rows(url, kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK, absensi=TUTORIAL_ABSENSI)
        yield url


def _app(url: str) -> Iterator[FastAPI]:
    application = create_app(ServiceSettings(db_url=url, service_token=TOKEN))
    yield application
    application.state.engine.dispose()


@pytest.fixture
def shared_app(tutorial_shared: str) -> Iterator[FastAPI]:
    """The service on the tutorial's data and token, on this module's shared database: never write."""
    yield from _app(tutorial_shared)


@pytest.fixture
async def anonymous(shared_app: FastAPI) -> AsyncIterator[httpx2.AsyncClient]:
    """A client that sends no Authorization header."""
    async with service_client(shared_app, token=None) as client:
        yield client


@pytest.fixture
async def reader(shared_app: FastAPI) -> AsyncIterator[httpx2.AsyncClient]:
    """A client with the token."""
    async with service_client(shared_app) as client:
        yield client


@pytest.fixture
def own_app(tutorial_db: str) -> Iterator[FastAPI]:
    """The service on a database of the test's own (it may break it)."""
    yield from _app(tutorial_db)


@pytest.fixture
async def own_anonymous(own_app: FastAPI) -> AsyncIterator[httpx2.AsyncClient]:
    async with service_client(own_app, token=None) as client:
        yield client


async def _call(client: httpx2.AsyncClient, method: str, url: str, **kwargs: Any) -> httpx2.Response:
    if method == "PUT":
        kwargs.setdefault("json", {"status": "hadir"})
    return await client.request(method, url, **kwargs)


# --- bearer token ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "url"), DATA_ROUTES)
async def test_data_route_without_token_is_401_with_tutorial_detail(
    anonymous: httpx2.AsyncClient, method: str, url: str
) -> None:
    response = await _call(anonymous, method, url)
    assert response.status_code == 401
    assert response.json() == {"detail": "Token tidak valid"}
    assert response.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer salah",
        "Bearer rahasia1234",
        "Bearer rahasia12",
        "Bearer RAHASIA123",
        "Bearer ",
        "Bearer",
        "rahasia123",
        "Basic cmFoYXNpYTEyMw==",
        "Token rahasia123",
        "Bearer rahasia123 rahasia123",
    ],
)
@pytest.mark.parametrize(("method", "url"), DATA_ROUTES)
async def test_data_route_with_wrong_token_is_401(
    anonymous: httpx2.AsyncClient, method: str, url: str, authorization: str
) -> None:
    response = await _call(anonymous, method, url, headers={"Authorization": authorization})
    assert response.status_code == 401
    assert response.json() == {"detail": "Token tidak valid"}


async def test_bearer_scheme_name_is_case_insensitive(anonymous: httpx2.AsyncClient) -> None:
    response = await anonymous.get("/kamar", headers={"Authorization": f"bearer {TOKEN}"})
    assert response.status_code == 200


async def test_missing_token_is_reported_before_invalid_parameters(anonymous: httpx2.AsyncClient) -> None:
    assert (await anonymous.get("/anak", params={"limit": 0})).status_code == 401
    assert (await anonymous.get("/absensi", params={"tanggal": "kemarin"})).status_code == 401
    assert (await anonymous.put("/absensi/kemarin/A001", json={"status": "x"})).status_code == 401


async def test_unknown_student_is_not_revealed_without_token(anonymous: httpx2.AsyncClient) -> None:
    known = await anonymous.get("/anak/A001")
    unknown = await anonymous.get("/anak/X999")
    assert known.status_code == unknown.status_code == 401
    assert known.json() == unknown.json()


def test_service_never_starts_without_a_token(tutorial_db: str) -> None:
    with pytest.raises(NoToken, match="ASRAMA_SERVICE_TOKEN"):
        create_app(ServiceSettings(db_url=tutorial_db))


# --- /healthz, /openapi.json, /docs ----------------------------------------------------------------------------


async def test_healthz_needs_no_token_and_reports_the_database(anonymous: httpx2.AsyncClient) -> None:
    response = await anonymous.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok"}


async def test_openapi_describes_every_route_to_a_token_holder(reader: httpx2.AsyncClient) -> None:
    response = await reader.get("/openapi.json")
    assert response.status_code == 200
    spec = response.json()
    known = {
        "/anak",
        "/anak/{id_anak}",
        "/kamar",
        "/kelas",
        "/absensi",
        "/absensi/rekap",
        "/absensi/{tanggal}",
        "/absensi/{tanggal}/{id_anak}",
        "/absensi/{tanggal}/{id_anak}/riwayat",
        "/izin",
        "/izin/{id_izin}",
        "/izin/{id_izin}/selesai",
        "/pelanggaran",
        "/pelanggaran/jenis",
        "/pelanggaran/rekap",
        "/hafalan",
        "/hafalan/progres",
        "/kesehatan",
        "/kesehatan/rekap",
        "/perubahan",
        "/healthz",
        "/oauth-state",
        "/oauth-state/{kind}/{key}",
        "/oauth-state/{kind}/{key}/take",
    }
    assert known <= set(spec["paths"])
    others = set(spec["paths"]) - known  # a later domain's routes, under its path
    assert all(any(p == d.path or p.startswith(f"{d.path}/") for d in DOMAINS) for p in others), others
    assert set(spec["paths"]["/absensi/{tanggal}/{id_anak}"]) == {"put"}
    dated = [d.path for d in DOMAINS if d.dated]
    assert {"/izin", "/pelanggaran", "/hafalan", "/kesehatan"} <= set(dated)
    for path in dated:
        assert set(spec["paths"][path]) == {"get", "post"}, path
    schemes = spec["components"]["securitySchemes"]
    assert [s["scheme"].lower() for s in schemes.values()] == ["bearer"]
    assert spec["paths"]["/anak"]["get"]["security"]
    assert "security" not in spec["paths"]["/healthz"]["get"]
    limit = next(p for p in spec["paths"]["/anak"]["get"]["parameters"] if p["name"] == "limit")
    assert (limit["schema"]["minimum"], limit["schema"]["maximum"], limit["schema"]["default"]) == (1, 100, 20)


@pytest.mark.parametrize("path", ["/openapi.json", "/docs"])
async def test_api_description_needs_the_token(anonymous: httpx2.AsyncClient, path: str) -> None:
    refused = await anonymous.get(path)
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith("Basic ")
    assert "nik" not in refused.text
    wrong = await anonymous.get(path, auth=httpx2.BasicAuth("admin", "salah"))
    assert wrong.status_code == 401


async def test_docs_page_opens_with_the_token_as_password(anonymous: httpx2.AsyncClient) -> None:
    response = await anonymous.get("/docs", auth=httpx2.BasicAuth("admin", TOKEN))
    assert response.status_code == 200
    assert "/openapi.json" in response.text
    spec = await anonymous.get("/openapi.json", auth=httpx2.BasicAuth("", TOKEN))
    assert "/anak/{id_anak}" in spec.json()["paths"]


async def test_basic_auth_opens_no_data_route(anonymous: httpx2.AsyncClient) -> None:
    assert (await anonymous.get("/anak", auth=httpx2.BasicAuth("admin", TOKEN))).status_code == 401


async def test_unknown_path_is_404_and_wrong_method_is_405(reader: httpx2.AsyncClient) -> None:
    assert (await reader.get("/siswa")).status_code == 404
    assert (await reader.delete("/anak/A001")).status_code == 405
    assert (await reader.post("/kamar", json={})).status_code == 405


# --- database failures: 503 without internals ------------------------------------------------------------------


def _drop_tables(url: str) -> None:
    """Make the tables vanish behind the service's back, through a connection of our own."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        conn = sqlite3.connect(str(parsed.database))
        try:
            conn.executescript("DROP TABLE absensi; DROP TABLE anak; DROP TABLE kamar; DROP TABLE anak_nama_fts;")
        finally:
            conn.close()
        return
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE absensi, anak, kamar CASCADE"))  # and the foreign keys of every other domain
    engine.dispose()


def _make_database_vanish(url: str, app: FastAPI) -> None:
    """Take the whole database away: the SQLite file becomes a folder, the PostgreSQL database is dropped."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        app.state.engine.dispose()  # pooled connections would keep the deleted file open
        path = Path(str(parsed.database))
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        path.mkdir()
        return
    assert PG_URL is not None
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE "{parsed.database}" WITH (FORCE)'))
    admin.dispose()


def _assert_no_internals(response: httpx2.Response) -> None:
    assert response.json() == UNAVAILABLE
    lowered = response.text.lower()
    for leak in ("sqlite", "psycopg", "postgres", "select", "table", "relation", "traceback", "error"):
        assert leak not in lowered


@pytest.mark.parametrize(("method", "url"), DATA_ROUTES)
async def test_data_route_is_503_without_internals_when_tables_vanish(
    service: httpx2.AsyncClient, tutorial_db: str, method: str, url: str
) -> None:
    assert (await _call(service, method, url)).status_code == 200
    _drop_tables(tutorial_db)
    response = await _call(service, method, url)
    assert response.status_code == 503
    _assert_no_internals(response)


async def test_database_failure_is_logged_without_the_query(
    service: httpx2.AsyncClient, tutorial_db: str, caplog: pytest.LogCaptureFixture
) -> None:
    _drop_tables(tutorial_db)
    response = await service.get("/anak", params={"nama": "rahasia-nama"})
    assert response.status_code == 503
    logged = " ".join(r.getMessage() for r in caplog.records if r.name.startswith("mcp_asrama"))
    assert "/anak" in logged
    assert "rahasia-nama" not in logged


async def test_healthz_is_503_when_the_database_is_gone(
    own_app: FastAPI, own_anonymous: httpx2.AsyncClient, tutorial_db: str
) -> None:
    _make_database_vanish(tutorial_db, own_app)
    response = await own_anonymous.get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"status": "error", "database": "unavailable"}
    data = await own_anonymous.get("/kamar", headers={"Authorization": f"Bearer {TOKEN}"})
    assert data.status_code == 503
    _assert_no_internals(data)


async def test_service_answers_again_once_the_database_is_back(
    own_app: FastAPI, own_anonymous: httpx2.AsyncClient, tutorial_db: str
) -> None:
    if not tutorial_db.startswith("sqlite"):
        pytest.skip("a dropped PostgreSQL database cannot be brought back in place")
    _make_database_vanish(tutorial_db, own_app)
    assert (await own_anonymous.get("/healthz")).status_code == 503
    shutil.rmtree(str(make_url(tutorial_db).database))
    Path(str(make_url(tutorial_db).database)).touch()
    assert (await own_anonymous.get("/healthz")).status_code == 200


# --- hostile input never yields 5xx ----------------------------------------------------------------------------

LONG = "A" * 10_000
HOSTILE_URLS = [
    f"/anak/{LONG}",
    f"/anak?nama={LONG}",
    f"/anak?kelas={LONG}",
    f"/absensi?tanggal={LONG}",
    f"/absensi?tanggal=2026-10-06&kamar={LONG}",
    f"/absensi/rekap?dari=2026-10-01&sampai=2026-10-31&id_anak={LONG}",
    "/anak/../kamar",
    "/anak/%2e%2e",
    "/anak/%2e%2e/kamar",
    "/anak/..%2Fkamar",
    "/anak/%2F",
    "/anak/%00",
    "/anak/A001%00",
    "/anak?nama=%00",
    "/anak?nama=ahm%00ad",
    "/anak?kelas=7A%00",
    "/anak?kamar=%00",
    "/absensi?tanggal=2026-10-06%00",
    "/absensi?tanggal=2026-10-06&kelas=%00",
    "/absensi/rekap?dari=2026-10-01&sampai=2026-10-31&id_anak=%00",
    "/anak?nama=%FF%FE",
    "/anak/%FF",
    "/anak?nama=%ED%A0%80",
    "/anak?nama=' OR 1=1 --",
    "/anak?nama=%25' OR '1'='1",
    "/anak?kelas=7A' OR '1'='1",
    "/anak?kamar=x'); DROP TABLE anak; --",
    "/anak/A001' OR '1'='1",
    "/anak/A001;DROP TABLE anak",
    '/anak?nama="',
    '/anak?nama="""',
    "/anak?nama=)(*^",
    "/anak?nama=NEAR(a b",
    "/anak?nama=a:b",
    "/anak?nama=-ahmad",
    "/anak?nama=^ahm",
    "/anak?limit=99999999999999999999999",
    "/anak?offset=99999999999999999999999",
    "/anak?limit=NaN",
    "/anak?limit=1&limit=2",
    "/anak?nama=a&nama=b",
    "/absensi?tanggal=9999-12-31",
    "/absensi?tanggal=0001-01-01",
    "/absensi?tanggal=0000-00-00",
    "/absensi?tanggal=-2026-10-06",
    "/absensi?tanggal=+2026-10-06",
    "/absensi?tanggal=2026-10-06&tanggal=kemarin",
    "/absensi/rekap?dari=0001-01-01&sampai=0001-01-02",
    "/absensi/rekap?dari=9999-12-30&sampai=9999-12-31",
    "/absensi/rekap?dari=2026-10-01&sampai=2026-10-31&limit=99999999999999999999",
]


@pytest.mark.parametrize("url", HOSTILE_URLS)
async def test_hostile_get_never_yields_5xx(reader: httpx2.AsyncClient, url: str) -> None:
    response = await reader.get(url)
    assert response.status_code < 500, response.text
    if not response.is_redirect:  # "/anak/%2F" is "/anak//": redirected to "/anak"
        assert response.headers["content-type"].startswith("application/json")


@pytest.mark.parametrize(
    "url",
    ["/anak?nama=%00", "/anak?nama=ahm%00ad", "/anak?kelas=7A%00", "/anak/%00", "/anak/A001%00", f"/anak/{LONG}"],
)
async def test_nul_bytes_and_overlong_ids_are_422(reader: httpx2.AsyncClient, url: str) -> None:
    response = await reader.get(url)
    assert response.status_code == 422
    assert isinstance(response.json()["detail"], list)


@pytest.mark.parametrize(
    "url",
    [
        "/anak?nama=' OR 1=1 --",
        "/anak?nama=%25' OR '1'='1",
        "/anak?kelas=7A' OR '1'='1",
        "/anak?kamar=x'); DROP TABLE anak; --",
    ],
)
async def test_sql_in_filters_is_just_text_that_matches_nobody(reader: httpx2.AsyncClient, url: str) -> None:
    response = await reader.get(url)
    assert response.json() == {"total": 0, "data": []}
    assert (await reader.get("/anak")).json()["total"] == 3


async def test_sql_in_an_id_is_just_an_unknown_id(reader: httpx2.AsyncClient) -> None:
    response = await reader.get("/anak/A001' OR '1'='1")
    assert response.status_code == 404
    assert response.json() == {"detail": "Anak tidak ditemukan"}


@pytest.mark.parametrize(
    "url", ["/absensi/2026-10-07/%00", "/absensi/2026-10-07/A001%00", f"/absensi/2026-10-07/{LONG}"]
)
async def test_hostile_put_is_4xx(reader: httpx2.AsyncClient, url: str) -> None:
    response = await reader.put(url, json={"status": "hadir"})
    assert response.status_code == 422


async def test_huge_body_is_rejected_cleanly(reader: httpx2.AsyncClient) -> None:
    response = await reader.put("/absensi/2026-10-07/A001", json={"status": "hadir", "keterangan": LONG * 100})
    assert response.status_code == 422


SEARCH_TEXT = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(nama=SEARCH_TEXT, kelas=SEARCH_TEXT, kamar=SEARCH_TEXT)
async def test_any_search_text_gets_a_4xx_or_a_consistent_answer(
    reader: httpx2.AsyncClient, nama: str, kelas: str, kamar: str
) -> None:
    for params in ({"nama": nama}, {"kelas": kelas, "kamar": kamar}):
        response = await reader.get("/anak", params=params)
        if any("\x00" in v for v in params.values()):
            assert response.status_code == 422
            continue
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["total"] == len(body["data"])
        term = nama.strip()
        if "nama" in params and term.isascii():
            assert all(term.lower() in a["nama"].lower() for a in body["data"])
