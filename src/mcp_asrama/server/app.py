"""`build_server(settings)`: the MCP server, its lifespan owning one pooled HTTP client to the service."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
from mcp.server.caching import CacheableMethod, CacheHint
from mcp.server.mcpserver import MCPServer
from mcp.server.request_state import RequestStateSecurity

from mcp_asrama import __version__
from mcp_asrama.client import AsramaClient, make_http_client
from mcp_asrama.server import discovery, features, listen_gate, live, views
from mcp_asrama.server.confirm_page import Halaman
from mcp_asrama.server.core import AppState, AsramaServer
from mcp_asrama.server.features.write import Konfirmasi
from mcp_asrama.server.guard import audit, auth, confirm, ratelimit, usulan, writes
from mcp_asrama.server.guard.access import SEMUA, Akses, current_principal
from mcp_asrama.server.guard.scoped import Terbatas
from mcp_asrama.server.response_mode import Shared
from mcp_asrama.server.settings import ServerSettings

READS = (
    "Data anak asrama/pesantren: cari anak (cari_anak), detail satu anak (detail_anak), daftar kamar (daftar_kamar), "
    "absensi satu hari (absensi_harian), rekap absensi (rekap_absensi), izin (daftar_izin), pelanggaran "
    "(pelanggaran_anak, rekap_pelanggaran), hafalan Al-Qur'an (hafalan_anak, progres_hafalan) dan kesehatan "
    "(rekap_kesehatan: hanya jumlah; kesehatan_anak: rincian hanya untuk petugas klinik). "
    "Jawab hanya dari hasil tool; jangan menebak. Data pribadi (NIK, nomor HP wali, alamat) tidak tersedia."
)
WRITE_NOTE = (
    " Bila wewenang Anda mengizinkan, catat absensi (catat_absensi), ajukan izin (ajukan_izin), akhiri izin "
    "(akhiri_izin), catat pelanggaran (catat_pelanggaran), setoran hafalan (catat_setoran_hafalan) dan, bagi "
    "petugas klinik, kunjungan klinik (catat_kunjungan_klinik): setiap pencatatan ditanyakan dulu kepada pengguna "
    "dan hanya ditulis bila ia menyetujui."
)

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
    keys = [key.get_secret_value() for key in settings.state_keys]
    security = RequestStateSecurity(keys=keys) if keys else RequestStateSecurity.ephemeral()
    verifier = auth.token_verifier(settings)
    limiter = ratelimit.RateLimiter(settings)
    claims = confirm.claim_store(settings.confirm_storage)
    book = Konfirmasi(
        saluran=tuple(dict.fromkeys(settings.konfirmasi)),
        store=usulan.usulan_store(settings.confirm_storage, security.codec),
        menit=settings.usulan_menit,
        stdio=settings.transport == "stdio",
    )
    server: AsramaServer  # built below; which tools write is known once they are registered

    def writes_tool(tool: str) -> bool:
        return tool in server.write_tools

    auditors = audit.middleware(settings, writes_tool)
    slots = listen_gate.Slots(settings.listen_maks, listen_gate.total_listens(settings.max_connections))
    updates = live.Live(slots, limiter if ratelimit.applies(settings) else None)

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
                book.halaman = Halaman(book, Terbatas(client, local), background, next(iter(auditors), None))
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
                claims.close()
                book.store.close()
                limiter.close()

    server = AsramaServer(
        "asrama",
        title="Data Anak Asrama",
        version=__version__,
        instructions=READS + (WRITE_NOTE if settings.writes else ""),
        lifespan=Shared(lifespan),  # HTTP's two response-mode apps both enter it: once per process
        cache_hints={**CACHE_HINTS, "tools/list": _BY_CALLER} if settings.writes else CACHE_HINTS,
        token_verifier=verifier,
        request_state_security=security,
        auth=auth.auth_settings(settings),
        # Rate limits protect a shared, authenticated server; the local operator (stdio, or HTTP on loopback without
        # auth) is never throttled. They run outside the audit (outermost first): a refused request discloses
        # nothing and writes no audit line.
        middleware=[
            *(ratelimit.middleware(limiter) if ratelimit.applies(settings) else []),
            *auditors,
            *updates.middleware(),
            *discovery.middleware(),
        ],
        subscriptions=updates.bus,
        extensions=[views.build_apps()],
    )
    server.verifier, server.limiter = verifier, limiter
    server.writable = lambda: writes.allowed(settings.writes)
    server.clinic = lambda: current_principal(settings.auth_scope_claim, local).akses.klinik
    confirm.install(server.middleware, claims, security.ttl)
    updates.install(server)
    features.register(server, book)
    return server
