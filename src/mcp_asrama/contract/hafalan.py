"""`/hafalan`: a deposit (*setoran*) as recorded (`HafalanIn`) and as a client keeps it (`Setoran`, without the
examiner's name), and memorisation progress (`ProgresHafalan`)."""

from datetime import date
from typing import Annotated, Literal

from pydantic import Field

from mcp_asrama.contract.types import AnakId, NamaOrang, Rekaman, Shape, Strict, Tanggal

JenisHafalan = Literal["ziyadah", "murajaah"]
Ayat = Annotated[int, Field(ge=1, le=1000)]  # against the surah's real length: the route


class HafalanIn(Strict):
    """`POST /hafalan` body; the ayat are checked against the surah's real length by the route."""

    id_anak: AnakId
    tanggal: Tanggal
    jenis: JenisHafalan
    surah: Annotated[int, Field(ge=1, le=114)]
    ayat_mulai: Ayat
    ayat_selesai: Ayat
    nilai: Annotated[int, Field(ge=0, le=100)] | None = None
    penguji: NamaOrang | None = None


class Setoran(Rekaman):
    """One deposit (setoran) of memorisation; the examiner's name is not kept."""

    tanggal: date
    jenis: str
    surah: int
    nama_surah: str | None = None
    ayat_mulai: int
    ayat_selesai: int
    juz: list[int] = Field(default=[])
    nilai: int | None = None


class DaftarSetoran(Shape):
    """`GET /hafalan`."""

    total: int
    data: list[Setoran]


class ProgresAnak(Shape):
    """One student's memorisation so far."""

    id_anak: str
    nama: str | None = None
    kelas: str | None = None
    kamar: str | None = None
    ayat: int = 0
    juz: float = 0
    setoran_terakhir: date | None = None
    ayat_per_pekan: float = 0


class RataRata(Shape):
    """Average ayat and juz memorised."""

    ayat: float = 0
    juz: float = 0


class ProgresHafalan(Shape):
    """`GET /hafalan/progres`."""

    jumlah_anak: int
    rata_rata: RataRata
    data: list[ProgresAnak]
