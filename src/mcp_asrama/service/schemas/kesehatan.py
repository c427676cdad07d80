"""`/kesehatan` wire shapes: a clinic visit as recorded (`KunjunganIn`, the contract's) and as returned
(`KunjunganPublic`: the contract's `KunjunganKlinik`, its health details), and the counts (`RekapKesehatan`, no
student in it).

Health data is specific personal data (UU PDP): the service returns it to its token holder only; the MCP server
shows `keluhan`, `tindakan`, `obat` and `rujukan` to clinic staff only. Never logged.
"""

from mcp_asrama.contract import kesehatan as wire
from mcp_asrama.contract.kesehatan import KATEGORI_KESEHATAN, KunjunganIn
from mcp_asrama.contract.kesehatan import KategoriKunjungan as KategoriKesehatan
from mcp_asrama.contract.types import Catatan

__all__ = [
    "KATEGORI_KESEHATAN",
    "Catatan",
    "DaftarKunjungan",
    "KategoriKesehatan",
    "KunjunganIn",
    "KunjunganPublic",
    "RekapKategoriKesehatan",
    "RekapKesehatan",
]


class KunjunganPublic(wire.KunjunganKlinik):
    """One visit with the student's name, class and room."""

    nama: str
    kelas: str
    keluhan: str


class DaftarKunjungan(wire.DaftarKunjunganKlinik):
    """`GET /kesehatan`: how many match, and one page of them (latest first)."""

    data: list[KunjunganPublic]  # type: ignore[assignment]


class RekapKategoriKesehatan(wire.KategoriKesehatan):
    pass


class RekapKesehatan(wire.RekapKesehatan):
    """`GET /kesehatan/rekap`: visits and distinct students over [dari, sampai], per category (all of them, in
    order, zeros included). Counts only."""

    per_kategori: list[RekapKategoriKesehatan]  # type: ignore[assignment]
