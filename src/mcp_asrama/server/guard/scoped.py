"""Reads narrowed to what the asking principal may see, both in the upstream query and on the result.

With full access a read is one upstream request (a day's attendance from a service without our `semua_anak`
extension adds the `/anak` pages of the filter's students, to find who has no record). A scope such as
`kamar:Al-Fatih 1, kamar:Al-Fatih 2, kelas:7A` is two *sides*: its rooms and its classes, each intersected with the
caller's own filters. Our service takes every room (or class) of a side in one request (`kamar=A&kamar=B`, marked
`filter-ganda` in its answer); a service of the tutorial's contract gets one request per room or class instead
(found out from its first answer, then remembered). So the usual musyrif or wali kelas (rooms only, or classes
only) costs one request, as the office does: a search passes `limit`/`offset` upstream and takes its `total`, a
rekap takes the service's own totals. Several requests run concurrently; a search asks each for only the first
`offset + limit` rows, merges them by name and id, and counts the overlap of the two sides (a student in a room
*and* a class in scope) once.

Every row is still checked against the scope: when one fails (an upstream that ignored a filter) the read falls
back to gathering every match and filtering it, so a student outside the scope never counts, is never named and
never listed. Every read that walks units or pages, and every range rekap, reports each upstream request as
progress.
"""

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import Any, TypeVar

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from mcp_asrama.client import AsramaClient, NoMultiFilter, NotFound
from mcp_asrama.client.client import Values
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
from mcp_asrama.names import fold
from mcp_asrama.server.core import state_of
from mcp_asrama.server.guard.access import Akses
from mcp_asrama.server.guard.scope_units import Unit, as_filter, gather, overlap
from mcp_asrama.server.progress import Kemajuan, pages_left

