"""`build_server(settings)`: the MCP server, its lifespan owning one pooled HTTP client to the service."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
from mcp.server.caching import CacheableMethod, CacheHint
from mcp.server.mcpserver import MCPServer

from mcp_asrama import __version__
from mcp_asrama.client import AsramaClient, make_http_client
from mcp_asrama.server import discovery, features, listen_gate, live, views
from mcp_asrama.server.asrama_server import AppState, AsramaServer
from mcp_asrama.server.confirm_page import Halaman
from mcp_asrama.server.features.write import Konfirmasi
from mcp_asrama.server.guard import chain, usulan
from mcp_asrama.server.guard.access import SEMUA, Akses
from mcp_asrama.server.guard.scoped import ScopedReader
from mcp_asrama.server.response_mode import Shared
from mcp_asrama.server.settings import ServerSettings

# Definitions change only with a new version: hosts may cache them (public). Reads are live data: never cached.
_DEFINITIONS = CacheHint(ttl_ms=3_600_000, scope="public")
_BY_CALLER = CacheHint(ttl_ms=3_600_000, scope="private")
CACHE_HINTS: dict[CacheableMethod, CacheHint] = {  # `tools/list` is private when it depends on who asks (writes)
    "server/discover": _DEFINITIONS,
    "tools/list": _DEFINITIONS,
    "prompts/list": _DEFINITIONS,
    "resources/list": _DEFINITIONS,
    "resources/templates/list": _DEFINITIONS,
    "resources/read": CacheHint(ttl_ms=0, scope="private"),
}


def build_server(settings: ServerSettings, transport: httpx2.AsyncBaseTransport | None = None) -> AsramaServer:
    """The asrama MCP server; `transport` lets tests reach the data service in process.

    The lifespan follows the service's change feed for live updates, over the network only: an in-process transport
    answers when the response is complete, and a feed never is.
    """

    local = SEMUA if settings.stdio_scope is None else Akses.parse(settings.stdio_scope)
    guard = chain.Guard.of(settings, local)
    book = Konfirmasi(
        saluran=tuple(dict.fromkeys(settings.konfirmasi)),
        store=usulan.usulan_store(settings.confirm_storage, guard.security.codec),
        menit=settings.usulan_menit,
        stdio=settings.transport == "stdio",
    )
    if guard.authority is not None:
        guard.authority.decide_on_pages(book, next(iter(guard.auditors), None))
    slots = listen_gate.Slots(settings.listen_maks, listen_gate.total_listens(settings.max_connections))
    updates = live.Live(slots, guard.limiter if guard.limited else None)

    @asynccontextmanager
    async def lifespan(_server: MCPServer[Any]) -> AsyncIterator[AppState]:
        http = make_http_client(
            settings.base_url, token=settings.token, timeout=settings.api_timeout, transport=transport
        )
        async with http, anyio.create_task_group() as background:
            if transport is None:
                background.start_soon(updates.follow, http)
            client = AsramaClient(http)
            if book.stdio and "halaman" in book.saluran:  # the browser page decides as the local operator
                book.halaman = Halaman(book, ScopedReader(client, local), background, next(iter(guard.auditors), None))
            try:
                yield AppState(
                    client=client,
                    scope_claim=settings.auth_scope_claim,
                    local=local,
                    kesehatan_min_anak=settings.kesehatan_min_anak,
                    konfirmasi=book,
                )
            finally:
                if book.halaman is not None:
                    await book.halaman.tutup()
                background.cancel_scope.cancel()
                guard.close()
                if guard.authority is not None:
                    await guard.authority.aclose()
                book.store.close()

    server = AsramaServer(
        "asrama",
        title="Data Anak Asrama",
        version=__version__,
        instructions=features.instructions(settings.writes),
        lifespan=Shared(lifespan),  # HTTP's two response-mode apps both enter it: once per process
        cache_hints={**CACHE_HINTS, "tools/list": _BY_CALLER} if settings.writes else CACHE_HINTS,
        token_verifier=None if guard.authority else guard.verifier,
        auth_server_provider=guard.authority.provider if guard.authority else None,
        request_state_security=guard.security,
        auth=guard.auth,
        subscriptions=updates.bus,
        extensions=[views.build_apps()],
    )
    chain.install(server, guard, inner=[*updates.middleware(), *discovery.middleware()])  # the whole guard
    updates.install(server)
    features.register(server, book)
    return server
