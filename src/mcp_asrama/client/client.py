"""`AsramaClient`: typed calls to the data service over one pooled async HTTP client (httpx2)."""

import logging
import re
from collections.abc import Collection, Sequence
from datetime import date
from typing import Any, TypedDict, TypeVar, Unpack
from urllib.parse import quote

import httpx2
from pydantic import BaseModel, ValidationError

from mcp_asrama.client.exceptions import BadResponse, NoMultiFilter, ServiceTimeout, ServiceUnavailable, for_status
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
from mcp_asrama.contract import BY_NAME, FILTER_GANDA, FITUR_HEADER, NILAI_LAMA
from mcp_asrama.contract.absensi import EntriAbsensi
from mcp_asrama.contract.hafalan import HafalanIn
from mcp_asrama.contract.izin import IzinIn
from mcp_asrama.contract.kesehatan import KunjunganIn
from mcp_asrama.contract.oauth_state import KEY_PATTERN, KIND_PATTERN, Dropped, State, StateIn
from mcp_asrama.contract.pelanggaran import PelanggaranIn
from mcp_asrama.contract.pengurus import HasilMasuk, Pengurus
from mcp_asrama.contract.types import Strict

log = logging.getLogger(__name__)
M = TypeVar("M", bound=BaseModel)
Values = str | Sequence[str] | None  # one value of a filter, or several (kelas/kamar IN ...: our service only)
Params = list[tuple[str, Any]]
MULTI_VALUED = ("kelas", "kamar")
OLD_VALUES = ("status_lama", "keterangan_lama")  # a write's precondition: sent only to a service marking NILAI_LAMA


class Unit(TypedDict, total=False):
    """Where: one or several classes and rooms (several: our service only)."""

    kelas: Values
    kamar: Values


class RekapFilters(Unit, total=False):
    id_anak: str | None
    limit: int | None


class RecordFilters(Unit, total=False):
    """A dated-record list's filters: one student, classes and rooms, a period; one page (`limit`: 100 unless said,
    `offset`)."""

    id_anak: str | None
    dari: date | None
    sampai: date | None
    limit: int
    offset: int


class SetoranFilters(RecordFilters, total=False):
    jenis: str | None


class IzinFilters(Unit, total=False):
    aktif: bool | None
    id_anak: str | None
    tanggal: date | None
    limit: int
    offset: int


class ListFilters(SetoranFilters, total=False):
    """Every filter a dated domain's list takes (each domain's service honours its own)."""

    aktif: bool | None
    tanggal: date | None


RECORD_FILTERS = ("aktif", "id_anak", "kelas", "kamar", "tanggal", "dari", "sampai", "jenis")  # in the query's order


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


