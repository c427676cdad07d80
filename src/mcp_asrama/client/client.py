"""`AsramaClient`: typed calls to the data service over one pooled async HTTP client (httpx2)."""

import logging
from collections.abc import Sequence
from datetime import date
from typing import Any, TypeVar
from urllib.parse import quote

import httpx2
from pydantic import BaseModel, ValidationError

from mcp_asrama.client.exceptions import (
    AsramaError,
    BadResponse,
    Changed,
    Conflict,
    NoMultiFilter,
    NotFound,
    ServiceAuthError,
    ServiceError,
    ServiceRejected,
    ServiceTimeout,
    ServiceUnavailable,
)
from mcp_asrama.client.models import (
    AbsensiHarian,
    Anak,
    DaftarAnak,
    DaftarIzin,
    DaftarJenisPelanggaran,
    DaftarKamar,
    DaftarKelas,
    DaftarKunjungan,
    DaftarKunjunganKlinik,
    DaftarPelanggaran,
    DaftarSetoran,
    HasilAbsensi,
    Izin,
    KunjunganKlinik,
    Pelanggaran,
    ProgresHafalan,
    RekapAbsensi,
    RekapKesehatan,
    RekapPelanggaran,
    Setoran,
)
from mcp_asrama.contract import BERUBAH, FILTER_GANDA, FITUR_HEADER, KONFLIK_HEADER, NILAI_LAMA

log = logging.getLogger(__name__)
M = TypeVar("M", bound=BaseModel)
Values = str | Sequence[str] | None  # one value of a filter, or several (kelas/kamar IN ...: our service only)
Params = list[tuple[str, Any]]
MULTI_VALUED = ("kelas", "kamar")
OLD_VALUES = ("status_lama", "keterangan_lama")  # a write's precondition: sent only to a service marking NILAI_LAMA


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


def _status_error(status: int, headers: httpx2.Headers) -> AsramaError:
    if status == 409 and headers.get(KONFLIK_HEADER) == BERUBAH:
        return Changed("a record changed since it was read (HTTP 409)", status=status)
    if status in (401, 403):
        return ServiceAuthError(f"service refused the token (HTTP {status})", status=status)
    if status == 404:
        return NotFound("not found (HTTP 404)", status=status)
    if status == 409:
        return Conflict("conflicts with what is stored (HTTP 409)", status=status)
    if status < 400:  # the contract never redirects: a redirect means ASRAMA_API_URL points at something else
        return BadResponse(f"service redirected (HTTP {status})", status=status)
    if status < 500:
        return ServiceRejected(f"service rejected the request (HTTP {status})", status=status)
    return ServiceError(f"service failed (HTTP {status})", status=status)


def _params(**values: Any) -> Params:
    """Query parameters without the empty ones; a sequence is one parameter per value (a single one as itself)."""
    params: Params = []
    for name, value in values.items():
        for one in [value] if isinstance(value, str) or not isinstance(value, Sequence) else value:
            if one not in (None, ""):
                params.append((name, one.isoformat() if isinstance(one, date) else one))
    return params


def _multi_valued(params: Params) -> bool:
    """Whether `params` give several values to `kelas` or `kamar`."""
    names = [name for name, _ in params if name in MULTI_VALUED]
    return len(names) != len(set(names))


def _write_headers(actor: str | None, key: str) -> dict[str, str]:
    """Who makes the change (bounded, printable: the service refuses anything else) and its Idempotency-Key."""
    headers = {"Idempotency-Key": key}
    if actor:
        headers["X-Asrama-Actor"] = "".join(c if c.isprintable() else "?" for c in actor[:200])
    return headers


