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

from collections import Counter
from dataclasses import dataclass
from datetime import date
from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from mcp_asrama.client import NotFound
from mcp_asrama.client.models import KunjunganKlinik
from mcp_asrama.contract.kesehatan import KunjunganIn
from mcp_asrama.server.arguments import IdAnak, KategoriKesehatan, Nama200, Tanggal, Teks, TeksKlinik
from mcp_asrama.server.asrama_server import AsramaServer, tool_result
from mcp_asrama.server.features.anak import satu_anak
from mcp_asrama.server.features.common import (
    CREATES,
    READ_ONLY,
    HasilAnak,
    add_tools,
    check_range,
    latest,
    not_future,
    row_of,
)
from mcp_asrama.server.features.kesehatan_rekap import UNSUPPORTED, kunjungan, rekap_kesehatan
from mcp_asrama.server.features.record_write import RencanaCatatan, hasil_catat
from mcp_asrama.server.features.write import Ditulis, Penulisan, Pertanyaan, Tulis, tanya
from mcp_asrama.server.guard import audit
from mcp_asrama.server.guard.scoped import ScopedReader, scoped_reader
from mcp_asrama.server.views import KONFIRMASI, link

RINGKASAN = "kesehatan (rekap_kesehatan: hanya jumlah; kesehatan_anak: rincian hanya untuk petugas klinik)"
# An aside opening with a comma: "… dan, bagi petugas klinik, kunjungan klinik (…)".
RINGKASAN_TULIS = ", bagi petugas klinik, kunjungan klinik (catat_kunjungan_klinik)"


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


class HasilKesehatanAnak(HasilAnak):
    """One student's clinic visits: counts per category first, then each visit, latest first."""

    dari: date | None = None
    sampai: date | None = None
    jumlah_kunjungan: int
    per_kategori: dict[str, int] = Field(description="Kunjungan per kategori")
    kunjungan: list[DataKunjungan]
    catatan: str | None = None


def _row(v: KunjunganKlinik) -> DataKunjungan:
    return row_of(DataKunjungan, v, "id_kunjungan")


async def kesehatan_anak(
    ctx: Context, id_anak: IdAnak, dari: Tanggal | None = None, sampai: Tanggal | None = None
) -> Annotated[CallToolResult, HasilKesehatanAnak]:
    """Riwayat kunjungan klinik satu anak (KHUSUS petugas klinik, wewenang peran:kesehatan): jumlah per kategori,
    lalu setiap kunjungan terbaru dulu dengan keluhan, tindakan, obat, rujukan dan petugas. Rentang opsional
    dari/sampai (YYYY-MM-DD). Selain petugas klinik: gunakan rekap_kesehatan (hanya jumlah)."""
    reader = scoped_reader(ctx)
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
    per = dict(Counter(v.kategori for v in visits))
    shown, catatan = latest(visits, complete, "kunjungan klinik", "kunjungan")
    found_visits = {"jumlah_kunjungan": len(visits), "per_kategori": per, "kunjungan": shown}
    return tool_result(HasilKesehatanAnak.tentang(anak, dari=dari, sampai=sampai, **found_visits, catatan=catatan))


@dataclass(frozen=True)
class RencanaKunjungan(RencanaCatatan):
    """A clinic visit as it will be recorded."""

    kategori: str
    keluhan: str
    tindakan: str | None
    obat: str | None
    rujukan: str | None
    petugas: str | None


async def rencana_kunjungan(
    reader: ScopedReader,
    id_anak: IdAnak,
    tanggal: Tanggal,
    keluhan: Annotated[Teks, Field(min_length=1, description="Keluhan anak, mis. 'demam sejak semalam'")],
    kategori: KategoriKesehatan,
    tindakan: Annotated[TeksKlinik, Field(description="Tindakan yang diberikan (opsional)")] = None,
    obat: Annotated[TeksKlinik, Field(description="Obat yang diberikan (opsional)")] = None,
    rujukan: Annotated[TeksKlinik, Field(description="Rujukan, mis. ke puskesmas (opsional)")] = None,
    petugas: Annotated[Nama200, Field(description="Petugas klinik (opsional)")] = None,
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
    details = {"Tindakan": plan.tindakan, "Obat": plan.obat, "Rujukan": plan.rujukan, "Petugas": plan.petugas}
    return tanya(lines, plan.anak.id, kesehatan=True, **details)


HasilCatatKunjungan = hasil_catat("HasilCatatKunjungan", "a clinic visit", "kunjungan", DataKunjungan)


async def tulis_kunjungan(tulis: Tulis, plan: RencanaKunjungan) -> Ditulis:
    """Record the visit once."""
    body = plan.badan(KunjunganIn, "keluhan", "kategori", "tindakan", "obat", "rujukan", "petugas")
    made = await tulis.reader.client.catat_kunjungan(body, actor=tulis.actor, key=tulis.key)
    audit.disclose_health([made.id_anak])
    pesan, change = "Kunjungan klinik tercatat.", {"new": "kunjungan_klinik"}
    return HasilCatatKunjungan.ditulis(made, pesan, change, kunjungan=_row(made))


CATAT = Penulisan(
    "catat_kunjungan_klinik",
    rencana_kunjungan,
    pertanyaan_kunjungan,
    tulis_kunjungan,
    HasilCatatKunjungan,
    not_found=UNSUPPORTED,
)
PENULISAN = (CATAT,)
catat_kunjungan_klinik = CATAT.as_tool(
    """Catat satu kunjungan klinik (KHUSUS petugas klinik): anak, tanggal (YYYY-MM-DD, paling lambat hari ini),
    keluhan, kategori (demam, batuk-pilek, pencernaan, cedera, kulit, lainnya), dan opsional tindakan, obat,
    rujukan, petugas. Sebelum menulis, pengguna diminta menyetujui; bila menolak, jangan ulangi tanpa diminta."""
)


def register(server: AsramaServer) -> None:
    """Add the health tools: the summary (anyone), the clinic's read, then the clinic's write."""
    add_tools(server, {kesehatan_anak: "Kesehatan anak", rekap_kesehatan: "Rekap kesehatan"}, READ_ONLY)
    add_tools(server, {catat_kunjungan_klinik: "Catat kunjungan klinik"}, CREATES, link(KONFIRMASI), needs="clinic")
