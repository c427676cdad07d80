"""Qur'an memorisation (hafalan): one student's progress and deposits (a tool and a resource), progress per class or
room, and recording a deposit (setoran) with the person's confirmation.

A deposit names its surah by number or by name (`quran.find_surah`, forgiving about spelling) and its ayat are
checked against the surah's real length before anyone is asked. The examiner's name (`penguji`) goes to the
service and is never shown again.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date
from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from mcp_asrama import quran
from mcp_asrama.client import NotFound
from mcp_asrama.client.client import Values
from mcp_asrama.client.models import ProgresAnak, ProgresHafalan, RataRata, Setoran
from mcp_asrama.contract.hafalan import HafalanIn
from mcp_asrama.privacy import RESULT_BUDGET, fitting_count
from mcp_asrama.server import views
from mcp_asrama.server.arguments import (
    Ayat,
    IdAnak,
    JenisSetoran,
    Kamar,
    Kelas,
    Nama200,
    Nilai,
    SurahArg,
    Tanggal,
)
from mcp_asrama.server.asrama_server import AsramaServer, tool_result
from mcp_asrama.server.features.anak import satu_anak
from mcp_asrama.server.features.common import (
    CREATES,
    NO_ACCESS,
    READ_ONLY,
    HasilAnak,
    Result,
    add_tools,
    not_future,
    publish,
    row_of,
    student_resource,
)
from mcp_asrama.server.features.record_write import RencanaCatatan, hasil_catat, writable_student
from mcp_asrama.server.features.records import RECORD_PAGE, Page, records, summary_rows
from mcp_asrama.server.features.write import Ditulis, Penulisan, Pertanyaan, Tulis, tanya
from mcp_asrama.server.guard import audit
from mcp_asrama.server.guard.scoped import ScopedReader, scoped_reader

RINGKASAN = "hafalan Al-Qur'an (hafalan_anak, progres_hafalan)"
RINGKASAN_TULIS = "setoran hafalan (catat_setoran_hafalan)"

LATEST = 10
# The students `progres_hafalan` asks the service for (its most): more than one result can show, since a row takes
# at least ~75 bytes of RESULT_BUDGET's 20,000; the count and averages are always those of all.
PROGRES_ROWS = 500
UNSUPPORTED = "Layanan data asrama ini tidak menyediakan data hafalan (butuh layanan mcp-asrama)."


class DataSetoran(BaseModel):
    """One deposit."""

    id_setoran: str
    tanggal: date
    jenis: str = Field(description="ziyadah (baru) atau murajaah (mengulang)")
    surah: int
    nama_surah: str | None = None
    ayat_mulai: int
    ayat_selesai: int
    juz: list[int] = Field(default_factory=list)
    nilai: int | None = None


class HasilHafalanAnak(HasilAnak):
    """One student's memorisation: progress first, then the latest deposits."""

    ayat: int = Field(description="Ayat berbeda yang sudah disetor sebagai ziyadah")
    juz: float = Field(description="Setara juz yang sudah dihafal (2 desimal)")
    ayat_per_pekan: float = Field(description="Ayat ziyadah per pekan, rata-rata 28 hari terakhir")
    setoran_terakhir: date | None = None
    jumlah_setoran: int
    setoran: list[DataSetoran] = Field(description="Maksimal 10 setoran terbaru")


class HasilProgresHafalan(Result):
    """Progress of every visible student of the filters: averages first, then each student, most ayat first."""

    jumlah_anak: int
    rata_rata: RataRata
    data: list[ProgresAnak]
    catatan: str | None = None


def _row(s: Setoran) -> DataSetoran:
    return row_of(DataSetoran, s, "id_setoran")


async def _progres(reader: ScopedReader, *, kelas: str | None, kamar: str | None, limit: int) -> ProgresHafalan:
    """Memorisation progress of the visible students of the filters, most ayat first: the count and averages of all,
    the rows of (at least) the first `limit`. When the service's one answer covers the scope, it sends only those
    rows; otherwise every unit's students are merged."""

    def fetch(top: int | None) -> Callable[[Values, Values], Awaitable[ProgresHafalan]]:
        return lambda k, m: reader.client.progres_hafalan(kelas=k, kamar=m, limit=top)

    whole, merged = await summary_rows(reader, kelas, kamar, fetch, lambda r: r.data, top=limit)
    if whole is not None:
        return whole
    rows = sorted(merged, key=lambda r: (-r.ayat, r.id_anak))
    n = len(rows)
    rata = RataRata(
        ayat=round(sum(r.ayat for r in rows) / n, 1) if n else 0,
        juz=round(sum(r.juz for r in rows) / n, 2) if n else 0,
    )
    return ProgresHafalan(jumlah_anak=n, rata_rata=rata, data=rows)


