"""Discipline (pelanggaran): one student's violations (a tool and a resource), a summary over a range, and recording
a violation with the person's confirmation.

Who sees what: violations of the students in the caller's room/class scope; with `peran:bk` (counselling) of every
student. Who records: only for the students in the room/class scope, whatever the roles. A violation's note
(`keterangan`, which may name other children) goes to the service and is never shown again, nor is who recorded it:
no output model here declares them.
"""

from dataclasses import dataclass
from datetime import date
from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from mcp_asrama.client import NotFound
from mcp_asrama.client.models import (
    JenisPelanggaran,
    JumlahKategori,
    Pelanggaran,
    RekapPelanggaran,
    RekapPelanggaranAnak,
)
from mcp_asrama.contract.pelanggaran import DaftarPelanggaran, PelanggaranIn
from mcp_asrama.server.arguments import IdAnak, Kamar, Kelas, Keterangan, KodeJenis, Poin, Tanggal
from mcp_asrama.server.asrama_server import AsramaServer, tool_result
from mcp_asrama.server.features.anak import satu_anak
from mcp_asrama.server.features.common import (
    CREATES,
    NO_ACCESS,
    READ_ONLY,
    HasilAnak,
    Result,
    add_tools,
    check_range,
    latest,
    not_future,
    publish,
    row_of,
    student_resource,
    totals,
)
from mcp_asrama.server.features.record_write import RencanaCatatan, hasil_catat, writable_student
from mcp_asrama.server.features.records import dated_records, rekap_rows
from mcp_asrama.server.features.write import Ditulis, Penulisan, Pertanyaan, Tulis, tanya
from mcp_asrama.server.guard import audit
from mcp_asrama.server.guard.scoped import ScopedReader, scoped_reader
from mcp_asrama.server.views import KONFIRMASI, link

RINGKASAN = "pelanggaran (pelanggaran_anak, rekap_pelanggaran)"
RINGKASAN_TULIS = "catat pelanggaran (catat_pelanggaran)"

TOP = 10
UNSUPPORTED = "Layanan data asrama ini tidak menyediakan data pelanggaran (butuh layanan mcp-asrama)."
BK_READS = (
    "Pelanggaran hanya dapat dicatat untuk anak di kamar atau kelas wewenang Anda; peran:bk menambah pelanggaran "
    "yang dapat dilihat, bukan yang dapat dicatat."
)


class PerKategori(BaseModel):
    """Violations per category."""

    ringan: int = 0
    sedang: int = 0
    berat: int = 0


class DataPelanggaran(BaseModel):
    """One violation of the student."""

    id_pelanggaran: str
    tanggal: date
    kategori: str
    jenis: str = Field(description="Kode jenis pelanggaran")
    nama_jenis: str | None = None
    poin: int


class HasilPelanggaranAnak(HasilAnak):
    """One student's violations: totals first, then each violation, latest first."""

    dari: date | None = None
    sampai: date | None = None
    jumlah: int = Field(description="Jumlah pelanggaran dalam rentang itu")
    poin: int = Field(description="Jumlah poin")
    per_kategori: PerKategori
    data: list[DataPelanggaran]
    catatan: str | None = None


class HasilRekapPelanggaran(Result):
    """Violations over a range: totals, then the students with the most points."""

    dari: date
    sampai: date
    jumlah_anak: int = Field(description="Anak dengan sedikitnya satu pelanggaran")
    total: JumlahKategori
    poin_terbanyak: list[RekapPelanggaranAnak] = Field(description="Maksimal 10 anak dengan poin terbanyak")
    catatan: str | None = None


def _row(p: Pelanggaran) -> DataPelanggaran:
    return row_of(DataPelanggaran, p, "id_pelanggaran")


