"""Clinic visit counts that cannot single out a child (`rekap_kesehatan`).

Clinic staff (`peran:kesehatan`) see the visits themselves, so they get exact counts for any range and filters.
Everyone else gets counts only when they cannot be narrowed onto a child, by statistical disclosure control:
- **Groups**: the whole school (full access), or one class the caller sees whole, of at least
  `ASRAMA_KESEHATAN_MIN_ANAK` (20) students. One partition only, so that differences give nothing small: rooms are
  not offered (a room lying inside a class leaves their difference, e.g. the one girl of 8A in Khadijah 4), nor a
  class and a room together, nor a scope of several classes unnamed. The school minus the classes shown is the
  classes hidden, so when the small classes together hold fewer than the minimum, the smallest other classes are
  hidden with them (`hidden_classes`); the school's count needs the service's class list (`GET /kelas`).
- **Periods**: one calendar month that has ended. Fixed periods cannot be nested or shifted day by day, and an
  ended one no longer grows, so asking again tomorrow tells nothing new. Weeks are not offered beside months: a run
  of months that starts on a Monday and ends on a Sunday is a run of whole ISO weeks (September to November 2025 is
  13 weeks), so one week's hidden count would be the months' total minus the other weeks.
- **Cells**: a count under `SMALL_COUNT` (5), zero included, is `HIDDEN`; so is the total whenever a category is
  (`complementary`: the total minus the shown categories would recover a hidden one, or show that the hidden ones
  are all zero). Distinct students are shown only beside a shown visit count and from 5 on.
Every such answer is audited as a health aggregate (`"kesehatan": true` with the group).
"""

import calendar
from collections import Counter
from collections.abc import Awaitable, Mapping
from datetime import date
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from mcp_asrama.client import AsramaError, NotFound
from mcp_asrama.client.client import Values
from mcp_asrama.client.models import KategoriKesehatan, RekapKesehatan
from mcp_asrama.names import fold
from mcp_asrama.server.arguments import Kamar, Kelas, Tanggal
from mcp_asrama.server.asrama_server import state_of, tool_result
from mcp_asrama.server.features import anak_reads
from mcp_asrama.server.features.common import NO_ACCESS, Result, check_range
from mcp_asrama.server.features.records import RECORD_PAGE, Page, records
from mcp_asrama.server.guard import audit
from mcp_asrama.server.guard.scoped import ScopedReader, scoped_reader

SMALL_COUNT = 5
HIDDEN: Literal["disembunyikan"] = "disembunyikan"
TOTAL = ""  # the total's key among the cells of one answer (no category is named so)
UNSUPPORTED = "Layanan data asrama ini tidak menyediakan data kesehatan (butuh layanan mcp-asrama)."
KATEGORI_KESEHATAN = ("demam", "batuk-pilek", "pencernaan", "cedera", "kulit", "lainnya")
Hitungan = int | Literal["disembunyikan"]


class KategoriRekap(BaseModel):
    """Visits and distinct students of one category."""

    kategori: str
    kunjungan: Hitungan
    anak: Hitungan


class HasilRekapKesehatan(Result):
    """Clinic visits over a range of one group, counts only: totals, then per category."""

    dari: date
    sampai: date
    kelompok: str = Field(description="Kelompok yang dihitung: seluruh sekolah, satu kelas, atau satu kamar")
    kunjungan: Hitungan = Field(description='Jumlah kunjungan; "disembunyikan" bila kecil atau dapat dihitung balik')
    anak: Hitungan = Field(description='Jumlah anak berbeda yang berkunjung; "disembunyikan" bila kurang dari 5')
    per_kategori: list[KategoriRekap]
    catatan: str | None = None