async def ringkas_hafalan(reader: ScopedReader, id_anak: str) -> HasilHafalanAnak:
    """One visible student's progress and latest deposits."""
    anak = await satu_anak(reader, id_anak)

    def fetch(k: Values, m: Values, offset: int) -> Awaitable[Page]:
        return reader.client.daftar_hafalan(id_anak=anak.id, limit=RECORD_PAGE, offset=offset)

    try:
        progres = await reader.client.progres_hafalan(id_anak=anak.id)
        deposits, _ = await records(reader, fetch, None, None, one_student=True)
    except NotFound:
        raise ToolError(UNSUPPORTED) from None
    mine = next((p for p in progres.data if p.id_anak == anak.id), ProgresAnak(id_anak=anak.id))
    rows = [s for s in deposits if s.id_anak == anak.id]
    progress = mine.model_dump(include={"ayat", "juz", "ayat_per_pekan", "setoran_terakhir"})
    latest = [_row(s) for s in rows[:LATEST]]
    return HasilHafalanAnak.tentang(anak, **progress, jumlah_setoran=len(rows), setoran=latest)


async def hafalan_anak(ctx: Context, id_anak: IdAnak) -> Annotated[CallToolResult, HasilHafalanAnak]:
    """Hafalan Al-Qur'an satu anak: ayat dan juz yang sudah dihafal (ziyadah), laju ayat per pekan (28 hari
    terakhir), setoran terakhir, lalu 10 setoran terbaru (surah, ayat, juz, nilai). Belum tahu id-nya? Cari dulu
    dengan cari_anak."""
    return tool_result(await ringkas_hafalan(scoped_reader(ctx), id_anak))


async def progres_hafalan(
    ctx: Context, kelas: Kelas = None, kamar: Kamar = None
) -> Annotated[CallToolResult, HasilProgresHafalan]:
    """Progres hafalan Al-Qur'an per kelas atau kamar: jumlah anak dan rata-rata ayat/juz, lalu setiap anak (ayat,
    juz, ayat per pekan, setoran terakhir), yang hafalannya terbanyak dulu; anak tanpa setoran ikut (ayat 0).
    Filter opsional: kelas (mis. '7A'), kamar."""
    reader = scoped_reader(ctx)
    try:
        progres = await _progres(reader, kelas=kelas, kamar=kamar, limit=PROGRES_ROWS)
    except NotFound:
        raise ToolError(UNSUPPORTED) from None
    rows = sorted(progres.data, key=lambda r: -r.ayat)
    audit.disclose_aggregate(progres.jumlah_anak, (r.id_anak for r in rows))
    shown = fitting_count(rows, RESULT_BUDGET)
    notes = [NO_ACCESS] if reader.akses.kosong else []
    if shown < progres.jumlah_anak:
        notes.append(f"Daftar dipotong: {shown} dari {progres.jumlah_anak} anak; persempit dengan kelas atau kamar.")
    return tool_result(
        HasilProgresHafalan(
            jumlah_anak=progres.jumlah_anak,
            rata_rata=progres.rata_rata,
            data=rows[:shown],
            catatan=" ".join(notes) or None,
        )
    )


@dataclass(frozen=True)
class RencanaSetoran(RencanaCatatan):
    """A deposit as it will be recorded."""

    jenis: str
    surah: quran.Surah
    ayat_mulai: int
    ayat_selesai: int
    nilai: int | None
    penguji: str | None

    @property
    def juz(self) -> list[int]:
        return quran.juz_span(self.surah.nomor, self.ayat_mulai, self.ayat_selesai)


Penguji = Annotated[Nama200, Field(description="Nama penguji (opsional; disimpan, tidak ditampilkan lagi)")]