async def ringkas_pelanggaran(
    reader: ScopedReader, id_anak: str, dari: date | None = None, sampai: date | None = None
) -> HasilPelanggaranAnak:
    """One student's violations (the student visible to the caller's view of violations), aggregates first."""
    view = reader.pelanggaran_view()
    anak = await satu_anak(view, id_anak)
    rows, complete = await dated_records(
        view, "pelanggaran", DaftarPelanggaran, UNSUPPORTED, anak=anak, dari=dari, sampai=sampai
    )
    per = PerKategori(**{k: sum(p.kategori == k for p in rows) for k in ("ringan", "sedang", "berat")})
    data, catatan = latest([_row(p) for p in rows], complete, "pelanggaran", "pelanggaran")
    points = sum(p.poin for p in rows)
    return HasilPelanggaranAnak.tentang(
        anak, dari=dari, sampai=sampai, jumlah=len(rows), poin=points, per_kategori=per, data=data, catatan=catatan
    )


async def _rekap(
    view: ScopedReader, dari: date, sampai: date, *, kelas: str | None, kamar: str | None
) -> RekapPelanggaran:
    """Violations over a range for the visible students (`view` from `pelanggaran_view()`), most points first: the
    service's own counts with its first `TOP` students when one request covers the scope."""
    whole, merged = await rekap_rows(
        view, "pelanggaran", RekapPelanggaran, UNSUPPORTED, dari, sampai, kelas=kelas, kamar=kamar, top=TOP
    )
    if whole is not None:
        return whole
    rows = sorted(merged, key=lambda r: (-r.poin, -r.jumlah, r.id_anak))
    total = JumlahKategori(
        **{f: sum(getattr(r, f) for r in rows) for f in ("ringan", "sedang", "berat", "jumlah", "poin")}
    )
    return RekapPelanggaran(dari=dari, sampai=sampai, jumlah_anak=len(rows), total=total, per_anak=rows)


async def pelanggaran_anak(
    ctx: Context, id_anak: IdAnak, dari: Tanggal | None = None, sampai: Tanggal | None = None
) -> Annotated[CallToolResult, HasilPelanggaranAnak]:
    """Pelanggaran (disiplin) satu anak: jumlah, total poin dan jumlah per kategori (ringan, sedang, berat), lalu
    setiap pelanggaran terbaru dulu (tanggal, jenis, poin). Rentang opsional dari/sampai (YYYY-MM-DD, paling
    panjang 366 hari); tanpa rentang: semua. Belum tahu id-nya? Cari dulu dengan cari_anak."""
    check_range(dari, sampai)
    return tool_result(await ringkas_pelanggaran(scoped_reader(ctx), id_anak, dari, sampai))


async def rekap_pelanggaran(
    ctx: Context, dari: Tanggal, sampai: Tanggal, kelas: Kelas = None, kamar: Kamar = None
) -> Annotated[CallToolResult, HasilRekapPelanggaran]:
    """Rekap pelanggaran dari `dari` sampai `sampai` (YYYY-MM-DD, inklusif, paling panjang 366 hari): jumlah anak
    yang melanggar, jumlah per kategori (ringan, sedang, berat) dan total poin, lalu 10 anak dengan poin terbanyak.
    Filter opsional: kelas, kamar. Untuk rincian satu anak gunakan pelanggaran_anak."""
    check_range(dari, sampai)
    view = scoped_reader(ctx).pelanggaran_view()
    rekap = await _rekap(view, dari, sampai, kelas=kelas, kamar=kamar)
    top = sorted(rekap.per_anak, key=lambda r: (-r.poin, -r.jumlah))[:TOP]
    audit.disclose_aggregate(rekap.jumlah_anak, (r.id_anak for r in rekap.per_anak))
    return tool_result(
        HasilRekapPelanggaran(
            **totals(rekap),
            poin_terbanyak=top,
            catatan=NO_ACCESS if view.akses.kosong else None,
        )
    )


@dataclass(frozen=True)
class RencanaPelanggaran(RencanaCatatan):
    """A violation as it will be recorded."""

    jenis: JenisPelanggaran
    poin: int
    keterangan: str | None


