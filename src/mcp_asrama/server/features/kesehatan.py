"""Health (kesehatan): clinic visits — specific personal data (UU PDP No. 27/2022) that stays with the clinic.

- `kesehatan_anak` (one student's visits with complaint, treatment, medicine, referral) and
  `catat_kunjungan_klinik` exist only for clinic staff (`peran:kesehatan`); anyone else asking for a student's
  visits gets a tool error saying who can see them, before the service is even asked. Their audit lines carry
  `"kesehatan": true`.
- `rekap_kesehatan` (`kesehatan_rekap`) gives anyone else counts per category only where they cannot single a
  child out.
The health details are parsed from the service only for a clinic principal (`KunjunganKlinik`); for anyone else
the models hold none of them.
"""

from dataclasses import dataclass
from datetime import date
from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from mcp_asrama.client import NotFound
from mcp_asrama.client.models import Anak, KunjunganKlinik
from mcp_asrama.privacy import RESULT_BUDGET, fitting_count
from mcp_asrama.server.arguments import IdAnak, KategoriKesehatan, Nama200, Tanggal, Teks, TeksKlinik
from mcp_asrama.server.core import AsramaServer, tool_result
from mcp_asrama.server.features.anak import satu_anak
from mcp_asrama.server.features.common import CREATES, READ_ONLY, Result, add_tools, check_range, not_future
from mcp_asrama.server.features.kesehatan_rekap import UNSUPPORTED, kunjungan, rekap_kesehatan
from mcp_asrama.server.features.write import Direncanakan, Ditulis, HasilTulis, Keputusan, Penulisan, Pertanyaan, Tulis
from mcp_asrama.server.guard import audit
from mcp_asrama.server.guard.scoped import CLINIC_ONLY, Terbatas, terbatas
from mcp_asrama.server.views import KONFIRMASI, link

RINGKASAN = "kesehatan (rekap_kesehatan: hanya jumlah; kesehatan_anak: rincian hanya untuk petugas klinik)"
# An aside opening with a comma: "… dan, bagi petugas klinik, kunjungan klinik (…)".
RINGKASAN_TULIS = ", bagi petugas klinik, kunjungan klinik (catat_kunjungan_klinik)"

__all__ = ["CLINIC_ONLY"]  # the guard's refusal, named here as before


class DataKunjungan(BaseModel):
    """One clinic visit with its health details (clinic staff only)."""

    id_kunjungan: str
    tanggal: date
    kategori: str
    keluhan: str | None = None
    tindakan: str | None = None
    obat: str | None = None
    rujukan: str | None = None
    petugas: str | None = None


class HasilKesehatanAnak(Result):
    """One student's clinic visits: counts per category first, then each visit, latest first."""

    id_anak: str
    nama: str
    kelas: str | None = None
    kamar: str | None = None
    dari: date | None = None
    sampai: date | None = None
    jumlah_kunjungan: int
    per_kategori: dict[str, int] = Field(description="Kunjungan per kategori")
    kunjungan: list[DataKunjungan]
    catatan: str | None = None


def _row(v: KunjunganKlinik) -> DataKunjungan:
    return DataKunjungan(
        id_kunjungan=v.id,
        tanggal=v.tanggal,
        kategori=v.kategori,
        keluhan=v.keluhan,
        tindakan=v.tindakan,
        obat=v.obat,
        rujukan=v.rujukan,
        petugas=v.petugas,
    )


async def kesehatan_anak(
    ctx: Context, id_anak: IdAnak, dari: Tanggal | None = None, sampai: Tanggal | None = None
) -> Annotated[CallToolResult, HasilKesehatanAnak]:
    """Riwayat kunjungan klinik satu anak (KHUSUS petugas klinik, wewenang peran:kesehatan): jumlah per kategori,
    lalu setiap kunjungan terbaru dulu dengan keluhan, tindakan, obat, rujukan dan petugas. Rentang opsional
    dari/sampai (YYYY-MM-DD). Selain petugas klinik: gunakan rekap_kesehatan (hanya jumlah)."""
    reader = terbatas(ctx)
    reader.clinic_only()  # listed to everyone (its description names who may use it), answered to the clinic
    check_range(dari, sampai)
    anak = await satu_anak(reader, id_anak)
    try:
        found, complete = await kunjungan(
            reader, klinik=True, id_anak=anak.id, kelas=None, kamar=None, dari=dari, sampai=sampai
        )
    except NotFound:
        raise ToolError(UNSUPPORTED) from None
    visits = [_row(v) for v in found if v.id_anak == anak.id and isinstance(v, KunjunganKlinik)]
    audit.disclose_health([anak.id])
    per: dict[str, int] = {}
    for v in visits:
        per[v.kategori] = per.get(v.kategori, 0) + 1
    shown = fitting_count(visits, RESULT_BUDGET)
    notes = [] if visits else ["Tidak ada kunjungan klinik tercatat untuk anak ini dalam rentang itu."]
    if shown < len(visits) or not complete:
        notes.append(f"Daftar dipotong: {shown} dari {len(visits)} kunjungan terbaru; persempit dengan dari/sampai.")
    return tool_result(
        HasilKesehatanAnak(
            id_anak=anak.id,
            nama=anak.nama,
            kelas=anak.kelas,
            kamar=anak.kamar,
            dari=dari,
            sampai=sampai,
            jumlah_kunjungan=len(visits),
            per_kategori=per,
            kunjungan=visits[:shown],
            catatan=" ".join(notes) or None,
        )
    )


