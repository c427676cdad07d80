"""Reads of the pesantren records (pelanggaran, hafalan, kesehatan) narrowed to what the principal may see, the same
way as `scoped`: one upstream request per side of the scope (per room or class from a tutorial-contract service),
concurrently, rows checked again, each request a progress step; a rekap or progress of a one-sided scope is the
service's own. Violations are read through `Terbatas.pelanggaran_view()` (every student with `peran:bk`).
"""

from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import date
from typing import Any, Protocol

from mcp.server.mcpserver.exceptions import ToolError

from mcp_asrama.client.client import Values
from mcp_asrama.client.models import (
    JumlahKategori,
    KategoriKesehatan,
    Pelanggaran,
    ProgresAnak,
    ProgresHafalan,
    RataRata,
    RekapKesehatan,
    RekapPelanggaran,
    Setoran,
)
from mcp_asrama.server.guard.scoped import MAX_SCOPED_ROWS, Terbatas
from mcp_asrama.server.progress import pages_left

RECORD_PAGE = 500  # the service's largest page of pelanggaran, hafalan and kesehatan records
KATEGORI_KESEHATAN = ("demam", "batuk-pilek", "pencernaan", "cedera", "kulit", "lainnya")


class _Page(Protocol):
    @property
    def total(self) -> int: ...
    @property
    def data(self) -> Any: ...


Fetch = Callable[[Values, Values, int], Awaitable[_Page]]  # (kelas, kamar, offset) -> one page


async def _records(
    reader: Terbatas, fetch: Fetch, kelas: str | None, kamar: str | None, *, one_student: bool = False
) -> tuple[list[Any], bool]:
    """Every visible record of the filters, each once, page by page; and whether that is all of them (each
    upstream filter gives at most `MAX_SCOPED_ROWS`). `one_student`: the fetch names one student, so one
    upstream filter, whatever the scope (its rows are still checked)."""
    progress = reader.kemajuan

    async def walk(unit_kelas: Values, unit_kamar: Values) -> tuple[list[Any], bool]:
        rows: list[Any] = []
        while True:
            if rows:
                await progress.step()
            page = await fetch(unit_kelas, unit_kamar, len(rows))
            if not rows:
                progress.expect(pages_left(min(page.total, MAX_SCOPED_ROWS), len(page.data), RECORD_PAGE))
            rows.extend(page.data)
            if len(rows) >= page.total or not page.data:
                return rows, True
            if len(rows) >= MAX_SCOPED_ROWS:
                return rows, False

    if one_student:
        progress.expect(1)
        await progress.step()
        walks = [await walk(kelas, kamar)]
        await progress.done()
    else:
        walks = await reader.per_unit(kelas, kamar, walk)
    merged = {r.id: r for rows, _ in walks for r in rows if reader.visible(kelas=r.kelas, kamar=r.kamar)}
    ordered = sorted(merged.values(), key=lambda r: (r.tanggal, r.id), reverse=True)
    return ordered, all(complete for _, complete in walks)


async def pelanggaran(
    view: Terbatas,
    *,
    id_anak: str | None,
    kelas: str | None,
    kamar: str | None,
    dari: date | None,
    sampai: date | None,
) -> tuple[list[Pelanggaran], bool]:
    """Visible violations (`view` from `pelanggaran_view()`), latest first, and whether that is all of them."""

    def fetch(k: Values, m: Values, offset: int) -> Awaitable[_Page]:
        return view.client.daftar_pelanggaran(
            id_anak=id_anak, kelas=k, kamar=m, dari=dari, sampai=sampai, limit=RECORD_PAGE, offset=offset
        )

    return await _records(view, fetch, kelas, kamar, one_student=id_anak is not None)


