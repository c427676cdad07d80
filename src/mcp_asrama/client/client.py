"""`AsramaClient`: typed calls to the data service over one pooled async HTTP client (httpx2)."""

import logging
from datetime import date
from typing import Any, TypeVar
from urllib.parse import quote

import httpx2
from pydantic import BaseModel, ValidationError

from mcp_asrama.client.exceptions import (
    AsramaError,
    BadResponse,
    NotFound,
    ServiceAuthError,
    ServiceError,
    ServiceRejected,
    ServiceTimeout,
    ServiceUnavailable,
)
from mcp_asrama.client.models import AbsensiHarian, Anak, DaftarAnak, DaftarKamar, RekapAbsensi

log = logging.getLogger(__name__)
M = TypeVar("M", bound=BaseModel)


def make_http_client(
    base_url: str, *, token: str | None, timeout: float, transport: httpx2.AsyncBaseTransport | None = None
) -> httpx2.AsyncClient:
    """The one HTTP client of a process: keep-alive pool, timeouts, the service's bearer token."""
    headers = {"Accept": "application/json", "User-Agent": "mcp-asrama"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return httpx2.AsyncClient(
        base_url=base_url,
        headers=headers,
        timeout=httpx2.Timeout(timeout),
        limits=httpx2.Limits(max_connections=50, max_keepalive_connections=20, keepalive_expiry=30.0),
        transport=transport,
        follow_redirects=False,
    )


def _status_error(status: int) -> AsramaError:
    if status in (401, 403):
        return ServiceAuthError(f"service refused the token (HTTP {status})", status=status)
    if status == 404:
        return NotFound("not found (HTTP 404)", status=status)
    if status < 400:  # the contract never redirects: a redirect means ASRAMA_API_URL points at something else
        return BadResponse(f"service redirected (HTTP {status})", status=status)
    if status < 500:
        return ServiceRejected(f"service rejected the request (HTTP {status})", status=status)
    return ServiceError(f"service failed (HTTP {status})", status=status)


def _params(**values: Any) -> dict[str, Any]:
    """Query parameters without the empty ones."""
    return {k: v.isoformat() if isinstance(v, date) else v for k, v in values.items() if v not in (None, "")}


class AsramaClient:
    """The data service's read routes; every failure is an `AsramaError`."""

    def __init__(self, http: httpx2.AsyncClient) -> None:
        self._http = http

    async def _get(self, path: str, model: type[M], params: dict[str, Any] | None = None) -> M:
        try:
            response = await self._http.get(path, params=params)
        except httpx2.TimeoutException as exc:
            raise ServiceTimeout("service did not answer in time") from exc
        except httpx2.RequestError as exc:
            raise ServiceUnavailable(f"service unreachable ({type(exc).__name__})") from exc
        if response.status_code != 200:
            log.warning("service answered %s", response.status_code, extra={"path": path.split("/")[1]})
            raise _status_error(response.status_code)
        try:
            return model.model_validate_json(response.content)
        except ValidationError as exc:
            raise BadResponse(f"service answer on {path.split('/')[1]} does not follow the contract") from exc

    async def cari_anak(
        self,
        *,
        nama: str | None = None,
        kelas: str | None = None,
        kamar: str | None = None,
        status: str | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> DaftarAnak:
        """`GET /anak`."""
        params = _params(nama=nama, kelas=kelas, kamar=kamar, status=status, limit=limit, offset=offset or None)
        return await self._get("/anak", DaftarAnak, params)

    async def detail_anak(self, id_anak: str) -> Anak:
        """`GET /anak/{id}`; the id is escaped into one path segment."""
        return await self._get(f"/anak/{quote(id_anak, safe='')}", Anak)

    async def daftar_kamar(self) -> DaftarKamar:
        """`GET /kamar`."""
        return await self._get("/kamar", DaftarKamar)

    async def absensi(
        self,
        tanggal: date,
        *,
        kelas: str | None = None,
        kamar: str | None = None,
        status: str | None = None,
        semua_anak: bool = False,
    ) -> AbsensiHarian:
        """`GET /absensi` of one day; `semua_anak` asks for every student of the filter (a service of the tutorial's
        contract ignores it: its answer then lacks `semua_anak`)."""
        params = _params(tanggal=tanggal, kelas=kelas, kamar=kamar, status=status, semua_anak=semua_anak or None)
        return await self._get("/absensi", AbsensiHarian, params)

    async def rekap(
        self,
        dari: date,
        sampai: date,
        *,
        kelas: str | None = None,
        kamar: str | None = None,
        id_anak: str | None = None,
        limit: int | None = None,
    ) -> RekapAbsensi:
        """`GET /absensi/rekap` (our service's extension of the contract)."""
        params = _params(dari=dari, sampai=sampai, kelas=kelas, kamar=kamar, id_anak=id_anak, limit=limit)
        return await self._get("/absensi/rekap", RekapAbsensi, params)
