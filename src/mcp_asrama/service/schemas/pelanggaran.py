"""`/pelanggaran` wire shapes: a kind of violation (`JenisPelanggaranIn`/`...Public`), a violation as recorded
(`PelanggaranIn`) and as returned (`PelanggaranPublic`), and the summary (`RekapPelanggaran`).

`keterangan` may be personal: the service returns it to its token holder, an MCP tool shows it only if its output
model declares it.
"""

from datetime import date
from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints, field_validator

from mcp_asrama.service.schemas.common import AnakId, Strict, Tanggal, TanpaNul, Teks

KategoriPelanggaran = Literal["ringan", "sedang", "berat"]
KATEGORI_PELANGGARAN: tuple[KategoriPelanggaran, ...] = ("ringan", "sedang", "berat")
KODE_PATTERN = r"^[a-z0-9_-]{1,40}$"
KodeJenis = Annotated[str, StringConstraints(pattern=KODE_PATTERN)]
Poin = Annotated[int, Field(ge=0, le=1000)]
Keterangan = Annotated[str, StringConstraints(strip_whitespace=True, max_length=500), TanpaNul]


class JenisPelanggaranIn(Strict):
    """A kind of violation as imported (`mcp-asrama import jenis_pelanggaran`)."""

    kode: KodeJenis
    nama: Teks
    kategori: KategoriPelanggaran
    poin: Poin


class JenisPelanggaranPublic(BaseModel):
    kode: str
    nama: str
    kategori: str
    poin: int


class DaftarJenisPelanggaran(BaseModel):
    """`GET /pelanggaran/jenis`: every kind, by kategori (ringan, sedang, berat) then nama."""

    data: list[JenisPelanggaranPublic]


class PelanggaranIn(Strict):
    """`POST /pelanggaran` body: `poin` and `kategori` default to those of the kind."""

    id_anak: AnakId
    tanggal: Tanggal
    jenis: KodeJenis
    poin: Poin | None = None
    kategori: KategoriPelanggaran | None = None
    keterangan: Keterangan | None = None

    @field_validator("keterangan")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        return value or None


class PelanggaranPublic(BaseModel):
    """One violation with the student's name, class and room (never their personal data)."""

    id: str
    id_anak: str
    nama: str
    kelas: str
    kamar: str | None = None
    tanggal: date
    kategori: str
    jenis: str
    nama_jenis: str
    poin: int
    keterangan: str | None = None
    dicatat_oleh: str | None = None


class DaftarPelanggaran(BaseModel):
    """`GET /pelanggaran`: how many match, and one page of them (latest first)."""

    total: int
    data: list[PelanggaranPublic]


class JumlahPelanggaran(BaseModel):
    """Counts per category, all violations, and their points."""

    ringan: int = 0
    sedang: int = 0
    berat: int = 0
    jumlah: int = 0
    poin: int = 0


class RekapAnakPelanggaran(JumlahPelanggaran):
    id_anak: str
    nama: str
    kelas: str
    kamar: str | None = None


class RekapPelanggaran(BaseModel):
    """`GET /pelanggaran/rekap`: over [dari, sampai], students with at least one violation, most points first."""

    dari: date
    sampai: date
    jumlah_anak: int
    total: JumlahPelanggaran
    per_anak: list[RekapAnakPelanggaran]
