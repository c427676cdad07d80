"""`/pelanggaran` wire shapes: a kind of violation (`JenisPelanggaranIn`/`...Public`), a violation as recorded
(`PelanggaranIn`, the contract's) and as returned (`PelanggaranPublic`: the contract's `Pelanggaran` with its
`keterangan` and who recorded it), and the summary (`RekapPelanggaran`).

`keterangan` may be personal: the service returns it to its token holder, an MCP tool shows it only if its output
model declares it.
"""

from mcp_asrama.contract import pelanggaran as wire
from mcp_asrama.contract.pelanggaran import (
    KATEGORI_PELANGGARAN,
    KODE_PATTERN,
    JenisPelanggaranIn,
    KategoriPelanggaran,
    KodeJenis,
    PelanggaranIn,
    Poin,
)

__all__ = [
    "KATEGORI_PELANGGARAN",
    "KODE_PATTERN",
    "DaftarJenisPelanggaran",
    "DaftarPelanggaran",
    "JenisPelanggaranIn",
    "JenisPelanggaranPublic",
    "JumlahPelanggaran",
    "KategoriPelanggaran",
    "KodeJenis",
    "PelanggaranIn",
    "PelanggaranPublic",
    "Poin",
    "RekapAnakPelanggaran",
    "RekapPelanggaran",
]


class JenisPelanggaranPublic(wire.JenisPelanggaran):
    pass


class DaftarJenisPelanggaran(wire.DaftarJenisPelanggaran):
    """`GET /pelanggaran/jenis`: every kind, by kategori (ringan, sedang, berat) then nama."""

    data: list[JenisPelanggaranPublic]  # type: ignore[assignment]


class PelanggaranPublic(wire.Pelanggaran):
    """One violation with the student's name, class and room (never their personal data)."""

    nama: str
    kelas: str
    nama_jenis: str
    keterangan: str | None = None
    dicatat_oleh: str | None = None


class DaftarPelanggaran(wire.DaftarPelanggaran):
    """`GET /pelanggaran`: how many match, and one page of them (latest first)."""

    data: list[PelanggaranPublic]  # type: ignore[assignment]


class JumlahPelanggaran(wire.JumlahKategori):
    """Counts per category, all violations, and their points."""


class RekapAnakPelanggaran(wire.RekapPelanggaranAnak):
    nama: str
    kelas: str


class RekapPelanggaran(wire.RekapPelanggaran):
    """`GET /pelanggaran/rekap`: over [dari, sampai], students with at least one violation, most points first."""

    total: JumlahPelanggaran
    per_anak: list[RekapAnakPelanggaran]  # type: ignore[assignment]
