"""Reads narrowed to what the asking principal may see, both in the upstream query and on the result.

With full access a read is one upstream request (a day's attendance from a service without our `semua_anak`
extension adds the `/anak` pages of the filter's students, to find who has no record). With a scope such as
`kamar:Al-Fatih 1, kelas:7A` each read becomes one request per room or class in scope (intersected with the
caller's own filters); the answers are merged, de-duplicated and filtered again on the rows themselves, so a
student outside the scope never counts, is never named and never listed — even if the upstream ignored a filter.
Every read that walks units or pages, and every range rekap, reports each upstream request as progress.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any, TypeVar

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from mcp_asrama.client import AsramaClient, NotFound
from mcp_asrama.client.models import (
    BELUM_DICATAT,
    Anak,
    CatatanAbsensi,
    Izin,
    JumlahStatus,
    Kamar,
    RekapAbsensi,
    RekapAnak,
)
from mcp_asrama.server.core import state_of
from mcp_asrama.server.guard.access import Akses, fold
from mcp_asrama.server.progress import Kemajuan, pages_left

# A scoped search, or a day's students listed through `/anak`, gathers every match; beyond this it gives up.
MAX_SCOPED_ROWS = 5_000
PAGE = 100
IZIN_PAGE = 500  # the service's largest page of izin
STATUSES = ("hadir", "izin", "sakit", "alpa")

Unit = tuple[str | None, str | None]  # (kelas, kamar) filters of one upstream request
T = TypeVar("T")


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
    """The data-service client seen through one principal's `Akses`, counting its requests in `kemajuan`."""

    client: AsramaClient
    akses: Akses
    kemajuan: Kemajuan = field(default_factory=Kemajuan)

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

    async def per_unit(self, units: list[Unit], fetch: Callable[[str | None, str | None], Awaitable[T]]) -> list[T]:
        """One upstream request per unit, in order, each a step of progress."""
        self.kemajuan.expect(len(units))
        found = []
        for unit_kelas, unit_kamar in units:
            await self.kemajuan.step()
            found.append(await fetch(unit_kelas, unit_kamar))
        await self.kemajuan.done()
        return found

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
        units = self.units(kelas, kamar)
        self.kemajuan.expect(len(units))
        for unit_kelas, unit_kamar in units:
            matches = await self._everyone(nama, unit_kelas, unit_kamar, status)
            if matches is None:
                raise ToolError(
                    "Terlalu banyak anak yang cocok untuk didaftar; persempit dengan nama, kelas atau kamar."
                )
            merged.update((a.id, a) for a in matches if self.visible(kelas=a.kelas, kamar=a.kamar))
        await self.kemajuan.done()
        ordered = sorted(merged.values(), key=lambda a: (a.nama, a.id))
        return len(ordered), ordered[offset : offset + limit]

    async def _everyone(
        self, nama: str | None, kelas: str | None, kamar: str | None, status: str | None
    ) -> list[Anak] | None:
        """Every match of one upstream filter, page by page; None when the service cannot give them all: more than
        `MAX_SCOPED_ROWS`, or pages that do not add up to its total (a tutorial-contract service ignores `offset`)."""
        found: dict[str, Anak] = {}
        while True:
            await self.kemajuan.step()
            page = await self.client.cari_anak(
                nama=nama, kelas=kelas, kamar=kamar, status=status, limit=PAGE, offset=len(found)
            )
            if not found:
                self.kemajuan.expect(pages_left(min(page.total, MAX_SCOPED_ROWS), len(page.data), PAGE))
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
        units = self.units(kelas, kamar)
        self.kemajuan.expect(len(units))
        for unit_kelas, unit_kamar in units:
            await self.kemajuan.step()
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
        await self.kemajuan.done()
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
        needed = [name for name, wanted in (("kelas", kelas), ("kamar", kamar)) if wanted or not self.akses.semua]
        for name in needed:
            if any(getattr(r, name) is None for r in records):
                raise ToolError(
                    f"Layanan data asrama tidak menyertakan {name} pada data absensi, jadi filter {name} atau "
                    f"batas wewenang tidak bisa diterapkan. Panggil tanpa filter {name}, lalu cocokkan dengan "
                    f"cari_anak({name}=...)."
                    if self.akses.semua
                    else "Layanan data asrama tidak menyertakan kelas/kamar pada data absensi, jadi data tidak bisa "
                    "dibatasi sesuai wewenang Anda. Minta admin memakai layanan yang menyertakannya."
                )

    async def catatan_anak(self, tanggal: date, ids: list[str]) -> dict[str, CatatanAbsensi] | None:
        """The day's row of each of `ids` this principal may see (`belum_dicatat` without a record), by id; an
        unknown or invisible id is absent. None when the service cannot look students up by id (not ours)."""
        found: dict[str, CatatanAbsensi] = {}
        self.kemajuan.expect(pages_left(len(ids), 0, PAGE))
        for start in range(0, len(ids), PAGE):
            await self.kemajuan.step()
            day = await self.client.absensi(tanggal, semua_anak=True, ids=ids[start : start + PAGE])
            if not day.semua_anak:
                return None
            wanted = set(ids[start : start + PAGE])
            found.update(
                (r.id_anak, r) for r in day.data if r.id_anak in wanted and self.visible(kelas=r.kelas, kamar=r.kamar)
            )
        await self.kemajuan.done()
        return found

    async def daftar_izin(
        self, *, aktif: bool | None, kelas: str | None, kamar: str | None, tanggal: date | None = None
    ) -> tuple[list[Izin], bool]:
        """The visible izin of the filters, latest first, and whether that is all of them (each upstream request
        gives at most `IZIN_PAGE`)."""
        pages = await self.per_unit(
            self.units(kelas, kamar),
            lambda k, m: self.client.daftar_izin(aktif=aktif, kelas=k, kamar=m, tanggal=tanggal, limit=IZIN_PAGE),
        )
        complete = all(page.total <= len(page.data) for page in pages)
        merged = {i.id: i for page in pages for i in page.data if self.visible(kelas=i.kelas, kamar=i.kamar)}
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
        limit = top if self.akses.semua else None  # full access: one request, the service's own totals
        rekaps = await self.per_unit(
            self.units(kelas, kamar),
            lambda k, m: self.client.rekap(dari, sampai, kelas=k, kamar=m, id_anak=id_anak, limit=limit),
        )
        if self.akses.semua:
            return rekaps[0]
        merged: dict[str, RekapAnak] = {}
        for rekap in rekaps:
            for row in rekap.per_anak:
                if self.visible(kelas=row.kelas, kamar=row.kamar):
                    merged.setdefault(row.id_anak, row)
        rows = sorted(merged.values(), key=lambda r: r.tidak_hadir, reverse=True)
        total = JumlahStatus(**{s: sum(getattr(r, s) for r in rows) for s in STATUSES})
        return RekapAbsensi(dari=dari, sampai=sampai, total=total, jumlah_anak=len(rows), per_anak=rows)

    def pelanggaran_view(self) -> "Terbatas":
        """The same service as this principal may see violations: every student with `peran:bk`."""
        return Terbatas(self.client, self.akses.untuk_pelanggaran(), self.kemajuan)


def terbatas(ctx: Context[Any, Any]) -> Terbatas:
    """The data service as the principal of this request may see it."""
    state = state_of(ctx)
    return Terbatas(state.client, state.principal().akses, Kemajuan(ctx))
