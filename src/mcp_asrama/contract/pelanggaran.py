"""`/pelanggaran`: a kind of violation (`JenisPelanggaranIn`, `JenisPelanggaran`), a violation as recorded
(`PelanggaranIn`) and as a client keeps it (`Pelanggaran`: without its note, which may be personal, and without
who recorded it), and the summary (`RekapPelanggaran`)."""

from datetime import date
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from mcp_asrama.contract.types import AnakId, Catatan, Rekaman, Shape, Strict, Tanggal, Teks

KategoriPelanggaran = Literal["ringan", "sedang", "berat"]
KATEGORI_PELANGGARAN: tuple[KategoriPelanggaran, ...] = ("ringan", "sedang", "berat")
KODE_PATTERN = r"^[a-z0-9_-]{1,40}$"
KodeJenis = Annotated[str, StringConstraints(pattern=KODE_PATTERN)]
Poin = Annotated[int, Field(ge=0, le=1000)]


class JenisPelanggaranIn(Strict):
    """A kind of violation as imported (`mcp-asrama import jenis_pelanggaran`)."""

    kode: KodeJenis
    nama: Teks
    kategori: KategoriPelanggaran
    poin: Poin


class PelanggaranIn(Strict):
    """`POST /pelanggaran` body: `poin` and `kategori` default to those of the kind."""

    id_anak: AnakId
    tanggal: Tanggal
    jenis: KodeJenis
    poin: Poin | None = None
    kategori: KategoriPelanggaran | None = None
    keterangan: Catatan | None = None


class JenisPelanggaran(Shape):
    """One kind of violation the school lists, with its default points."""

    kode: str
    nama: str
    kategori: str
    poin: int


class DaftarJenisPelanggaran(Shape):
    """`GET /pelanggaran/jenis`."""

    data: list[JenisPelanggaran]


class Pelanggaran(Rekaman):
    """One recorded violation. Its `keterangan` (a note that may be personal) and who recorded it are not kept."""

    tanggal: date
    kategori: str
    jenis: str
    nama_jenis: str | None = None
    poin: int


class DaftarPelanggaran(Shape):
    """`GET /pelanggaran`."""

    total: int
    data: list[Pelanggaran]


class JumlahKategori(Shape):
    """Violations per category, their number and points."""

    ringan: int = 0
    sedang: int = 0
    berat: int = 0
    jumlah: int = 0
    poin: int = 0


class RekapPelanggaranAnak(JumlahKategori):
    """One student's violations over a range."""

    id_anak: str
    nama: str | None = None
    kelas: str | None = None
    kamar: str | None = None


class RekapPelanggaran(Shape):
    """`GET /pelanggaran/rekap`."""

    dari: date
    sampai: date
    jumlah_anak: int
    total: JumlahKategori
    per_anak: list[RekapPelanggaranAnak]
