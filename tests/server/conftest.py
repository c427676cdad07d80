"""MCP server fixtures: the server built from its factory, joined in process to the real data service."""

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import pytest
from fastapi import FastAPI
from mcp import Client

from mcp_asrama.config import ServiceSettings
from mcp_asrama.server.app import build_server
from mcp_asrama.server.core import AsramaServer
from mcp_asrama.server.settings import ServerSettings
from mcp_asrama.service.app import create_app
from tests.conftest import TOKEN

ERAS = ["legacy", "2026-07-28"]


def server_for(app: Any, token: str | None = TOKEN, **settings: Any) -> AsramaServer:
    """The MCP server reaching `app` (an ASGI app) through httpx2's ASGI transport."""
    config = ServerSettings(api_url="http://service", api_token=token, **settings)
    return build_server(config, transport=httpx2.ASGITransport(app=app))


@pytest.fixture
def db_url(tmp_path: Any) -> str:
    """The MCP server's tests run on SQLite only: storage is the service's concern, tested on both."""
    return f"sqlite:///{tmp_path / 'asrama.db'}"


@pytest.fixture
def service_app(tutorial_db: str) -> Iterator[FastAPI]:
    """The data service on the tutorial's data."""
    app = create_app(ServiceSettings(db_url=tutorial_db, service_token=TOKEN))
    yield app
    app.state.engine.dispose()


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest) -> str:
    """Both protocol eras: the handshake (initialize) and 2026-07-28."""
    return str(request.param)


@pytest.fixture
async def mcp(service_app: FastAPI, era: str) -> AsyncIterator[Client]:
    """The SDK's in-memory client on our server, in each protocol era, without client-side caching."""
    async with Client(server_for(service_app), mode=era, cache=None) as client:
        yield client
