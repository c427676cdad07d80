"""Shared fixtures: a clean environment, databases (SQLite files; PostgreSQL when ASRAMA_TEST_PG_URL is set),
the data service built from its factory, and an HTTP client joined to it through the ASGI transport."""

import logging
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any

import httpx2
import pytest
from sqlalchemy import create_engine, insert, text
from sqlalchemy.engine import make_url

from mcp_asrama.config import ServiceSettings
from mcp_asrama.service.app import create_app
from mcp_asrama.service.db import init_schema, make_engine, make_sessionmaker
from mcp_asrama.service.models import Absensi, Anak, Kamar

TOKEN = "rahasia123"
PG_URL = os.environ.get("ASRAMA_TEST_PG_URL")

# The tutorial's mock data (shared/seeds/001), with the fields our service adds.
TUTORIAL_KAMAR = [
    {"nama": "Al-Fatih 1", "gedung": "Putra", "kapasitas": 6, "musyrif": "Ust. Ridwan"},
    {"nama": "Aisyah 2", "gedung": "Putri", "kapasitas": 6, "musyrif": "Ustz. Halimah"},
]
TUTORIAL_ANAK = [
    {
        "id": "A001",
        "nama": "Ahmad Fauzi",
        "kelas": "7A",
        "kamar": "Al-Fatih 1",
        "status": "aktif",
        "jenis_kelamin": "L",
        "nik": "3171000000000001",
        "no_hp_wali": "081200000001",
        "alamat": "Jl. Melati No. 1, Bogor",
        "nama_wali": "Bapak Hasan",
        "tanggal_lahir": date(2013, 1, 5),
    },
    {
        "id": "A002",
        "nama": "Budi Santoso",
        "kelas": "8B",
        "kamar": "Al-Fatih 1",
        "status": "aktif",
        "jenis_kelamin": "L",
        "nik": "3171000000000002",
        "no_hp_wali": "081200000002",
        "alamat": "Jl. Mawar No. 2, Depok",
        "nama_wali": "Ibu Sari",
        "tanggal_lahir": date(2012, 2, 6),
    },
    {
        "id": "A003",
        "nama": "Citra Lestari",
        "kelas": "7A",
        "kamar": "Aisyah 2",
        "status": "izin",
        "jenis_kelamin": "P",
        "nik": "3171000000000003",
        "no_hp_wali": "081200000003",
        "alamat": "Jl. Kenanga No. 3, Bekasi",
        "nama_wali": "Bapak Joko",
        "tanggal_lahir": date(2013, 3, 7),
    },
]
# Citra's day as the service and the MCP server report it: her record of 2026-10-06 with her name, class and room.
CITRA_ON_THE_6TH = {
    "id_anak": "A003",
    "status": "izin",
    "keterangan": "Pulang, acara keluarga",
    "nama": "Citra Lestari",
    "kelas": "7A",
    "kamar": "Aisyah 2",
}
TUTORIAL_ABSENSI = [
    {"tanggal": date(2026, 10, 6), "id_anak": "A001", "status": "hadir", "keterangan": None},
    {"tanggal": date(2026, 10, 6), "id_anak": "A002", "status": "hadir", "keterangan": None},
    {
        "tanggal": date(2026, 10, 6),
        "id_anak": "A003",
        "status": "izin",
        "keterangan": "Pulang, acara keluarga",
    },
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """No ASRAMA_* setting of the developer's shell leaks into a test; data files go to tmp."""
    for name in list(os.environ):
        if name.startswith("ASRAMA_") and not name.startswith("ASRAMA_TEST_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    """A test that runs the CLI (which configures logging) leaves the root logger as it found it."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def _fresh_pg_database() -> Iterator[str]:
    assert PG_URL is not None
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    name = f"asrama_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[str]:
    """An empty database: a SQLite file, and a fresh PostgreSQL database when ASRAMA_TEST_PG_URL is set."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'asrama.db'}"
        return
    if not PG_URL:
        pytest.skip("ASRAMA_TEST_PG_URL is not set")
    yield from _fresh_pg_database()


@contextmanager
def fresh_database(backend: str, folder: Path) -> Iterator[str]:
    """An empty database like `db_url`'s ("sqlite" in `folder`, or "postgresql"), for fixtures of a wider scope:
    data that all tests of a module only read."""
    if backend == "sqlite":
        yield f"sqlite:///{folder / 'asrama.db'}"
        return
    if not PG_URL:
        pytest.skip("ASRAMA_TEST_PG_URL is not set")
    yield from _fresh_pg_database()


def insert_rows(
    url: str, *, kamar: list[dict[str, Any]], anak: list[dict[str, Any]], absensi: list[dict[str, Any]]
) -> None:
    """Store rows directly, as a school's existing database would hold them."""
    engine = make_engine(url)
    init_schema(engine)
    with make_sessionmaker(engine)() as session, session.begin():
        for table, rows in ((Kamar, kamar), (Anak, anak), (Absensi, absensi)):
            if rows:
                session.execute(insert(table), rows)
    engine.dispose()


@pytest.fixture
def tutorial_db(db_url: str) -> str:
    """A database holding the tutorial mock's data."""
    insert_rows(db_url, kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK, absensi=TUTORIAL_ABSENSI)
    return db_url


def service_client(app: Any, token: str | None = TOKEN) -> httpx2.AsyncClient:
    """An HTTP client that reaches `app` in process."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1", headers=headers)


async def serve_db(url: str) -> AsyncIterator[httpx2.AsyncClient]:
    """The data service on `url`, requiring the tutorial's token, reached in process."""
    app = create_app(ServiceSettings(db_url=url, service_token=TOKEN))
    async with service_client(app) as client:
        yield client
    app.state.engine.dispose()


@pytest.fixture
async def service(tutorial_db: str) -> AsyncIterator[httpx2.AsyncClient]:
    """The data service on the tutorial's data, requiring the tutorial's token."""
    async for client in serve_db(tutorial_db):
        yield client


# Data that a module's tests only read is stored once per backend (a fresh PostgreSQL database per test costs
# more than the test itself); writes go through `service`, on a database of their own.
BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(scope="module", params=BACKENDS)
def tutorial_shared(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The tutorial's data, once per test module and backend."""
    with fresh_database(request.param, tmp_path_factory.mktemp("db")) as url:
        insert_rows(url, kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK, absensi=TUTORIAL_ABSENSI)
        yield url


@pytest.fixture
async def reader(tutorial_shared: str) -> AsyncIterator[httpx2.AsyncClient]:
    """Like `service`, on the module's shared database: for tests that never write."""
    async for client in serve_db(tutorial_shared):
        yield client
