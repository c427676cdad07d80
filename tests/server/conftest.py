"""MCP server fixtures: the server built from its factory, joined in process to the real data service."""

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import date
from typing import Any

import httpx2
import pytest
from fastapi import FastAPI
from mcp import Client

from mcp_asrama.config import ServiceSettings
from mcp_asrama.server.app import build_server
from mcp_asrama.server.asrama_server import AsramaServer
from mcp_asrama.server.settings import ServerSettings
from mcp_asrama.service.app import create_app
from tests.conftest import TOKEN, TUTORIAL_ABSENSI, TUTORIAL_ANAK, TUTORIAL_KAMAR, insert_rows

ERAS = ["legacy", "2026-07-28"]

# More days of attendance after the tutorial's 2026-10-06, so that a range has a clear order of absentees:
# A002 misses 3 days, A003 2, A001 1.
MORE_ABSENSI = [
    {"tanggal": date(2026, 10, 7), "id_anak": "A001", "status": "hadir", "keterangan": None},
    {"tanggal": date(2026, 10, 7), "id_anak": "A002", "status": "alpa", "keterangan": None},
    {"tanggal": date(2026, 10, 7), "id_anak": "A003", "status": "izin", "keterangan": "Masih di rumah"},
    {"tanggal": date(2026, 10, 8), "id_anak": "A001", "status": "sakit", "keterangan": "Demam"},
    {"tanggal": date(2026, 10, 8), "id_anak": "A002", "status": "alpa", "keterangan": None},
    {"tanggal": date(2026, 10, 8), "id_anak": "A003", "status": "hadir", "keterangan": None},
    {"tanggal": date(2026, 10, 9), "id_anak": "A002", "status": "sakit", "keterangan": "Batuk"},
]


def server_for(app: Any, token: str | None = TOKEN, **settings: Any) -> AsramaServer:
    """The MCP server reaching `app` (an ASGI app) through httpx2's ASGI transport."""
    config = ServerSettings(api_url="http://127.0.0.1:8000", api_token=token, **settings)
    return build_server(config, transport=httpx2.ASGITransport(app=app))


@asynccontextmanager
async def connect(server: AsramaServer, era: str) -> AsyncIterator[Client]:
    """The SDK's in-memory client on `server` in one protocol era, without client-side caching."""
    async with Client(server, mode=era, cache=None) as client:
        yield client


def make_service(db_url: str) -> FastAPI:
    """Our data service on `db_url`, requiring the tutorial's token."""
    return create_app(ServiceSettings(db_url=db_url, service_token=TOKEN))


@pytest.fixture
def db_url(tmp_path: Any) -> str:
    """The MCP server's tests run on SQLite only: storage is the service's concern, tested on both."""
    return f"sqlite:///{tmp_path / 'asrama.db'}"


@pytest.fixture
def school_db(db_url: str) -> str:
    """The tutorial's data (personal fields included) plus a few more days of attendance."""
    insert_rows(db_url, kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK, absensi=TUTORIAL_ABSENSI + MORE_ABSENSI)
    return db_url


@pytest.fixture
def service_app(school_db: str) -> Iterator[FastAPI]:
    """The data service on the tutorial's data."""
    app = make_service(school_db)
    yield app
    app.state.engine.dispose()


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest) -> str:
    """Both protocol eras: the handshake (initialize) and 2026-07-28."""
    return str(request.param)


@pytest.fixture
async def mcp(service_app: FastAPI, era: str) -> AsyncIterator[Client]:
    """The SDK's in-memory client on our server, in each protocol era, without client-side caching."""
    async with connect(server_for(service_app), era) as client:
        yield client


@pytest.fixture
def many_rooms_app(db_url: str) -> Iterator[FastAPI]:
    """A very large school: 400 rooms whose list alone is larger than one result's budget."""
    kamar = [
        {"nama": f"Kamar {i:03d} " + "Panjang" * 5, "gedung": "Putra", "kapasitas": 8, "musyrif": "Ust. " + "M" * 60}
        for i in range(400)
    ]
    insert_rows(db_url, kamar=kamar, anak=[], absensi=[])
    app = make_service(db_url)
    yield app
    app.state.engine.dispose()
