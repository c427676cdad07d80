"""`/kesehatan` wire shapes: a clinic visit as recorded (`KunjunganIn`) and as returned (`KunjunganPublic`), and
the counts (`RekapKesehatan`, no student in it).

Health data is specific personal data (UU PDP): the service returns it to its token holder only; the MCP server
shows `keluhan`, `tindakan`, `obat` and `rujukan` to clinic staff only. Never logged.
"""

from datetime import date
from typing import Annotated, Literal

from pydantic import BaseModel, StringConstraints, field_validator

from mcp_asrama.service.schemas.common import AnakId, Strict, Tanggal, TanpaNul

KategoriKesehatan = Literal["demam", "batuk-pilek", "pencernaan", "cedera", "kulit", "lainnya"]
KATEGORI_KESEHATAN: tuple[KategoriKesehatan, ...] = (
    "demam",
    "batuk-pilek",
    "pencernaan",
    "cedera",
    "kulit",
    "lainnya",
)
Catatan = Annotated[str, StringConstraints(strip_whitespace=True, max_length=500), TanpaNul]


class KunjunganIn(Strict):
    """`POST /kesehatan` body."""

    id_anak: AnakId
    tanggal: Tanggal
    keluhan: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500), TanpaNul]
    kategori: KategoriKesehatan
    tindakan: Catatan | None = None
    obat: Catatan | None = None
    rujukan: Catatan | None = None
    petugas: Annotated[str, StringConstraints(strip_whitespace=True, max_length=200), TanpaNul] | None = None

    @field_validator("tindakan", "obat", "rujukan", "petugas")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        return value or None


class KunjunganPublic(BaseModel):
    """One visit with the student's name, class and room."""

    id: str
    id_anak: str
    nama: str
    kelas: str
    kamar: str | None = None
    tanggal: date
    kategori: str
    keluhan: str
    tindakan: str | None = None
    obat: str | None = None
    rujukan: str | None = None
    petugas: str | None = None


class DaftarKunjungan(BaseModel):
    """`GET /kesehatan`: how many match, and one page of them (latest first)."""

    total: int
    data: list[KunjunganPublic]


class RekapKategoriKesehatan(BaseModel):
    kategori: str
    kunjungan: int
    anak: int


class RekapKesehatan(BaseModel):
    """`GET /kesehatan/rekap`: visits and distinct students over [dari, sampai], per category (all of them, in
    order, zeros included). Counts only."""

    dari: date
    sampai: date
    kunjungan: int
    anak: int
    per_kategori: list[RekapKategoriKesehatan]