def complementary(cells: Mapping[str, int]) -> set[str]:
    """The keys of `cells` (categories, and the total under `TOTAL`) to hide: every count under `SMALL_COUNT`,
    and the total as soon as a category is hidden (else the total minus the shown categories would be the hidden
    ones' sum: one of them exactly, or that they are all zero). Hiding the total rather than another category
    leaves no equation at all: each hidden category is only known to be under 5."""
    hidden = {key for key, count in cells.items() if count < SMALL_COUNT}
    return hidden | {TOTAL} if hidden else hidden


def masked(rekap: RekapKesehatan) -> tuple[Hitungan, Hitungan, list[KategoriRekap]]:
    """(visits, students, per category) with the hidden cells of `complementary` as `HIDDEN`."""
    cells = {TOTAL: rekap.kunjungan, **{k.kategori: k.kunjungan for k in rekap.per_kategori}}
    hidden = complementary(cells)

    def pair(key: str, visits: int, students: int) -> tuple[Hitungan, Hitungan]:
        if key in hidden:
            return HIDDEN, HIDDEN
        return visits, students if students >= SMALL_COUNT else HIDDEN

    rows = [
        KategoriRekap(kategori=k.kategori, kunjungan=v, anak=a)
        for k in rekap.per_kategori
        for v, a in [pair(k.kategori, k.kunjungan, k.anak)]
    ]
    return (*pair(TOTAL, rekap.kunjungan, rekap.anak), rows)


def _month(dari: date, sampai: date) -> bool:
    last = calendar.monthrange(dari.year, dari.month)[1]
    return dari.day == 1 and (sampai.year, sampai.month, sampai.day) == (dari.year, dari.month, last)


def hidden_classes(sizes: Mapping[str, int], minimum: int) -> set[str]:
    """The classes (keys of `sizes`, students each) given no health counts: those under `minimum`, and while they
    hold fewer than `minimum` students together (the school minus every class shown would be them), the smallest
    others (ties by name)."""
    hidden = {name for name, size in sizes.items() if size < minimum}
    held = sum(sizes[name] for name in hidden)
    for name in sorted(set(sizes) - hidden, key=lambda name: (sizes[name], name)):
        if not 0 < held < minimum:
            break
        hidden.add(name)
        held += sizes[name]
    return hidden


def _group(reader: ScopedReader, kelas: str | None, kamar: str | None) -> str | None:
    """The one class counted (None: the whole school); a ToolError saying what may be asked otherwise."""
    akses = reader.akses
    if kamar is not None:
        raise ToolError(_ask("rekap per kamar tidak tersedia (kamar beririsan dengan kelas); minta per kelas"))
    if kelas is not None:
        if not akses.boleh_kelas(kelas):
            raise ToolError(_ask(f"kelas {kelas} tidak seluruhnya dalam wewenang Anda"))
        return kelas
    if akses.semua:
        return None
    if len(akses.kelas) != 1 or akses.kamar:
        raise ToolError(_ask("sebutkan satu kelas"))
    return next(iter(akses.kelas))


def _ask(why: str) -> str:
    return (
        f"Rekap kesehatan ditolak: {why}. Selain petugas klinik hanya untuk satu bulan kalender yang sudah lewat "
        "(tanggal 1 s.d. akhir bulan), untuk seluruh sekolah atau satu kelas yang seluruhnya dalam wewenang Anda."
    )