def _json(body: Strict, left_out: Collection[str]) -> dict[str, Any]:
    """A write body as the service takes it: JSON values of the fields the caller set, but those `left_out`."""
    return body.model_dump(mode="json", exclude_unset=True, exclude=set(left_out))


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

    async def _answer(
        self, method: str, path: str, ok: Collection[int] = (200, 201), **request: Any
    ) -> httpx2.Response:
        """The service's answer with a status in `ok`, noting what it honours; else the error it stands for."""
        try:
            response = await self._http.request(method, path, **request)
        except httpx2.TimeoutException as exc:
            raise ServiceTimeout("service did not answer in time") from exc
        except httpx2.RequestError as exc:
            raise ServiceUnavailable(f"service unreachable ({type(exc).__name__})") from exc
        if response.status_code not in ok:
            log.warning("service answered %s", response.status_code, extra={"path": path.split("/")[1]})
            raise for_status(response.status_code, response.headers)
        fitur = response.headers.get(FITUR_HEADER, "").replace(" ", "").split(",")
        self.filter_ganda, self.nilai_lama = FILTER_GANDA in fitur, NILAI_LAMA in fitur
        return response

    async def _send(self, method: str, path: str, model: type[M], multi: bool = False, **request: Any) -> M:
        response = await self._answer(method, path, **request)
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
        ringkas: int | None = None,
        daftar: str | None = None,
    ) -> AbsensiHarian:
        """`GET /absensi` of one day; `semua_anak` asks for every student of the filter, `ids` (at most 300) for these
        students only (a service of the tutorial's contract ignores both: its answer then lacks `semua_anak`).
        `ringkas` (ours too; with `semua_anak`, not `status`): the day counted by the service, listing at most that
        many students of `daftar` (else those not `hadir`); a service without it answers as if not asked."""
        params = _params(tanggal=tanggal, kelas=kelas, kamar=kamar, status=status, semua_anak=semua_anak or None)
        if ringkas:
            params += _params(ringkas="true", daftar=daftar, limit=ringkas)
        return await self._get("/absensi", AbsensiHarian, [*params, *(("id_anak", i) for i in ids or [])])

    async def rekap(self, dari: date, sampai: date, **filters: Unpack[RekapFilters]) -> RekapAbsensi:
        """`GET /absensi/rekap` (our service's extension of the contract)."""
        return await self.summary("absensi", RekapAbsensi, dari, sampai, **filters)

    async def catat_absensi(
        self, tanggal: date, entri: Sequence[EntriAbsensi], *, actor: str | None, key: str
    ) -> HasilAbsensi:
        """`POST /absensi/{tanggal}`: a roll call, all or nothing, once per `key`. Each entry's old values
        (`status_lama`, `keterangan_lama`) go only to a service that said it honours them (`Changed` when a record
        changed); to another they are left out, and it writes as before."""
        left_out = set() if self.nilai_lama else set(OLD_VALUES)
        rows = [_json(e, left_out) for e in entri]
        path = f"/absensi/{tanggal.isoformat()}"
        return await self._post(path, HasilAbsensi, {"entri": rows}, _write_headers(actor, key))

    # --- dated records of a student: one list, rekap and create call for every dated domain, its route from the
    # domain list (`contract.DOMAINS`); the named calls below are these with their domain's shapes ---

    async def records(self, domain: str, model: type[M], **filters: Unpack[ListFilters]) -> M:
        """`GET /<domain>`: one page of the dated `domain`'s records as `model`, latest first (100 unless `limit`
        says)."""
        values: dict[str, Any] = {name: filters.get(name) for name in RECORD_FILTERS}
        values.update(limit=filters.get("limit", 100), offset=filters.get("offset") or None)
        return await self._get(BY_NAME[domain].path, model, _params(**values))

    async def summary(
        self, domain: str, model: type[M], dari: date, sampai: date, **filters: Unpack[RekapFilters]
    ) -> M:
        """`GET /<domain>/rekap` over [dari, sampai], as `model`."""
        return await self._get(f"{BY_NAME[domain].path}/rekap", model, _params(dari=dari, sampai=sampai, **filters))

    async def create(
        self, domain: str, model: type[M], body: Strict, *, actor: str | None, key: str, left_out: Collection[str] = ()
    ) -> M:
        """`POST /<domain>` with the contract's `body` (its fields set, but `left_out`), once per `key`; the record
        made as `model`."""
        return await self._post(BY_NAME[domain].path, model, _json(body, left_out), _write_headers(actor, key))

    async def daftar_izin(self, **filters: Unpack[IzinFilters]) -> DaftarIzin:
        """`GET /izin` (`aktif`: running today or not; `tanggal`: running that day)."""
        return await self.records("izin", DaftarIzin, **filters)

    async def izin(self, id_izin: str) -> Izin:
        """`GET /izin/{id}`; the id is escaped into one path segment."""
        return await self._get(f"/izin/{quote(id_izin, safe='')}", Izin)

    async def ajukan_izin(self, body: IzinIn, *, actor: str | None, key: str) -> Izin:
        """`POST /izin`, once per `key`. The days' old records (`absensi_lama`) go only to a service that said it
        honours old values (`Changed` when one changed); to another they are left out, and it writes as before."""
        left_out = set() if self.nilai_lama else {"absensi_lama"}
        return await self.create("izin", Izin, body, actor=actor, key=key, left_out=left_out)

    async def akhiri_izin(self, id_izin: str, tanggal_kembali: date, *, actor: str | None, key: str) -> Izin:
        """`POST /izin/{id}/selesai`, once per `key`."""
        body = {"tanggal_kembali": tanggal_kembali.isoformat()}
        return await self._post(f"/izin/{quote(id_izin, safe='')}/selesai", Izin, body, _write_headers(actor, key))

    async def jenis_pelanggaran(self) -> DaftarJenisPelanggaran:
        """`GET /pelanggaran/jenis`: the kinds of violation the school lists."""
        return await self._get("/pelanggaran/jenis", DaftarJenisPelanggaran)

    async def daftar_pelanggaran(self, **filters: Unpack[RecordFilters]) -> DaftarPelanggaran:
        """`GET /pelanggaran`, latest first."""
        return await self.records("pelanggaran", DaftarPelanggaran, **filters)

    async def rekap_pelanggaran(self, dari: date, sampai: date, **filters: Unpack[RekapFilters]) -> RekapPelanggaran:
        """`GET /pelanggaran/rekap`: points and counts per student and category, most points first (`limit` of them)."""
        return await self.summary("pelanggaran", RekapPelanggaran, dari, sampai, **filters)

    async def catat_pelanggaran(self, body: PelanggaranIn, *, actor: str | None, key: str) -> Pelanggaran:
        """`POST /pelanggaran`, once per `key`."""
        return await self.create("pelanggaran", Pelanggaran, body, actor=actor, key=key)

    async def daftar_hafalan(self, **filters: Unpack[SetoranFilters]) -> DaftarSetoran:
        """`GET /hafalan`: deposits, latest first (`jenis`: ziyadah or murajaah only)."""
        return await self.records("hafalan", DaftarSetoran, **filters)

    async def progres_hafalan(
        self, *, id_anak: str | None = None, kelas: Values = None, kamar: Values = None, limit: int | None = None
    ) -> ProgresHafalan:
        """`GET /hafalan/progres`: every student of the filter, most ayat first (`limit`: the first that many, with
        the count and averages of all; a service that ignores it sends every student)."""
        params = _params(id_anak=id_anak, kelas=kelas, kamar=kamar, limit=limit)
        return await self._get("/hafalan/progres", ProgresHafalan, params)

    async def catat_setoran(self, body: HafalanIn, *, actor: str | None, key: str) -> Setoran:
        """`POST /hafalan`, once per `key`."""
        return await self.create("hafalan", Setoran, body, actor=actor, key=key)

    async def daftar_kunjungan(
        self, *, klinik: bool, **filters: Unpack[RecordFilters]
    ) -> DaftarKunjungan | DaftarKunjunganKlinik:
        """`GET /kesehatan`; the health details are parsed (kept) only when `klinik` (a clinic principal asks)."""
        model: type[DaftarKunjungan | DaftarKunjunganKlinik] = DaftarKunjunganKlinik if klinik else DaftarKunjungan
        return await self.records("kesehatan", model, **filters)

    async def rekap_kesehatan(self, dari: date, sampai: date, **unit: Unpack[Unit]) -> RekapKesehatan:
        """`GET /kesehatan/rekap`: visits and students per category, counts only."""
        return await self.summary("kesehatan", RekapKesehatan, dari, sampai, **unit)

    async def catat_kunjungan(self, body: KunjunganIn, *, actor: str | None, key: str) -> KunjunganKlinik:
        """`POST /kesehatan`, once per `key`."""
        return await self.create("kesehatan", KunjunganKlinik, body, actor=actor, key=key)

    # --- the school's own sign-in (`--auth sekolah`): staff, local passwords, the shared state ---

    async def pengurus(self, email: str) -> Pengurus:
        """`GET /pengurus/{email}`: one staff member (the email in any case)."""
        return await self._get(f"/pengurus/{quote(email, safe='')}", Pengurus)

    async def pengurus_masuk(self, email: str, sandi: str) -> HasilMasuk:
        """`POST /pengurus/{email}/masuk`: a local account's password checked; every outcome is an answer (`hasil`)."""
        path = f"/pengurus/{quote(email, safe='')}/masuk"
        return await self._send("POST", path, HasilMasuk, json={"sandi": sandi})

    @staticmethod
    def _state_path(kind: str, key: str) -> str:
        """The route of `kind`/`key`; ValueError for a kind or key the contract's patterns refuse."""
        if not (re.fullmatch(KIND_PATTERN, kind) and re.fullmatch(KEY_PATTERN, key)):
            raise ValueError("an oauth-state kind or key outside the contract's patterns")
        return f"/oauth-state/{kind}/{key}"

    async def state_add(self, kind: str, key: str, body: StateIn) -> State:
        """`POST /oauth-state/{kind}/{key}`: store unless held (`created`); else the value held, unchanged."""
        return await self._send("POST", self._state_path(kind, key), State, json=body.model_dump(mode="json"))

    async def state_put(self, kind: str, key: str, body: StateIn) -> State:
        """`PUT /oauth-state/{kind}/{key}`: store, replacing any value (`created`: none was held)."""
        return await self._send("PUT", self._state_path(kind, key), State, json=body.model_dump(mode="json"))

    async def state_get(self, kind: str, key: str) -> State:
        """`GET /oauth-state/{kind}/{key}` (`NotFound`: none, or expired)."""
        return await self._get(self._state_path(kind, key), State)

    async def state_take(self, kind: str, key: str) -> State:
        """`POST /oauth-state/{kind}/{key}/take`: the value, deleted; `NotFound` for all but one concurrent taker."""
        return await self._send("POST", f"{self._state_path(kind, key)}/take", State)

    async def state_drop(self, kind: str, key: str) -> None:
        """`DELETE /oauth-state/{kind}/{key}` (held or not)."""
        await self._answer("DELETE", self._state_path(kind, key), ok=(204,))

    async def state_drop_family(self, family: str) -> int:
        """`DELETE /oauth-state?family=`: every row of `family` deleted; how many were live."""
        return (await self._send("DELETE", "/oauth-state", Dropped, params={"family": family})).deleted
