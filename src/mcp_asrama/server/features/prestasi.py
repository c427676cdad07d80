"""Achievements (prestasi): one student's achievements (a tool and a resource), a summary over a range, and recording
an achievement with the person's confirmation.

Who sees and who records: the students in the caller's room/class scope (a role alone adds none). An achievement
is meant to be told (to the parents, at the school's assembly), so what it was (`keterangan`) is shown; who recorded
it is not: no output model here declares it.
"""

from collections import Counter
from dataclasses import dataclass
from datetime import date
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from mcp_asrama.contract.prestasi import (
    BIDANG_PRESTASI,
    TINGKAT_PRESTASI,
    BidangPrestasi,
    DaftarPrestasi,
    JumlahTingkat,
    Prestasi,
    PrestasiBidang,
    PrestasiIn,
    RekapPrestasi,
    RekapPrestasiAnak,
    TingkatPrestasi,
)
from mcp_asrama.server.arguments import IdAnak, Kamar, Kelas, Keterangan, Tanggal
from mcp_asrama.server.asrama_server import AsramaServer, tool_result
from mcp_asrama.server.features import common
from mcp_asrama.server.features.anak import satu_anak
from mcp_asrama.server.features.common import CREATES, NO_ACCESS, READ_ONLY, HasilAnak, Result, add_tools, publish
from mcp_asrama.server.features.record_write import RencanaCatatan, created, hasil_catat, writable_student
from mcp_asrama.server.features.records import dated_records, rekap_rows
from mcp_asrama.server.features.write import Ditulis, Penulisan, Pertanyaan, Tulis, tanya
from mcp_asrama.server.guard import audit
from mcp_asrama.server.guard.scoped import ScopedReader, scoped_reader
from mcp_asrama.server.views import KONFIRMASI, link

RINGKASAN = "prestasi (prestasi_anak, rekap_prestasi)"
RINGKASAN_TULIS = "catat prestasi (catat_prestasi)"

TOP = 10
UNSUPPORTED = "Layanan data asrama ini tidak menyediakan data prestasi (butuh layanan mcp-asrama)."
Bidang = Annotated[BidangPrestasi, Field(description="Bidang: tahfidz, akademik, olahraga, seni atau lainnya")]
Tingkat = Annotated[TingkatPrestasi, Field(description="Tingkat: pesantren, kabupaten, provinsi atau nasional")]
Uraian = Annotated[Keterangan, Field(description="Apa prestasinya, mis. 'Juara 2 MTQ cabang hifzil Qur'an'")]


class DataPrestasi(BaseModel):
    """One achievement of the student."""

    id_prestasi: str
    tanggal: date
    bidang: str
    tingkat: str
    keterangan: str | None = None


class HasilPrestasiAnak(HasilAnak):
    """One student's achievements: counts first, then each achievement, latest first."""

    dari: date | None = None
    sampai: date | None = None
    jumlah: int = Field(description="Jumlah prestasi dalam rentang itu")
    per_tingkat: dict[str, int] = Field(description="Jumlah per tingkat (pesantren, kabupaten, provinsi, nasional)")
    per_bidang: dict[str, int] = Field(description="Jumlah per bidang (tahfidz, akademik, olahraga, seni, lainnya)")
    data: list[DataPrestasi]
    catatan: str | None = None


class HasilRekapPrestasi(Result):
    """Achievements over a range: totals per level and per field, then the students with the highest levels."""

    dari: date
    sampai: date
    jumlah_anak: int = Field(description="Anak dengan sedikitnya satu prestasi")
    total: JumlahTingkat
    per_bidang: list[PrestasiBidang]
    anak_berprestasi: list[RekapPrestasiAnak] = Field(description="Maksimal 10 anak, tingkat tertinggi dulu")
    catatan: str | None = None


def _row(p: Prestasi) -> DataPrestasi:
    return common.row_of(DataPrestasi, p, "id_prestasi")


def _per(values: tuple[str, ...], found: list[str]) -> dict[str, int]:
    """How many of each of `values` (in order, zeros included) `found` holds."""
    counts = Counter(found)
    return {value: counts[value] for value in values}


