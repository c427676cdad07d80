"""`/hafalan` wire shapes: a deposit (*setoran*) as recorded (`HafalanIn`) and as returned (`HafalanPublic`), and
memorisation progress (`ProgresHafalan`)."""

from datetime import date
from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints, field_validator

from mcp_asrama.service.schemas.common import AnakId, Strict, Tanggal, TanpaNul

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
    penguji: Annotated[str, StringConstraints(strip_whitespace=True, max_length=200), TanpaNul] | None = None

    @field_validator("penguji")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        return value or None


class HafalanPublic(BaseModel):
    """One deposit with the student's name, class and room, the surah's name and the juz it touches."""

    id: str
    id_anak: str
    nama: str
    kelas: str
    kamar: str | None = None
    tanggal: date
    jenis: str
    surah: int
    nama_surah: str
    ayat_mulai: int
    ayat_selesai: int
    juz: list[int]
    nilai: int | None = None
    penguji: str | None = None


class DaftarHafalan(BaseModel):
    """`GET /hafalan`: how many match, and one page of them (latest first)."""

    total: int
    data: list[HafalanPublic]


class ProgresAnak(BaseModel):
    """One student's memorisation: distinct ayat deposited as ziyadah (ever), juz memorised, the last deposit of
    any kind, and the ziyadah ayat per week over the last 28 days."""

    id_anak: str
    nama: str
    kelas: str
    kamar: str | None = None
    ayat: int
    juz: float
    setoran_terakhir: date | None = None
    ayat_per_pekan: float


class RataRataHafalan(BaseModel):
    ayat: float
    juz: float


class ProgresHafalan(BaseModel):
    """`GET /hafalan/progres`: every student of the filter (also those without a deposit), most ayat first."""

    jumlah_anak: int
    rata_rata: RataRataHafalan
    data: list[ProgresAnak]
