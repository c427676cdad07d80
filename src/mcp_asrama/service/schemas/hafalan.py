"""`/hafalan` wire shapes: a deposit (*setoran*) as recorded (`HafalanIn`, the contract's) and as returned
(`HafalanPublic`: the contract's `Setoran` with its examiner), and memorisation progress (`ProgresHafalan`)."""

from mcp_asrama.contract import hafalan as wire
from mcp_asrama.contract.hafalan import Ayat, HafalanIn, JenisHafalan

__all__ = [
    "Ayat",
    "DaftarHafalan",
    "HafalanIn",
    "HafalanPublic",
    "JenisHafalan",
    "ProgresAnak",
    "ProgresHafalan",
    "RataRataHafalan",
]


class HafalanPublic(wire.Setoran):
    """One deposit with the student's name, class and room, the surah's name and the juz it touches."""

    nama: str
    kelas: str
    nama_surah: str
    juz: list[int]
    penguji: str | None = None


class DaftarHafalan(wire.DaftarSetoran):
    """`GET /hafalan`: how many match, and one page of them (latest first)."""

    data: list[HafalanPublic]  # type: ignore[assignment]


class ProgresAnak(wire.ProgresAnak):
    """One student's memorisation: distinct ayat deposited as ziyadah (ever), juz memorised, the last deposit of
    any kind, and the ziyadah ayat per week over the last 28 days."""

    nama: str
    kelas: str
    ayat: int
    juz: float
    ayat_per_pekan: float


class RataRataHafalan(wire.RataRata):
    ayat: float
    juz: float


class ProgresHafalan(wire.ProgresHafalan):
    """`GET /hafalan/progres`: every student of the filter (also those without a deposit), most ayat first."""

    rata_rata: RataRataHafalan
    data: list[ProgresAnak]  # type: ignore[assignment]