async def ringkas_prestasi(
    reader: ScopedReader, id_anak: str, dari: date | None = None, sampai: date | None = None
) -> HasilPrestasiAnak:
    """One visible student's achievements, counts first."""
    anak = await satu_anak(reader, id_anak)
    rows, complete = await dated_records(
        reader, "prestasi", DaftarPrestasi, UNSUPPORTED, anak=anak, dari=dari, sampai=sampai
    )
    data, catatan = common.latest([_row(p) for p in rows], complete, "prestasi", "prestasi")
    per_tingkat = _per(TINGKAT_PRESTASI, [p.tingkat for p in rows])
    per_bidang = _per(BIDANG_PRESTASI, [p.bidang for p in rows])
    found = {"jumlah": len(rows), "per_tingkat": per_tingkat, "per_bidang": per_bidang}
    return HasilPrestasiAnak.tentang(anak, dari=dari, sampai=sampai, **found, data=data, catatan=catatan)


def _tingkat(rows: list[Prestasi], **fields: Any) -> dict[str, Any]:
    """The per-level counts of `rows`, their sum, and `fields`."""
    return {**_per(TINGKAT_PRESTASI, [p.tingkat for p in rows]), "jumlah": len(rows), **fields}


def _counted(dari: date, sampai: date, rows: list[Prestasi]) -> RekapPrestasi:
    """The summary of the visible records, as the service counts it (highest levels first, then by name)."""
    students: dict[str, list[Prestasi]] = {}
    for p in rows:
        students.setdefault(p.id_anak, []).append(p)
    per_anak = [
        RekapPrestasiAnak(**_tingkat(mine, id_anak=i, nama=mine[0].nama, kelas=mine[0].kelas, kamar=mine[0].kamar))
        for i, mine in students.items()
    ]
    per_anak.sort(key=lambda r: (*(-getattr(r, t) for t in reversed(TINGKAT_PRESTASI)), r.nama or "", r.id_anak))
    per_bidang = [PrestasiBidang(**_tingkat([p for p in rows if p.bidang == b], bidang=b)) for b in BIDANG_PRESTASI]
    total = JumlahTingkat(**_tingkat(rows))
    return RekapPrestasi(
        dari=dari, sampai=sampai, jumlah_anak=len(per_anak), total=total, per_bidang=per_bidang, per_anak=per_anak
    )


async def prestasi_anak(
    ctx: Context, id_anak: IdAnak, dari: Tanggal | None = None, sampai: Tanggal | None = None
) -> Annotated[CallToolResult, HasilPrestasiAnak]:
    """Prestasi satu anak: jumlah, jumlah per tingkat (pesantren, kabupaten, provinsi, nasional) dan per bidang
    (tahfidz, akademik, olahraga, seni, lainnya), lalu setiap prestasi terbaru dulu (tanggal, bidang, tingkat,
    keterangan). Rentang opsional dari/sampai (YYYY-MM-DD, paling panjang 366 hari); tanpa rentang: semua. Belum
    tahu id-nya? Cari dulu dengan cari_anak."""
    common.check_range(dari, sampai)
    return tool_result(await ringkas_prestasi(scoped_reader(ctx), id_anak, dari, sampai))


