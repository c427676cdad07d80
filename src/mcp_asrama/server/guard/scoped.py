"""Reads narrowed to what the asking principal may see, both in the upstream query and on the result.

With full access a read is one upstream request (a day's attendance from a service without our `semua_anak`
extension adds the `/anak` pages of the filter's students, to find who has no record). With a scope such as
`kamar:Al-Fatih 1, kelas:7A` each read becomes one request per room or class in scope (intersected with the
caller's own filters); the answers are merged, de-duplicated and filtered again on the rows themselves, so a
student outside the scope never counts, is never named and never listed — even if the upstream ignored a filter.
"""

from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date
from typing import Any, Protocol

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from mcp_asrama.client import AsramaClient, NotFound
from mcp_asrama.client.models import (
    BELUM_DICATAT,
    Anak,
    CatatanAbsensi,
    Izin,
    JumlahKategori,
    JumlahStatus,
    Kamar,
    KategoriKesehatan,
    Pelanggaran,
    ProgresAnak,
    ProgresHafalan,
    RataRata,
    RekapAbsensi,
    RekapAnak,
    RekapKesehatan,
    RekapPelanggaran,
    Setoran,
)
from mcp_asrama.server.core import state_of
from mcp_asrama.server.guard.access import Akses, fold

# A scoped search, or a day's students listed through `/anak`, gathers every match; beyond this it gives up.
MAX_SCOPED_ROWS = 5_000
PAGE = 100
IZIN_PAGE = 500  # the service's largest page of izin
STATUSES = ("hadir", "izin", "sakit", "alpa")

Unit = tuple[str | None, str | None]  # (kelas, kamar) filters of one upstream request
RECORD_PAGE = 500  # the service's largest page of pelanggaran, hafalan and kesehatan records
KATEGORI_KESEHATAN = ("demam", "batuk-pilek", "pencernaan", "cedera", "kulit", "lainnya")


class _Page(Protocol):
    @property
    def total(self) -> int: ...
    @property
    def data(self) -> Any: ...


Fetch = Callable[[str | None, str | None, int], Awaitable[_Page]]  # (kelas, kamar, offset) -> one page


@dataclass(frozen=True)
class Hari:
    """One day's visible rows; `lengkap` when they include every visible student of the filter (those without a
    record as `belum_dicatat`), false when the service could not list the students (then only the records)."""

    rows: list[CatatanAbsensi]
    lengkap: bool


class OutOfReach(NotFound):
    """The record exists or not; either way this principal may not know."""