class AsramaClient:
    """The data service's routes; every failure is an `AsramaError`."""

    def __init__(self, http: httpx2.AsyncClient) -> None:
        self._http = http
        # Whether the service's last answer said it honours several values per filter, and old values on writes
        # (None: none seen yet).
        self.filter_ganda: bool | None = None
        self.nilai_lama: bool | None = None

    async def _get(self, path: str, model: type[M], params: Params | None = None) -> M:
        """GET `path`; several values for kelas/kamar need an answer that says they were honoured
        (`NoMultiFilter` otherwise)."""
        return await self._send("GET", path, model, params=params, multi=_multi_valued(params or []))

    async def _post(self, path: str, model: type[M], body: dict[str, Any], headers: dict[str, str]) -> M:
        return await self._send("POST", path, model, json=body, headers=headers)

    async def _send(self, method: str, path: str, model: type[M], multi: bool = False, **request: Any) -> M:
        try:
            response = await self._http.request(method, path, **request)
        except httpx2.TimeoutException as exc:
            raise ServiceTimeout("service did not answer in time") from exc
        except httpx2.RequestError as exc:
            raise ServiceUnavailable(f"service unreachable ({type(exc).__name__})") from exc
        if response.status_code not in (200, 201):
            log.warning("service answered %s", response.status_code, extra={"path": path.split("/")[1]})
            raise _status_error(response.status_code, response.headers)
        fitur = response.headers.get(FITUR_HEADER, "").replace(" ", "").split(",")
        self.filter_ganda, self.nilai_lama = FILTER_GANDA in fitur, NILAI_LAMA in fitur
        if multi and not self.filter_ganda:
            raise NoMultiFilter(f"service ignores several values per filter on {path.split('/')[1]}")
        try:
            return model.model_validate_json(response.content)
        except ValidationError as exc:
            raise BadResponse(f"service answer on {path.split('/')[1]} does not follow the contract") from exc

    async def cari_anak(
        self,
        *,
        nama: str | None = None,
        kelas: Values = None,
        kamar: Values = None,
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

    async def daftar_kelas(self) -> DaftarKelas:
        """`GET /kelas`."""
        return await self._get("/kelas", DaftarKelas)

    async def absensi(
        self,
        tanggal: date,
        *,
        kelas: Values = None,
        kamar: Values = None,
        status: str | None = None,
        semua_anak: bool = False,
        ids: list[str] | None = None,
    ) -> AbsensiHarian:
        """`GET /absensi` of one day; `semua_anak` asks for every student of the filter, `ids` (at most 300) for these
        students only (a service of the tutorial's contract ignores both: its answer then lacks `semua_anak`)."""
        params = _params(tanggal=tanggal, kelas=kelas, kamar=kamar, status=status, semua_anak=semua_anak or None)
        return await self._get("/absensi", AbsensiHarian, [*params, *(("id_anak", i) for i in ids or [])])

    async def rekap(
        self,
        dari: date,
        sampai: date,
        *,
        kelas: Values = None,
        kamar: Values = None,
        id_anak: str | None = None,
        limit: int | None = None,
    ) -> RekapAbsensi:
        """`GET /absensi/rekap` (our service's extension of the contract)."""
        params = _params(dari=dari, sampai=sampai, kelas=kelas, kamar=kamar, id_anak=id_anak, limit=limit)
        return await self._get("/absensi/rekap", RekapAbsensi, params)

    async def catat_absensi(
        self, tanggal: date, entri: list[dict[str, Any]], *, actor: str | None, key: str
    ) -> HasilAbsensi:
        """`POST /absensi/{tanggal}`: a roll call, all or nothing, once per `key`. Each entry's old values
        (`status_lama`, `keterangan_lama`) go only to a service that said it honours them (`Changed` when a record
        changed); to another they are left out, and it writes as before."""
        if not self.nilai_lama:
            entri = [{k: v for k, v in e.items() if k not in OLD_VALUES} for e in entri]
        path = f"/absensi/{tanggal.isoformat()}"
        return await self._post(path, HasilAbsensi, {"entri": entri}, _write_headers(actor, key))

    async def daftar_izin(
        self,
        *,
        aktif: bool | None = None,
        kelas: Values = None,
        kamar: Values = None,
        id_anak: str | None = None,
        tanggal: date | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> DaftarIzin:
        """`GET /izin`."""
        flag = None if aktif is None else str(aktif).lower()
        params = _params(
            aktif=flag, kelas=kelas, kamar=kamar, id_anak=id_anak, tanggal=tanggal, limit=limit, offset=offset or None
        )
        return await self._get("/izin", DaftarIzin, params)

    async def izin(self, id_izin: str) -> Izin:
        """`GET /izin/{id}`; the id is escaped into one path segment."""
        return await self._get(f"/izin/{quote(id_izin, safe='')}", Izin)

    async def ajukan_izin(self, body: dict[str, Any], *, actor: str | None, key: str) -> Izin:
        """`POST /izin`, once per `key`. The days' old records (`absensi_lama`) go only to a service that said it
        honours old values (`Changed` when one changed); to another they are left out, and it writes as before."""
        if not self.nilai_lama:
            body = {k: v for k, v in body.items() if k != "absensi_lama"}
        return await self._post("/izin", Izin, body, _write_headers(actor, key))

    async def akhiri_izin(self, id_izin: str, tanggal_kembali: date, *, actor: str | None, key: str) -> Izin:
        """`POST /izin/{id}/selesai`, once per `key`."""
        body = {"tanggal_kembali": tanggal_kembali.isoformat()}
        return await self._post(f"/izin/{quote(id_izin, safe='')}/selesai", Izin, body, _write_headers(actor, key))

    # --- pelanggaran, hafalan, kesehatan (issue 10) ---

    async def jenis_pelanggaran(self) -> DaftarJenisPelanggaran:
        """`GET /pelanggaran/jenis`: the kinds of violation the school lists."""
        return await self._get("/pelanggaran/jenis", DaftarJenisPelanggaran)

    async def daftar_pelanggaran(
        self,
        *,
        id_anak: str | None = None,
        kelas: Values = None,
        kamar: Values = None,
        dari: date | None = None,
        sampai: date | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> DaftarPelanggaran:
        """`GET /pelanggaran`, latest first."""
        params = _params(
            id_anak=id_anak, kelas=kelas, kamar=kamar, dari=dari, sampai=sampai, limit=limit, offset=offset or None
        )
        return await self._get("/pelanggaran", DaftarPelanggaran, params)

    async def rekap_pelanggaran(
        self, dari: date, sampai: date, *, kelas: Values = None, kamar: Values = None
    ) -> RekapPelanggaran:
        """`GET /pelanggaran/rekap`: points and counts per student and category, most points first."""
        params = _params(dari=dari, sampai=sampai, kelas=kelas, kamar=kamar)
        return await self._get("/pelanggaran/rekap", RekapPelanggaran, params)

    async def catat_pelanggaran(self, body: dict[str, Any], *, actor: str | None, key: str) -> Pelanggaran:
        """`POST /pelanggaran`, once per `key`."""
        return await self._post("/pelanggaran", Pelanggaran, body, _write_headers(actor, key))

    async def daftar_hafalan(
        self,
        *,
        id_anak: str | None = None,
        kelas: Values = None,
        kamar: Values = None,
        dari: date | None = None,
        sampai: date | None = None,
        jenis: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> DaftarSetoran:
        """`GET /hafalan`: deposits, latest first."""
        params = _params(
            id_anak=id_anak,
            kelas=kelas,
            kamar=kamar,
            dari=dari,
            sampai=sampai,
            jenis=jenis,
            limit=limit,
            offset=offset or None,
        )
        return await self._get("/hafalan", DaftarSetoran, params)

    async def progres_hafalan(
        self, *, id_anak: str | None = None, kelas: Values = None, kamar: Values = None, limit: int | None = None
    ) -> ProgresHafalan:
        """`GET /hafalan/progres`: every student of the filter, most ayat first (`limit`: the first that many, with
        the count and averages of all; a service that ignores it sends every student)."""
        params = _params(id_anak=id_anak, kelas=kelas, kamar=kamar, limit=limit)
        return await self._get("/hafalan/progres", ProgresHafalan, params)

    async def catat_setoran(self, body: dict[str, Any], *, actor: str | None, key: str) -> Setoran:
        """`POST /hafalan`, once per `key`."""
        return await self._post("/hafalan", Setoran, body, _write_headers(actor, key))

    async def daftar_kunjungan(
        self,
        *,
        klinik: bool,
        id_anak: str | None = None,
        kelas: Values = None,
        kamar: Values = None,
        dari: date | None = None,
        sampai: date | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> DaftarKunjungan | DaftarKunjunganKlinik:
        """`GET /kesehatan`; the health details are parsed (kept) only when `klinik` (a clinic principal asks)."""
        params = _params(
            id_anak=id_anak, kelas=kelas, kamar=kamar, dari=dari, sampai=sampai, limit=limit, offset=offset or None
        )
        model: type[DaftarKunjungan | DaftarKunjunganKlinik] = DaftarKunjunganKlinik if klinik else DaftarKunjungan
        return await self._get("/kesehatan", model, params)

    async def rekap_kesehatan(
        self, dari: date, sampai: date, *, kelas: Values = None, kamar: Values = None
    ) -> RekapKesehatan:
        """`GET /kesehatan/rekap`: visits and students per category, counts only."""
        params = _params(dari=dari, sampai=sampai, kelas=kelas, kamar=kamar)
        return await self._get("/kesehatan/rekap", RekapKesehatan, params)

    async def catat_kunjungan(self, body: dict[str, Any], *, actor: str | None, key: str) -> KunjunganKlinik:
        """`POST /kesehatan`, once per `key`."""
        return await self._post("/kesehatan", KunjunganKlinik, body, _write_headers(actor, key))