# Gathering every match of a filter (the fallback, or a day's students listed through `/anak`) stops here.
MAX_SCOPED_ROWS = 5_000
PAGE = 100
IZIN_PAGE = 500  # the service's largest page of izin
STATUSES = ("hadir", "izin", "sakit", "alpa")
TOO_MANY = "Terlalu banyak anak yang cocok untuk didaftar; persempit dengan nama, kelas atau kamar."

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

    def sides(self, kelas: str | None, kamar: str | None, *, single: bool = False) -> tuple[list[Unit], list[Unit]]:
        """The upstream filters of the visible part of (kelas, kamar): the rooms' side and the classes' side. One
        unit per side, unless `single` or the service is known to take one value per filter: one per room/class."""
        if self.akses.semua:
            return [(kelas, kamar)], []
        rooms = [room for room in sorted(self.akses.kamar) if kamar is None or fold(kamar) == fold(room)]
        classes = [klass for klass in sorted(self.akses.kelas) if kelas is None or fold(kelas) == fold(klass)]
        if single or self.client.filter_ganda is False:
            return [(kelas, room) for room in rooms], [(klass, kamar) for klass in classes]
        return ([(kelas, as_filter(rooms))] if rooms else []), ([(as_filter(classes), kamar)] if classes else [])

    def units(self, kelas: str | None, kamar: str | None, *, single: bool = False) -> list[Unit]:
        """Upstream filters that together cover exactly the visible part of (kelas, kamar)."""
        rooms, classes = self.sides(kelas, kamar, single=single)
        return list(dict.fromkeys([*rooms, *classes]))

    async def per_unit(
        self, kelas: str | None, kamar: str | None, fetch: Callable[[Values, Values], Awaitable[T]]
    ) -> list[T]:
        """One upstream request per unit, concurrently, each a step of progress; one per room or class when the
        service turns out to take one value per filter."""
        try:
            return await self._each(self.units(kelas, kamar), fetch)
        except NoMultiFilter:
            return await self._each(self.units(kelas, kamar, single=True), fetch)

    async def _each(self, units: list[Unit], fetch: Callable[[Values, Values], Awaitable[T]]) -> list[T]:
        self.kemajuan.expect(len(units))

        def call(unit: Unit) -> Callable[[], Awaitable[T]]:
            async def one() -> T:
                await self.kemajuan.step()
                return await fetch(*unit)

            return one

        found = await gather([call(unit) for unit in units])
        await self.kemajuan.done()
        return found

    async def whole(
        self, kelas: str | None, kamar: str | None, fetch: Callable[[Values, Values], Awaitable[T]], rows: Any
    ) -> T | None:
        """The service's own answer for (kelas, kamar) when one request covers all this principal may see of it
        (full access, or a scope of one side) and every row it names (`rows(answer)`) is visible; else None."""
        units = self.units(kelas, kamar)
        if len(units) != 1:
            return None
        try:
            (found,) = await self._each(units, fetch)
        except NoMultiFilter:
            return None
        if self.akses.semua or all(self.visible(kelas=r.kelas, kamar=r.kamar) for r in rows(found)):
            return found
        return None

    def visible(self, *, kelas: str | None, kamar: str | None) -> bool:
        """Whether a row of `kelas`/`kamar` may be shown."""
        return self.akses.melihat(kelas=kelas, kamar=kamar)

    def _all_visible(self, rows: Iterable[Anak]) -> bool:
        return all(self.visible(kelas=a.kelas, kamar=a.kamar) for a in rows)

    async def cari_anak(
        self, *, nama: str | None, kelas: str | None, kamar: str | None, status: str | None, limit: int, offset: int
    ) -> tuple[int, list[Anak]]:
        """(total visible matches, one page), ordered by name then id."""
        if self.akses.semua:
            found = await self.client.cari_anak(
                nama=nama, kelas=kelas, kamar=kamar, status=status, limit=limit, offset=offset
            )
            return found.total, found.data
        try:
            return await self._cari(nama, kelas, kamar, status, limit, offset, single=False)
        except NoMultiFilter:
            return await self._cari(nama, kelas, kamar, status, limit, offset, single=True)

    async def _cari(
        self,
        nama: str | None,
        kelas: str | None,
        kamar: str | None,
        status: str | None,
        limit: int,
        offset: int,
        *,
        single: bool,
    ) -> tuple[int, list[Anak]]:
        rooms, classes = self.sides(kelas, kamar, single=single)
        units = [*rooms, *classes]
        if len(set(units)) == 1:  # one request, the page as the service cuts it
            (unit_kelas, unit_kamar), *_ = units
            page = await self.client.cari_anak(
                nama=nama, kelas=unit_kelas, kamar=unit_kamar, status=status, limit=limit, offset=offset
            )
            if self._all_visible(page.data):
                return page.total, page.data
        elif units:
            overlaps = [o for room in rooms for klass in classes if (o := overlap(room, klass)) is not None]
            self.kemajuan.expect(len(units) + len(overlaps))
            heads = [self._head(nama, u, status, offset + limit) for u in units]
            counted = [self._head(nama, u, status, 1) for u in overlaps]  # only their totals count
            found = await gather([*heads, *counted])
            await self.kemajuan.done()
            if all(h is not None for h in found):
                pages = [h for h in found if h is not None]
                merged = {a.id: a for _, rows in pages[: len(units)] for a in rows}
                if self._all_visible(merged.values()):
                    # The rooms' side and the classes' side are each disjoint; their overlaps were counted twice.
                    total = sum(t for t, _ in pages[: len(units)]) - sum(t for t, _ in pages[len(units) :])
                    ordered = sorted(merged.values(), key=lambda a: (a.nama, a.id))
                    return total, ordered[offset : offset + limit]
        else:
            return 0, []
        return await self._gathered(nama, list(dict.fromkeys(units)), status, limit, offset)

    def _head(
        self, nama: str | None, unit: Unit, status: str | None, rows: int
    ) -> Callable[[], Awaitable[tuple[int, list[Anak]] | None]]:
        """(total, its first `rows` matches) of one unit, page by page; None when its pages overlap (a service that
        ignores `offset`)."""

        async def head() -> tuple[int, list[Anak]] | None:
            found: dict[str, Anak] = {}
            while True:
                await self.kemajuan.step()
                page = await self.client.cari_anak(
                    nama=nama,
                    kelas=unit[0],
                    kamar=unit[1],
                    status=status,
                    limit=min(PAGE, rows - len(found)),
                    offset=len(found),
                )
                if not found:
                    self.kemajuan.expect(pages_left(min(page.total, rows), len(page.data), PAGE))
                fresh = {a.id: a for a in page.data if a.id not in found}
                if len(fresh) < len(page.data):
                    return None
                found.update(fresh)
                if len(found) >= min(page.total, rows) or not page.data:
                    return page.total, list(found.values())

        return head

    async def _gathered(
        self, nama: str | None, units: list[Unit], status: str | None, limit: int, offset: int
    ) -> tuple[int, list[Anak]]:
        """The fallback: every match of each unit, filtered on the rows themselves."""
        merged: dict[str, Anak] = {}
        self.kemajuan.expect(len(units))
        for unit_kelas, unit_kamar in units:
            matches = await self._everyone(nama, unit_kelas, unit_kamar, status)
            if matches is None:
                raise ToolError(TOO_MANY)
            merged.update((a.id, a) for a in matches if self.visible(kelas=a.kelas, kamar=a.kamar))
        await self.kemajuan.done()
        ordered = sorted(merged.values(), key=lambda a: (a.nama, a.id))
        return len(ordered), ordered[offset : offset + limit]

    async def _everyone(self, nama: str | None, kelas: Values, kamar: Values, status: str | None) -> list[Anak] | None:
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

        async def day(unit_kelas: Values, unit_kamar: Values) -> tuple[list[CatatanAbsensi], bool]:
            found = await self.client.absensi(tanggal, kelas=unit_kelas, kamar=unit_kamar, semua_anak=True)
            if found.semua_anak:
                return found.data, True
            # Not our extension: rows may lack kelas/kamar, and nobody unrecorded is in them.
            self._require(found.data, kelas=unit_kelas is not None, kamar=unit_kamar is not None)
            unrecorded = await self._unrecorded(found.data, unit_kelas, unit_kamar)
            return [*found.data, *(unrecorded or [])], unrecorded is not None

        days = await self.per_unit(kelas, kamar, day)
        lengkap = all(complete for _, complete in days)
        merged: dict[str, CatatanAbsensi] = {}
        for rows, _ in days:
            for record in rows:
                wanted = self._matches(record.kelas, kelas) and self._matches(record.kamar, kamar)
                if wanted and self.visible(kelas=record.kelas, kamar=record.kamar):
                    merged.setdefault(record.id_anak, record)
        return Hari([r for r in merged.values() if lengkap or r.status != BELUM_DICATAT], lengkap)

    async def _unrecorded(
        self, records: list[CatatanAbsensi], kelas: Values, kamar: Values
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
            kelas,
            kamar,
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
        """Counts over a range for the visible students, with per-student rows (most absent first, at least the
        first `top`): the service's own when one request covers the scope, else merged from one per unit."""

        def fetch(limit: int | None) -> Callable[[Values, Values], Awaitable[RekapAbsensi]]:
            return lambda k, m: self.client.rekap(dari, sampai, kelas=k, kamar=m, id_anak=id_anak, limit=limit)

        whole = await self.whole(kelas, kamar, fetch(top), lambda r: r.per_anak)
        if whole is not None:
            return whole
        merged: dict[str, RekapAnak] = {}
        for rekap in await self.per_unit(kelas, kamar, fetch(None)):
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