@dataclass(frozen=True)
class Terbatas:
    """The data-service client seen through one principal's `Akses`."""

    client: AsramaClient
    akses: Akses

    def units(self, kelas: str | None, kamar: str | None) -> list[Unit]:
        """Upstream filter pairs that together cover exactly the visible part of (kelas, kamar)."""
        if self.akses.semua:
            return [(kelas, kamar)]
        units: list[Unit] = []
        for room in sorted(self.akses.kamar):
            if kamar is None or fold(kamar) == fold(room):
                units.append((kelas, room))
        for klass in sorted(self.akses.kelas):
            if kelas is None or fold(kelas) == fold(klass):
                units.append((klass, kamar))
        return list(dict.fromkeys(units))

    def visible(self, *, kelas: str | None, kamar: str | None) -> bool:
        """Whether a row of `kelas`/`kamar` may be shown."""
        return self.akses.melihat(kelas=kelas, kamar=kamar)

    async def cari_anak(
        self, *, nama: str | None, kelas: str | None, kamar: str | None, status: str | None, limit: int, offset: int
    ) -> tuple[int, list[Anak]]:
        """(total visible matches, one page), ordered by name then id."""
        if self.akses.semua:
            found = await self.client.cari_anak(
                nama=nama, kelas=kelas, kamar=kamar, status=status, limit=limit, offset=offset
            )
            return found.total, found.data
        merged: dict[str, Anak] = {}
        for unit_kelas, unit_kamar in self.units(kelas, kamar):
            matches = await self._everyone(nama, unit_kelas, unit_kamar, status)
            if matches is None:
                raise ToolError(
                    "Terlalu banyak anak yang cocok untuk didaftar; persempit dengan nama, kelas atau kamar."
                )
            merged.update((a.id, a) for a in matches if self.visible(kelas=a.kelas, kamar=a.kamar))
        ordered = sorted(merged.values(), key=lambda a: (a.nama, a.id))
        return len(ordered), ordered[offset : offset + limit]

    async def _everyone(
        self, nama: str | None, kelas: str | None, kamar: str | None, status: str | None
    ) -> list[Anak] | None:
        """Every match of one upstream filter, page by page; None when the service cannot give them all: more than
        `MAX_SCOPED_ROWS`, or pages that do not add up to its total (a tutorial-contract service ignores `offset`)."""
        found: dict[str, Anak] = {}
        while True:
            page = await self.client.cari_anak(
                nama=nama, kelas=kelas, kamar=kamar, status=status, limit=PAGE, offset=len(found)
            )
            fresh = {a.id: a for a in page.data if a.id not in found}
            if len(fresh) < len(page.data):
                return None  # a row repeated: the pages overlap
            found.update(fresh)
            if len(found) >= page.total:
                return list(found.values())
            if not page.data or len(found) >= MAX_SCOPED_ROWS:
                return None

    async def detail_anak(self, id_anak: str) -> Anak:
        """One student, or `OutOfReach` (a NotFound) when outside the scope."""
        anak = await self.client.detail_anak(id_anak)
        if not self.visible(kelas=anak.kelas, kamar=anak.kamar):
            raise OutOfReach("not visible")
        return anak

    async def daftar_kamar(self) -> list[Kamar]:
        """The rooms whose occupancy and musyrif this principal may see."""
        if self.akses.kosong:
            return []
        rooms = (await self.client.daftar_kamar()).data
        return [room for room in rooms if self.akses.boleh_kamar(room.nama)]

    async def absensi(self, tanggal: date, kelas: str | None, kamar: str | None) -> Hari:
        """One day's visible rows matching kelas/kamar, each student once: the records, and every visible student
        of the filter without one as `belum_dicatat` — from our service in the same request (`semua_anak`), else
        listed through `/anak`. When a service cannot list them, only the records (`lengkap` false)."""
        merged: dict[str, CatatanAbsensi] = {}
        lengkap = True
        for unit_kelas, unit_kamar in self.units(kelas, kamar):
            day = await self.client.absensi(tanggal, kelas=unit_kelas, kamar=unit_kamar, semua_anak=True)
            rows = day.data
            if not day.semua_anak:  # not our extension: rows may lack kelas/kamar, and nobody unrecorded is in them
                self._require(rows, kelas=unit_kelas is not None, kamar=unit_kamar is not None)
                unrecorded = await self._unrecorded(rows, unit_kelas, unit_kamar)
                lengkap = lengkap and unrecorded is not None
                rows = [*rows, *(unrecorded or [])]
            for record in rows:
                wanted = self._matches(record.kelas, kelas) and self._matches(record.kamar, kamar)
                if wanted and self.visible(kelas=record.kelas, kamar=record.kamar):
                    merged.setdefault(record.id_anak, record)
        rows = [r for r in merged.values() if lengkap or r.status != BELUM_DICATAT]
        return Hari(rows, lengkap)

    async def _unrecorded(
        self, records: list[CatatanAbsensi], kelas: str | None, kamar: str | None
    ) -> list[CatatanAbsensi] | None:
        """The students of one upstream filter without a row in `records`, listed through `/anak`; None when the
        service cannot list them all."""
        try:
            students = await self._everyone(None, kelas, kamar, None)
        except NotFound:
            return None
        if students is None:
            return None
        recorded = {r.id_anak for r in records}
        return [
            CatatanAbsensi(id_anak=a.id, status=BELUM_DICATAT, nama=a.nama, kelas=a.kelas, kamar=a.kamar)
            for a in students
            if a.id not in recorded
        ]

    def _require(self, records: list[CatatanAbsensi], *, kelas: bool, kamar: bool) -> None:
        """Rows must say which class and room they belong to whenever we must filter or scope on them."""
        needed = [field for field, wanted in (("kelas", kelas), ("kamar", kamar)) if wanted or not self.akses.semua]
        for field in needed:
            if any(getattr(r, field) is None for r in records):
                raise ToolError(
                    f"Layanan data asrama tidak menyertakan {field} pada data absensi, jadi filter {field} atau "
                    f"batas wewenang tidak bisa diterapkan. Panggil tanpa filter {field}, lalu cocokkan dengan "
                    f"cari_anak({field}=...)."
                    if self.akses.semua
                    else "Layanan data asrama tidak menyertakan kelas/kamar pada data absensi, jadi data tidak bisa "
                    "dibatasi sesuai wewenang Anda. Minta admin memakai layanan yang menyertakannya."
                )

    async def catatan_anak(self, tanggal: date, ids: list[str]) -> dict[str, CatatanAbsensi] | None:
        """The day's row of each of `ids` this principal may see (`belum_dicatat` without a record), by id; an
        unknown or invisible id is absent. None when the service cannot look students up by id (not ours)."""
        found: dict[str, CatatanAbsensi] = {}
        for start in range(0, len(ids), PAGE):
            day = await self.client.absensi(tanggal, semua_anak=True, ids=ids[start : start + PAGE])
            if not day.semua_anak:
                return None
            wanted = set(ids[start : start + PAGE])
            found.update(
                (r.id_anak, r) for r in day.data if r.id_anak in wanted and self.visible(kelas=r.kelas, kamar=r.kamar)
            )
        return found

    async def daftar_izin(
        self, *, aktif: bool | None, kelas: str | None, kamar: str | None, tanggal: date | None = None
    ) -> tuple[list[Izin], bool]:
        """The visible izin of the filters, latest first, and whether that is all of them (each upstream request
        gives at most `IZIN_PAGE`)."""
        merged: dict[str, Izin] = {}
        complete = True
        for unit_kelas, unit_kamar in self.units(kelas, kamar):
            page = await self.client.daftar_izin(
                aktif=aktif, kelas=unit_kelas, kamar=unit_kamar, tanggal=tanggal, limit=IZIN_PAGE
            )
            complete = complete and page.total <= len(page.data)
            merged.update((i.id, i) for i in page.data if self.visible(kelas=i.kelas, kamar=i.kamar))
        ordered = sorted(merged.values(), key=lambda i: (i.dari, i.id), reverse=True)
        return ordered, complete

    async def izin(self, id_izin: str) -> Izin:
        """One izin by its handle, or `OutOfReach` (a NotFound) when its student is outside the scope."""
        found = await self.client.izin(id_izin)
        if not self.visible(kelas=found.kelas, kamar=found.kamar):
            raise OutOfReach("not visible")
        return found

    @staticmethod
    def _matches(value: str | None, wanted: str | None) -> bool:
        return wanted is None or (value is not None and fold(value) == fold(wanted))

    async def rekap(
        self, dari: date, sampai: date, *, kelas: str | None, kamar: str | None, id_anak: str | None, top: int
    ) -> RekapAbsensi:
        """Counts over a range for the visible students, with per-student rows (most absent first)."""
        if self.akses.semua:
            return await self.client.rekap(dari, sampai, kelas=kelas, kamar=kamar, id_anak=id_anak, limit=top)
        merged: dict[str, RekapAnak] = {}
        for unit_kelas, unit_kamar in self.units(kelas, kamar):
            rekap = await self.client.rekap(dari, sampai, kelas=unit_kelas, kamar=unit_kamar, id_anak=id_anak)
            for row in rekap.per_anak:
                if self.visible(kelas=row.kelas, kamar=row.kamar):
                    merged.setdefault(row.id_anak, row)
        rows = sorted(merged.values(), key=lambda r: r.tidak_hadir, reverse=True)
        total = JumlahStatus(**{s: sum(getattr(r, s) for r in rows) for s in STATUSES})
        return RekapAbsensi(dari=dari, sampai=sampai, total=total, jumlah_anak=len(rows), per_anak=rows)

    # --- pelanggaran, hafalan, kesehatan (issue 10) ---

    def pelanggaran_view(self) -> "Terbatas":
        """The same service as this principal may see violations: every student with `peran:bk`."""
        return Terbatas(self.client, self.akses.untuk_pelanggaran())

    async def _records(
        self, fetch: Fetch, kelas: str | None, kamar: str | None, *, one_student: bool = False
    ) -> tuple[list[Any], bool]:
        """Every visible record of the filters, each once, page by page; and whether that is all of them (each
        upstream filter gives at most `MAX_SCOPED_ROWS`). `one_student`: the fetch names one student, so one
        upstream filter, whatever the scope (its rows are still checked)."""
        merged: dict[str, Any] = {}
        complete = True
        units = [(kelas, kamar)] if one_student else self.units(kelas, kamar)
        for unit_kelas, unit_kamar in units:
            offset = 0
            while True:
                page = await fetch(unit_kelas, unit_kamar, offset)
                merged.update((r.id, r) for r in page.data if self.visible(kelas=r.kelas, kamar=r.kamar))
                offset += len(page.data)
                if offset >= page.total or not page.data:
                    break
                if offset >= MAX_SCOPED_ROWS:
                    complete = False
                    break
        ordered = sorted(merged.values(), key=lambda r: (r.tanggal, r.id), reverse=True)
        return ordered, complete

    async def pelanggaran(
        self, *, id_anak: str | None, kelas: str | None, kamar: str | None, dari: date | None, sampai: date | None
    ) -> tuple[list[Pelanggaran], bool]:
        """Visible violations (call on `pelanggaran_view()`), latest first, and whether that is all of them."""

        def fetch(k: str | None, m: str | None, offset: int) -> Awaitable[_Page]:
            return self.client.daftar_pelanggaran(
                id_anak=id_anak, kelas=k, kamar=m, dari=dari, sampai=sampai, limit=RECORD_PAGE, offset=offset
            )

        return await self._records(fetch, kelas, kamar, one_student=id_anak is not None)

    async def rekap_pelanggaran(
        self, dari: date, sampai: date, *, kelas: str | None, kamar: str | None
    ) -> RekapPelanggaran:
        """Violations over a range for the visible students (call on `pelanggaran_view()`), most points first."""
        if self.akses.semua:
            return await self.client.rekap_pelanggaran(dari, sampai, kelas=kelas, kamar=kamar)
        merged: dict[str, Any] = {}
        for unit_kelas, unit_kamar in self.units(kelas, kamar):
            rekap = await self.client.rekap_pelanggaran(dari, sampai, kelas=unit_kelas, kamar=unit_kamar)
            merged.update((r.id_anak, r) for r in rekap.per_anak if self.visible(kelas=r.kelas, kamar=r.kamar))
        rows = sorted(merged.values(), key=lambda r: (-r.poin, -r.jumlah, r.id_anak))
        fields = ("ringan", "sedang", "berat", "jumlah", "poin")
        total = JumlahKategori(**{f: sum(getattr(r, f) for r in rows) for f in fields})
        return RekapPelanggaran(dari=dari, sampai=sampai, jumlah_anak=len(rows), total=total, per_anak=rows)

    async def setoran(self, id_anak: str) -> tuple[list[Setoran], bool]:
        """One student's visible deposits, latest first, and whether that is all of them."""

        def fetch(k: str | None, m: str | None, offset: int) -> Awaitable[_Page]:
            return self.client.daftar_hafalan(id_anak=id_anak, limit=RECORD_PAGE, offset=offset)

        return await self._records(fetch, None, None, one_student=True)

    async def progres_hafalan(
        self, *, kelas: str | None, kamar: str | None, id_anak: str | None = None
    ) -> ProgresHafalan:
        """Memorisation progress of every visible student of the filters, most ayat first."""
        if self.akses.semua:
            return await self.client.progres_hafalan(id_anak=id_anak, kelas=kelas, kamar=kamar)
        merged: dict[str, ProgresAnak] = {}
        for unit_kelas, unit_kamar in self.units(kelas, kamar):
            found = await self.client.progres_hafalan(id_anak=id_anak, kelas=unit_kelas, kamar=unit_kamar)
            merged.update((r.id_anak, r) for r in found.data if self.visible(kelas=r.kelas, kamar=r.kamar))
        rows = sorted(merged.values(), key=lambda r: (-r.ayat, r.id_anak))
        n = len(rows)
        rata = RataRata(
            ayat=round(sum(r.ayat for r in rows) / n, 1) if n else 0,
            juz=round(sum(r.juz for r in rows) / n, 2) if n else 0,
        )
        return ProgresHafalan(jumlah_anak=n, rata_rata=rata, data=rows)

    async def kunjungan(
        self,
        *,
        klinik: bool,
        id_anak: str | None,
        kelas: str | None,
        kamar: str | None,
        dari: date | None,
        sampai: date | None,
    ) -> tuple[list[Any], bool]:
        """Visible clinic visits, latest first: with health details (`KunjunganKlinik`) only when `klinik` and the
        principal has `peran:kesehatan`, else `Kunjungan` (no detail is even parsed)."""
        klinik = klinik and self.akses.klinik

        def fetch(k: str | None, m: str | None, offset: int) -> Awaitable[_Page]:
            return self.client.daftar_kunjungan(
                klinik=klinik,
                id_anak=id_anak,
                kelas=k,
                kamar=m,
                dari=dari,
                sampai=sampai,
                limit=RECORD_PAGE,
                offset=offset,
            )

        return await self._records(fetch, kelas, kamar, one_student=id_anak is not None)

    async def rekap_kesehatan(
        self, dari: date, sampai: date, *, kelas: str | None, kamar: str | None
    ) -> RekapKesehatan:
        """Visits and distinct students per category over a range, for the visible students (counts only)."""
        if self.akses.semua:
            return await self.client.rekap_kesehatan(dari, sampai, kelas=kelas, kamar=kamar)
        visits, complete = await self.kunjungan(
            klinik=False, id_anak=None, kelas=kelas, kamar=kamar, dari=dari, sampai=sampai
        )
        if not complete:
            raise ToolError("Terlalu banyak kunjungan klinik untuk direkap; persempit rentang, kelas atau kamar.")
        per_visit = Counter(v.kategori for v in visits)
        students: dict[str, set[str]] = {}
        for v in visits:
            students.setdefault(v.kategori, set()).add(v.id_anak)
        kinds = [*KATEGORI_KESEHATAN, *sorted(set(per_visit) - set(KATEGORI_KESEHATAN))]
        rows = [KategoriKesehatan(kategori=k, kunjungan=per_visit[k], anak=len(students.get(k, ()))) for k in kinds]
        anak = len({v.id_anak for v in visits})
        return RekapKesehatan(dari=dari, sampai=sampai, kunjungan=len(visits), anak=anak, per_kategori=rows)


def terbatas(ctx: Context[Any, Any]) -> Terbatas:
    """The data service as the principal of this request may see it."""
    state = state_of(ctx)
    return Terbatas(state.client, state.principal().akses)