async def rencana_setoran(
    reader: ScopedReader,
    id_anak: IdAnak,
    tanggal: Tanggal,
    jenis: JenisSetoran,
    surah: SurahArg,
    ayat_mulai: Ayat,
    ayat_selesai: Ayat,
    nilai: Nilai = None,
    penguji: Penguji = None,
) -> RencanaSetoran:
    """The deposit, checked against the surah's real length and the student (visible to the caller)."""
    not_future(tanggal)
    found = quran.find_surah(str(surah))
    if found is None:
        raise ToolError("Surah tidak dikenal: tulis nomornya (1–114) atau namanya, mis. 'Al-Baqarah' atau 'Yasin'.")
    try:
        quran.validate_range(found.nomor, ayat_mulai, ayat_selesai)
    except ValueError as exc:
        raise ToolError(f"Argumen tidak valid: {exc}.") from None
    anak = await writable_student(reader, id_anak)
    return RencanaSetoran(anak, tanggal, jenis, found, ayat_mulai, ayat_selesai, nilai, penguji)


def pertanyaan_setoran(plan: RencanaSetoran) -> Pertanyaan:
    """The question: who, when, which ayat."""
    juz = ", ".join(str(j) for j in plan.juz)
    nilai = f", nilai {plan.nilai}" if plan.nilai is not None else ""
    what = (
        f"Catat setoran {plan.jenis} {plan.anak.nama} ({plan.anak.id}) pada {plan.tanggal.isoformat()}: "
        f"{plan.surah.nama} ({plan.surah.nomor}) ayat {plan.ayat_mulai}–{plan.ayat_selesai} "
        f"({plan.ayat_selesai - plan.ayat_mulai + 1} ayat, juz {juz}){nilai}."
    )
    return tanya([what], plan.anak.id, Penguji=plan.penguji)


HasilCatatSetoran = hasil_catat("HasilCatatSetoran", "a deposit", "setoran", DataSetoran)


async def tulis_setoran(tulis: Tulis, plan: RencanaSetoran) -> Ditulis:
    """Record the deposit once."""
    body = plan.badan(HafalanIn, "jenis", "ayat_mulai", "ayat_selesai", "nilai", "penguji", surah=plan.surah.nomor)
    made = await tulis.reader.client.catat_setoran(body, actor=tulis.actor, key=tulis.key)
    pesan = f"Setoran tercatat: {made.nama_surah or plan.surah.nama} ayat {made.ayat_mulai}–{made.ayat_selesai}."
    return HasilCatatSetoran.ditulis(made, pesan, {"new": f"setoran:{made.jenis}"}, setoran=_row(made))


CATAT = Penulisan(
    "catat_setoran_hafalan",
    rencana_setoran,
    pertanyaan_setoran,
    tulis_setoran,
    HasilCatatSetoran,
    not_found=UNSUPPORTED,
)
PENULISAN = (CATAT,)
catat_setoran_hafalan = CATAT.as_tool(
    """Catat satu setoran hafalan anak pada tanggal (YYYY-MM-DD, paling lambat hari ini): jenis ziyadah (hafalan
    baru) atau murajaah (mengulang), surah (nomor 1–114 atau nama, mis. 'Al-Mulk'), ayat_mulai sampai
    ayat_selesai (dicek terhadap jumlah ayat surah itu), nilai 0–100 dan penguji opsional. Sebelum menulis,
    pengguna diminta menyetujui; bila menolak, jangan ulangi tanpa diminta."""
)


hafalan_resource = student_resource(
    "hafalan",
    ringkas_hafalan,
    """Hafalan satu anak (ayat, juz, laju per pekan, setoran terbaru), mis. asrama://anak/A001/hafalan.""",
)


def register(server: AsramaServer) -> None:
    """Add the hafalan tools (reads, then the write) and one student's hafalan as a resource."""
    add_tools(server, {hafalan_anak: "Hafalan anak"}, READ_ONLY)
    add_tools(server, {progres_hafalan: "Progres hafalan"}, READ_ONLY, views.link(views.PROGRES_HAFALAN))
    add_tools(server, {catat_setoran_hafalan: "Catat setoran hafalan"}, CREATES, views.link(views.KONFIRMASI))
    publish(server, "hafalan", "Hafalan anak", hafalan_resource)