async def rencana_pelanggaran(
    reader: ScopedReader,
    id_anak: IdAnak,
    tanggal: Tanggal,
    jenis: KodeJenis,
    keterangan: Keterangan = None,
    poin: Poin = None,
) -> RencanaPelanggaran:
    """The violation, checked against the student (in the caller's room/class scope: `peran:bk` widens only what
    may be read, never what may be written) and the school's list of kinds."""
    not_future(tanggal)
    try:
        anak = await writable_student(reader, id_anak)
    except ToolError:
        if reader.reads_wider_than_writes:  # a student the counsellor may read: say why this one cannot be recorded
            await satu_anak(reader.pelanggaran_view(), id_anak)
            raise ToolError(BK_READS) from None
        raise
    try:
        kinds = (await reader.client.jenis_pelanggaran()).data
    except NotFound:
        raise ToolError(UNSUPPORTED) from None
    kind = next((k for k in kinds if k.kode == jenis), None)
    if kind is None:
        known = ", ".join(k.kode for k in kinds[:20])
        raise ToolError(f"Jenis pelanggaran '{jenis}' tidak dikenal. Jenis yang ada: {known}.")
    return RencanaPelanggaran(anak, tanggal, kind, kind.poin if poin is None else poin, keterangan)


def pertanyaan_pelanggaran(plan: RencanaPelanggaran) -> Pertanyaan:
    """The question: who, when, what, how many points."""
    default = "" if plan.poin == plan.jenis.poin else f" (bawaan {plan.jenis.poin})"
    what = (
        f"Catat pelanggaran {plan.jenis.kategori} untuk {plan.anak.nama} ({plan.anak.id}) pada "
        f"{plan.tanggal.isoformat()}: {plan.jenis.nama}, {plan.poin} poin{default}."
    )
    return tanya([what], plan.anak.id, Keterangan=plan.keterangan)


HasilCatatPelanggaran = hasil_catat("HasilCatatPelanggaran", "a violation", "pelanggaran", DataPelanggaran)


async def tulis_pelanggaran(tulis: Tulis, plan: RencanaPelanggaran) -> Ditulis:
    """Record the violation once."""
    body = plan.badan(PelanggaranIn, "poin", "keterangan", jenis=plan.jenis.kode)
    made = await tulis.reader.client.catat_pelanggaran(body, actor=tulis.actor, key=tulis.key)
    pesan = f"Pelanggaran tercatat: {made.nama_jenis or made.jenis}, {made.poin} poin."
    change = {"new": "pelanggaran", "pelanggaran": made.id}
    return HasilCatatPelanggaran.ditulis(made, pesan, change, pelanggaran=_row(made))


CATAT = Penulisan(
    "catat_pelanggaran",
    rencana_pelanggaran,
    pertanyaan_pelanggaran,
    tulis_pelanggaran,
    HasilCatatPelanggaran,
    not_found=UNSUPPORTED,
)
PENULISAN = (CATAT,)
catat_pelanggaran = CATAT.as_tool(
    """Catat satu pelanggaran anak pada tanggal (YYYY-MM-DD, paling lambat hari ini): jenis berupa kode dari daftar
    sekolah (mis. 'terlambat_sholat', 'keluar_tanpa_izin', 'membawa_hp'); kategori dan poin mengikuti jenisnya
    kecuali poin diisi. Keterangan opsional (disimpan, tidak ditampilkan lagi). Sebelum menulis, pengguna diminta
    menyetujui; bila menolak, jangan ulangi tanpa diminta."""
)


pelanggaran_resource = student_resource(
    "pelanggaran",
    ringkas_pelanggaran,
    """Pelanggaran satu anak (jumlah, poin, per kategori, lalu setiap pelanggaran), mis.
    asrama://anak/A001/pelanggaran.""",
)


def register(server: AsramaServer) -> None:
    """Add the discipline tools (reads, then the write) and one student's violations as a resource."""
    add_tools(server, {pelanggaran_anak: "Pelanggaran anak", rekap_pelanggaran: "Rekap pelanggaran"}, READ_ONLY)
    add_tools(server, {catat_pelanggaran: "Catat pelanggaran"}, CREATES, meta=link(KONFIRMASI))
    publish(server, "pelanggaran", "Pelanggaran anak", pelanggaran_resource)
