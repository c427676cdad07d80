"""`/kesehatan`: a clinic visit as recorded (`KunjunganIn`) and as a client keeps it: without health details
(`Kunjungan`) or, for clinic staff only, with them (`KunjunganKlinik`); the counts (`RekapKesehatan`, no student in
it).

Health data is specific personal data (UU PDP): the service returns it to its token holder only; the MCP server
shows `keluhan`, `tindakan`, `obat` and `rujukan` to clinic staff only. Never logged.
"""

from datetime import date
from typing import Annotated, Literal

from pydantic import StringConstraints

from mcp_asrama.contract.types import AnakId, Catatan, NamaOrang, Rekaman, Shape, Strict, Tanggal, TanpaNul

KategoriKunjungan = Literal["demam", "batuk-pilek", "pencernaan", "cedera", "kulit", "lainnya"]
KATEGORI_KESEHATAN: tuple[KategoriKunjungan, ...] = (
    "demam",
    "batuk-pilek",
    "pencernaan",
    "cedera",
    "kulit",
    "lainnya",
)


class KunjunganIn(Strict):
    """`POST /kesehatan` body."""

    id_anak: AnakId
    tanggal: Tanggal
    keluhan: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500), TanpaNul]
    kategori: KategoriKunjungan
    tindakan: Catatan | None = None
    obat: Catatan | None = None
    rujukan: Catatan | None = None
    petugas: NamaOrang | None = None


class Kunjungan(Rekaman):
    """One clinic visit without its health details: what anyone may learn of it is that it happened (and even
    this only reaches clinic staff)."""

    tanggal: date
    kategori: str


class KunjunganKlinik(Kunjungan):
    """One clinic visit with its health details: parsed only for a principal with `peran:kesehatan`."""

    keluhan: str | None = None
    tindakan: str | None = None
    obat: str | None = None
    rujukan: str | None = None
    petugas: str | None = None


class DaftarKunjungan(Shape):
    """`GET /kesehatan` without health details."""

    total: int
    data: list[Kunjungan]


class DaftarKunjunganKlinik(Shape):
    """`GET /kesehatan` with health details (clinic principals only)."""

    total: int
    data: list[KunjunganKlinik]


class KategoriKesehatan(Shape):
    """Visits and distinct students of one category."""

    kategori: str
    kunjungan: int
    anak: int


class RekapKesehatan(Shape):
    """`GET /kesehatan/rekap`: counts only."""

    dari: date
    sampai: date
    kunjungan: int
    anak: int
    per_kategori: list[KategoriKesehatan]
