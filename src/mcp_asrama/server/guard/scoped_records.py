"""Reads of the pesantren records (pelanggaran, hafalan, kesehatan) narrowed to what the principal may see, the same
way as `scoped`: one upstream request per room or class in scope, rows checked again, each request a progress step.
Violations are read through `Terbatas.pelanggaran_view()` (every student with `peran:bk`).
"""

from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import date
from typing import Any, Protocol

from mcp.server.mcpserver.exceptions import ToolError

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


Fetch = Callable[[str | None, str | None, int], Awaitable[_Page]]  # (kelas, kamar, offset) -> one page


async def _records(
    reader: Terbatas, fetch: Fetch, kelas: str | None, kamar: str | None, *, one_student: bool = False
) -> tuple[list[Any], bool]:
    """Every visible record of the filters, each once, page by page; and whether that is all of them (each
    upstream filter gives at most `MAX_SCOPED_ROWS`). `one_student`: the fetch names one student, so one
    upstream filter, whatever the scope (its rows are still checked)."""
    merged: dict[str, Any] = {}
    complete = True
    units = [(kelas, kamar)] if one_student else reader.units(kelas, kamar)
    progress = reader.kemajuan
    progress.expect(len(units))
    for unit_kelas, unit_kamar in units:
        offset = 0
        while True:
            await progress.step()
            page = await fetch(unit_kelas, unit_kamar, offset)
            if offset == 0:
                progress.expect(pages_left(min(page.total, MAX_SCOPED_ROWS), len(page.data), RECORD_PAGE))
            merged.update((r.id, r) for r in page.data if reader.visible(kelas=r.kelas, kamar=r.kamar))
            offset += len(page.data)
            if offset >= page.total or not page.data:
                break
            if offset >= MAX_SCOPED_ROWS:
                complete = False
                break
    await progress.done()
    ordered = sorted(merged.values(), key=lambda r: (r.tanggal, r.id), reverse=True)
    return ordered, complete


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

    def fetch(k: str | None, m: str | None, offset: int) -> Awaitable[_Page]:
        return view.client.daftar_pelanggaran(
            id_anak=id_anak, kelas=k, kamar=m, dari=dari, sampai=sampai, limit=RECORD_PAGE, offset=offset
        )

    return await _records(view, fetch, kelas, kamar, one_student=id_anak is not None)


async def rekap_pelanggaran(
    view: Terbatas, dari: date, sampai: date, *, kelas: str | None, kamar: str | None
) -> RekapPelanggaran:
    """Violations over a range for the visible students (`view` from `pelanggaran_view()`), most points first."""
    rekaps = await view.per_unit(
        view.units(kelas, kamar), lambda k, m: view.client.rekap_pelanggaran(dari, sampai, kelas=k, kamar=m)
    )
    if view.akses.semua:
        return rekaps[0]
    merged = {r.id_anak: r for rekap in rekaps for r in rekap.per_anak if view.visible(kelas=r.kelas, kamar=r.kamar)}
    rows = sorted(merged.values(), key=lambda r: (-r.poin, -r.jumlah, r.id_anak))
    fields = ("ringan", "sedang", "berat", "jumlah", "poin")
    total = JumlahKategori(**{f: sum(getattr(r, f) for r in rows) for f in fields})
    return RekapPelanggaran(dari=dari, sampai=sampai, jumlah_anak=len(rows), total=total, per_anak=rows)


async def setoran(reader: Terbatas, id_anak: str) -> tuple[list[Setoran], bool]:
    """One student's visible deposits, latest first, and whether that is all of them."""

    def fetch(k: str | None, m: str | None, offset: int) -> Awaitable[_Page]:
        return reader.client.daftar_hafalan(id_anak=id_anak, limit=RECORD_PAGE, offset=offset)

    return await _records(reader, fetch, None, None, one_student=True)


async def progres_hafalan(
    reader: Terbatas, *, kelas: str | None, kamar: str | None, id_anak: str | None = None
) -> ProgresHafalan:
    """Memorisation progress of every visible student of the filters, most ayat first."""
    pages = await reader.per_unit(
        reader.units(kelas, kamar), lambda k, m: reader.client.progres_hafalan(id_anak=id_anak, kelas=k, kamar=m)
    )
    if reader.akses.semua:
        return pages[0]
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

    def fetch(k: str | None, m: str | None, offset: int) -> Awaitable[_Page]:
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
    if reader.akses.semua:
        (whole,) = await reader.per_unit(
            reader.units(kelas, kamar), lambda k, m: reader.client.rekap_kesehatan(dari, sampai, kelas=k, kamar=m)
        )
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