async def rekap_pelanggaran(
    view: Terbatas, dari: date, sampai: date, *, kelas: str | None, kamar: str | None
) -> RekapPelanggaran:
    """Violations over a range for the visible students (`view` from `pelanggaran_view()`), most points first."""

    def fetch(k: Values, m: Values) -> Awaitable[RekapPelanggaran]:
        return view.client.rekap_pelanggaran(dari, sampai, kelas=k, kamar=m)

    whole = await view.whole(kelas, kamar, fetch, lambda r: r.per_anak)
    if whole is not None:
        return whole
    rekaps = await view.per_unit(kelas, kamar, fetch)
    merged = {r.id_anak: r for rekap in rekaps for r in rekap.per_anak if view.visible(kelas=r.kelas, kamar=r.kamar)}
    rows = sorted(merged.values(), key=lambda r: (-r.poin, -r.jumlah, r.id_anak))
    fields = ("ringan", "sedang", "berat", "jumlah", "poin")
    total = JumlahKategori(**{f: sum(getattr(r, f) for r in rows) for f in fields})
    return RekapPelanggaran(dari=dari, sampai=sampai, jumlah_anak=len(rows), total=total, per_anak=rows)


async def setoran(reader: Terbatas, id_anak: str) -> tuple[list[Setoran], bool]:
    """One student's visible deposits, latest first, and whether that is all of them."""

    def fetch(k: Values, m: Values, offset: int) -> Awaitable[_Page]:
        return reader.client.daftar_hafalan(id_anak=id_anak, limit=RECORD_PAGE, offset=offset)

    return await _records(reader, fetch, None, None, one_student=True)


async def progres_hafalan(
    reader: Terbatas, *, kelas: str | None, kamar: str | None, id_anak: str | None = None, limit: int | None = None
) -> ProgresHafalan:
    """Memorisation progress of the visible students of the filters, most ayat first: the count and averages of all,
    the rows of (at least) the first `limit`. When the service's one answer covers the scope, it sends only those
    rows; otherwise every unit's students are merged."""

    def fetch(top: int | None) -> Callable[[Values, Values], Awaitable[ProgresHafalan]]:
        return lambda k, m: reader.client.progres_hafalan(id_anak=id_anak, kelas=k, kamar=m, limit=top)

    whole = await reader.whole(kelas, kamar, fetch(limit), lambda r: r.data)
    if whole is not None:
        return whole
    pages = await reader.per_unit(kelas, kamar, fetch(None))
    merged: dict[str, ProgresAnak] = {
        r.id_anak: r for page in pages for r in page.data if reader.visible(kelas=r.kelas, kamar=r.kamar)
    }
    rows = sorted(merged.values(), key=lambda r: (-r.ayat, r.id_anak))
    n = len(rows)
    rata = RataRata(
        ayat=round(sum(r.ayat for r in rows) / n, 1) if n else 0,
        juz=round(sum(r.juz for r in rows) / n, 2) if n else 0,
    )
    return ProgresHafalan(jumlah_anak=n, rata_rata=rata, data=rows)


async def kunjungan(
    reader: Terbatas,
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
    klinik = klinik and reader.akses.klinik

    def fetch(k: Values, m: Values, offset: int) -> Awaitable[_Page]:
        return reader.client.daftar_kunjungan(
            klinik=klinik,
            id_anak=id_anak,
            kelas=k,
            kamar=m,
            dari=dari,
            sampai=sampai,
            limit=RECORD_PAGE,
            offset=offset,
        )

    return await _records(reader, fetch, kelas, kamar, one_student=id_anak is not None)


async def rekap_kesehatan(
    reader: Terbatas, dari: date, sampai: date, *, kelas: str | None, kamar: str | None
) -> RekapKesehatan:
    """Visits and distinct students per category over a range, for the visible students (counts only)."""

    def fetch(k: Values, m: Values) -> Awaitable[RekapKesehatan]:
        return reader.client.rekap_kesehatan(dari, sampai, kelas=k, kamar=m)

    # Counts only, no rows to check: a scope's counts come from the service itself only when it is ours (it
    # honours every filter); otherwise from the visits, each checked.
    whole = await reader.whole(kelas, kamar, fetch, lambda r: [])
    if whole is not None and (reader.akses.semua or reader.client.filter_ganda):
        return whole
    visits, complete = await kunjungan(
        reader, klinik=False, id_anak=None, kelas=kelas, kamar=kamar, dari=dari, sampai=sampai
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