@dataclass(frozen=True)
class RencanaKunjungan:
    """A clinic visit as it will be recorded."""

    anak: Anak
    tanggal: date
    kategori: str
    keluhan: str
    tindakan: str | None
    obat: str | None
    rujukan: str | None
    petugas: str | None


async def rencana_kunjungan(
    reader: Terbatas,
    id_anak: str,
    tanggal: date,
    keluhan: str,
    kategori: str,
    tindakan: str | None = None,
    obat: str | None = None,
    rujukan: str | None = None,
    petugas: str | None = None,
) -> RencanaKunjungan:
    """The visit, by clinic staff only (listed only to them; asked again for an usulan decided later), of a student
    visible to them."""
    reader.clinic_only()
    not_future(tanggal)
    anak = await satu_anak(reader, id_anak)
    return RencanaKunjungan(anak, tanggal, kategori, keluhan, tindakan, obat, rujukan, petugas)


def pertanyaan_kunjungan(plan: RencanaKunjungan) -> Pertanyaan:
    """The question: who, when, and each detail as it will be stored (health details: audited as a health
    disclosure)."""
    lines = [
        f"Catat kunjungan klinik {plan.anak.nama} ({plan.anak.id}) pada {plan.tanggal.isoformat()}, kategori "
        f"{plan.kategori}.",
        f"Keluhan: {plan.keluhan}",
    ]
    for label, value in (("Tindakan", plan.tindakan), ("Obat", plan.obat), ("Rujukan", plan.rujukan)):
        if value:
            lines.append(f"{label}: {value}")
    if plan.petugas:
        lines.append(f"Petugas: {plan.petugas}")
    lines.append("Setujui untuk mencatat?")
    return Pertanyaan("\n".join(lines), (plan.anak.id,), kesehatan=True)


class HasilCatatKunjungan(HasilTulis):
    """What happened to a clinic visit: written (with the record), declined, cancelled, or waiting (an usulan)."""

    id_anak: str | None = None
    kunjungan: DataKunjungan | None = None


async def tulis_kunjungan(tulis: Tulis, plan: RencanaKunjungan) -> Ditulis:
    """Record the visit once."""
    optional = {"tindakan": plan.tindakan, "obat": plan.obat, "rujukan": plan.rujukan, "petugas": plan.petugas}
    body: dict[str, object] = {
        "id_anak": plan.anak.id,
        "tanggal": plan.tanggal.isoformat(),
        "keluhan": plan.keluhan,
        "kategori": plan.kategori,
        **{k: v for k, v in optional.items() if v},
    }
    made = await tulis.reader.client.catat_kunjungan(body, actor=tulis.actor, key=tulis.key)
    audit.disclose_health([made.id_anak])
    written = HasilCatatKunjungan(
        hasil="ditulis", pesan="Kunjungan klinik tercatat.", id_anak=made.id_anak, kunjungan=_row(made)
    )
    return written, [{"id": made.id_anak, "old": None, "new": "kunjungan_klinik"}]


CATAT = Penulisan(
    "catat_kunjungan_klinik",
    rencana_kunjungan,
    pertanyaan_kunjungan,
    tulis_kunjungan,
    HasilCatatKunjungan,
    conflict="Konfirmasi ini sudah dipakai; panggil catat_kunjungan_klinik lagi.",
    not_found=UNSUPPORTED,
)
PENULISAN = (CATAT,)


async def catat_kunjungan_klinik(
    ctx: Context,
    id_anak: IdAnak,
    tanggal: Tanggal,
    keluhan: Annotated[Teks, Field(min_length=1, description="Keluhan anak, mis. 'demam sejak semalam'")],
    kategori: KategoriKesehatan,
    rencana: Annotated[Direncanakan[RencanaKunjungan], CATAT.rencana],
    keputusan: Annotated[Keputusan, CATAT.keputusan],
    tindakan: Annotated[TeksKlinik, Field(description="Tindakan yang diberikan (opsional)")] = None,
    obat: Annotated[TeksKlinik, Field(description="Obat yang diberikan (opsional)")] = None,
    rujukan: Annotated[TeksKlinik, Field(description="Rujukan, mis. ke puskesmas (opsional)")] = None,
    petugas: Annotated[Nama200, Field(description="Petugas klinik (opsional)")] = None,
) -> Annotated[CallToolResult, HasilCatatKunjungan]:
    """Catat satu kunjungan klinik (KHUSUS petugas klinik): anak, tanggal (YYYY-MM-DD, paling lambat hari ini),
    keluhan, kategori (demam, batuk-pilek, pencernaan, cedera, kulit, lainnya), dan opsional tindakan, obat,
    rujukan, petugas. Sebelum menulis, pengguna diminta menyetujui; bila menolak, jangan ulangi tanpa diminta."""
    return await CATAT.selesai(ctx, rencana, keputusan)


def register(server: AsramaServer) -> None:
    """Add the health tools: the summary (anyone), the clinic's read, then the clinic's write."""
    add_tools(server, {kesehatan_anak: "Kesehatan anak", rekap_kesehatan: "Rekap kesehatan"}, READ_ONLY)
    add_tools(server, {catat_kunjungan_klinik: "Catat kunjungan klinik"}, CREATES, link(KONFIRMASI), needs="clinic")