async def _checked(
    reader: ScopedReader, ctx: Context, dari: date, sampai: date, kelas: str | None, kamar: str | None
) -> str | None:
    """The class (None: the school) a non-clinic caller may be given counts for, or a ToolError saying what may be
    asked."""
    if not _month(dari, sampai):
        raise ToolError(_ask("rentangnya bukan satu bulan kalender utuh"))
    if sampai >= date.today():
        raise ToolError(_ask("bulan itu belum selesai"))
    group = _group(reader, kelas, kamar)
    minimum = state_of(ctx).kesehatan_min_anak
    try:
        classes = (await reader.client.daftar_kelas()).data
    except AsramaError as exc:  # a service of the tutorial's contract (404, 405): no class list, no school count
        if not (isinstance(exc, NotFound) or exc.status == 405):
            raise
        if group is None:
            raise ToolError(_ask("layanan data ini tidak memberi daftar kelas; minta per kelas")) from None
        size, _ = await anak_reads.cari_anak(reader, nama=None, kelas=group, kamar=None, status=None, limit=1, offset=0)
        if size < minimum:
            raise ToolError(_ask(f"kelas {group} beranggota kurang dari {minimum} anak")) from None
        return group
    sizes: dict[str, int] = {}
    for row in classes:
        sizes[fold(row.kelas)] = sizes.get(fold(row.kelas), 0) + row.jumlah_anak
    if group is None:
        if sum(sizes.values()) < minimum:
            raise ToolError(_ask(f"sekolah beranggota kurang dari {minimum} anak"))
        return None
    if sizes.get(fold(group), 0) < minimum:
        raise ToolError(_ask(f"kelas {group} beranggota kurang dari {minimum} anak"))
    if fold(group) in hidden_classes(sizes, minimum):
        raise ToolError(_ask(f"kelas {group} ikut dirahasiakan agar kelas kecil tidak terhitung dari selisihnya"))
    return group


async def kunjungan(
    reader: ScopedReader,
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
    klinik = klinik and reader.sees_health_details

    def fetch(k: Values, m: Values, offset: int) -> Awaitable[Page]:
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

    return await records(reader, fetch, kelas, kamar, one_student=id_anak is not None)


async def _rekap(
    reader: ScopedReader, dari: date, sampai: date, *, kelas: str | None, kamar: str | None
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


async def rekap_kesehatan(
    ctx: Context, dari: Tanggal, sampai: Tanggal, kelas: Kelas = None, kamar: Kamar = None
) -> Annotated[CallToolResult, HasilRekapKesehatan]:
    """Rekap kunjungan klinik, hanya jumlah: kunjungan dan anak berbeda, total lalu per kategori (demam,
    batuk-pilek, pencernaan, cedera, kulit, lainnya). Selain petugas klinik: hanya untuk satu bulan kalender yang
    sudah lewat (dari = tanggal 1, sampai = tanggal terakhir), untuk seluruh sekolah atau satu kelas (tidak per
    kamar) dengan anak yang cukup banyak; jumlah di bawah 5 (termasuk 0) dan jumlah yang dapat dipakai menghitung
    balik tampil "disembunyikan": jangan menebak angkanya. Petugas klinik: rentang bebas (YYYY-MM-DD, paling
    panjang 366 hari), filter opsional kelas dan kamar."""
    check_range(dari, sampai)
    reader = scoped_reader(ctx)
    clinic = reader.sees_health_details
    if clinic:
        k, m, name = kelas, kamar, " ".join(f"{a} {b}" for a, b in (("kelas", kelas), ("kamar", kamar)) if b)
    else:
        k, m = await _checked(reader, ctx, dari, sampai, kelas, kamar), None
        name = f"kelas {k}" if k else ""
    try:
        rekap = await _rekap(reader, dari, sampai, kelas=k, kamar=m)
    except NotFound:
        raise ToolError(UNSUPPORTED) from None
    group = {"kelas": k, "kamar": m} if k or m else {"sekolah": True}
    audit.disclose_health_aggregate(group)
    visits: Hitungan
    students: Hitungan
    if clinic:
        visits, students = rekap.kunjungan, rekap.anak
        rows = [KategoriRekap(kategori=c.kategori, kunjungan=c.kunjungan, anak=c.anak) for c in rekap.per_kategori]
    else:
        visits, students, rows = masked(rekap)
    return tool_result(
        HasilRekapKesehatan(
            dari=rekap.dari,
            sampai=rekap.sampai,
            kelompok=name or ("seluruh sekolah" if reader.akses.semua else "anak dalam wewenang Anda"),
            kunjungan=visits,
            anak=students,
            per_kategori=rows,
            catatan=NO_ACCESS if reader.akses.kosong else None,
        )
    )