async def rekap_prestasi(
    ctx: Context, dari: Tanggal, sampai: Tanggal, kelas: Kelas = None, kamar: Kamar = None
) -> Annotated[CallToolResult, HasilRekapPrestasi]:
    """Rekap prestasi dari `dari` sampai `sampai` (YYYY-MM-DD, inklusif, paling panjang 366 hari): jumlah anak
    berprestasi, jumlah per tingkat dan per bidang, lalu 10 anak dengan prestasi tingkat tertinggi. Filter
    opsional: kelas, kamar. Untuk rincian satu anak gunakan prestasi_anak."""
    common.check_range(dari, sampai)
    reader = scoped_reader(ctx)
    rekap, _ = await rekap_rows(
        reader, "prestasi", RekapPrestasi, UNSUPPORTED, dari, sampai, kelas=kelas, kamar=kamar, merge=False
    )
    complete = True
    if rekap is None:  # the service's one answer does not cover the scope: count the visible records
        rows, complete = await dated_records(
            reader, "prestasi", DaftarPrestasi, UNSUPPORTED, kelas=kelas, kamar=kamar, dari=dari, sampai=sampai
        )
        rekap = _counted(dari, sampai, rows)
    audit.disclose_aggregate(rekap.jumlah_anak, (r.id_anak for r in rekap.per_anak))
    notes = [NO_ACCESS] if reader.akses.kosong else []
    if not complete:
        notes.append("Rekap dihitung dari sebagian prestasi saja; persempit dengan kelas, kamar atau rentang.")
    return tool_result(
        HasilRekapPrestasi(
            **common.totals(rekap),
            per_bidang=rekap.per_bidang,
            anak_berprestasi=rekap.per_anak[:TOP],
            catatan=" ".join(notes) or None,
        )
    )


@dataclass(frozen=True)
class RencanaPrestasi(RencanaCatatan):
    """An achievement as it will be recorded."""

    bidang: str
    tingkat: str
    keterangan: str | None


async def rencana_prestasi(
    reader: ScopedReader, id_anak: IdAnak, tanggal: Tanggal, bidang: Bidang, tingkat: Tingkat, keterangan: Uraian = None
) -> RencanaPrestasi:
    """The achievement, of a student in the caller's room/class scope, on a day that has come."""
    common.not_future(tanggal)
    return RencanaPrestasi(await writable_student(reader, id_anak), tanggal, bidang, tingkat, keterangan)


def pertanyaan_prestasi(plan: RencanaPrestasi) -> Pertanyaan:
    """The question: who, when, which field and level, what."""
    what = (
        f"Catat prestasi {plan.bidang} tingkat {plan.tingkat} untuk {plan.anak.nama} ({plan.anak.id}) pada "
        f"{plan.tanggal.isoformat()}."
    )
    return tanya([what], plan.anak.id, Keterangan=plan.keterangan)


HasilCatatPrestasi = hasil_catat("HasilCatatPrestasi", "an achievement", "prestasi", DataPrestasi)


async def tulis_prestasi(tulis: Tulis, plan: RencanaPrestasi) -> Ditulis:
    """Record the achievement once."""
    made = await created(tulis, "prestasi", Prestasi, plan.badan(PrestasiIn, "bidang", "tingkat", "keterangan"))
    pesan = f"Prestasi tercatat: {made.bidang}, tingkat {made.tingkat}."
    return HasilCatatPrestasi.ditulis(made, pesan, {"new": "prestasi", "prestasi": made.id}, prestasi=_row(made))


CATAT = Penulisan(
    "catat_prestasi", rencana_prestasi, pertanyaan_prestasi, tulis_prestasi, HasilCatatPrestasi, not_found=UNSUPPORTED
)
PENULISAN = (CATAT,)
catat_prestasi = CATAT.as_tool(
    """Catat satu prestasi anak pada tanggal (YYYY-MM-DD, paling lambat hari ini): bidang (tahfidz, akademik,
    olahraga, seni, lainnya), tingkat (pesantren, kabupaten, provinsi, nasional) dan keterangan opsional (apa
    prestasinya, mis. 'Juara 1 lomba kaligrafi'). Sebelum menulis, pengguna diminta menyetujui; bila menolak,
    jangan ulangi tanpa diminta."""
)

prestasi_resource = common.student_resource(
    "prestasi",
    ringkas_prestasi,
    """Prestasi satu anak (jumlah per tingkat dan bidang, lalu setiap prestasi), mis. asrama://anak/A001/prestasi.""",
)


def register(server: AsramaServer) -> None:
    """Add the achievement tools (reads, then the write) and one student's achievements as a resource."""
    add_tools(server, {prestasi_anak: "Prestasi anak", rekap_prestasi: "Rekap prestasi"}, READ_ONLY)
    add_tools(server, {catat_prestasi: "Catat prestasi"}, CREATES, meta=link(KONFIRMASI))
    publish(server, "prestasi", "Prestasi anak", prestasi_resource)
