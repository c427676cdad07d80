"""`/prestasi`: a student's achievement as recorded (`PrestasiIn`) and as a client keeps it (`Prestasi`), and the
summary over a period (`RekapPrestasi`: per level, per field, per student). Nothing here is personal beyond the
student's name: an achievement is meant to be told (to the parents, at the school's assembly)."""

from datetime import date
from typing import Annotated, Literal

from pydantic import Field

from mcp_asrama.contract.types import AnakId, Catatan, Rekaman, Shape, Strict, Tanggal

BidangPrestasi = Literal["tahfidz", "akademik", "olahraga", "seni", "lainnya"]
BIDANG_PRESTASI: tuple[BidangPrestasi, ...] = ("tahfidz", "akademik", "olahraga", "seni", "lainnya")
TingkatPrestasi = Literal["pesantren", "kabupaten", "provinsi", "nasional"]
TINGKAT_PRESTASI: tuple[TingkatPrestasi, ...] = ("pesantren", "kabupaten", "provinsi", "nasional")

CONTOH: tuple[dict[str, str], ...] = (
    {"bidang": "tahfidz", "tingkat": "pesantren", "keterangan": "Wisuda tahfidz 5 juz"},
    {"bidang": "tahfidz", "tingkat": "kabupaten", "keterangan": "Juara 2 MTQ cabang hifzil Qur'an"},
    {"bidang": "akademik", "tingkat": "kabupaten", "keterangan": "Juara 1 olimpiade matematika"},
    {"bidang": "akademik", "tingkat": "provinsi", "keterangan": "Finalis lomba debat bahasa Arab"},
    {"bidang": "olahraga", "tingkat": "pesantren", "keterangan": "Juara 1 lari 100 m porseni"},
    {"bidang": "olahraga", "tingkat": "provinsi", "keterangan": "Medali perunggu pencak silat"},
    {"bidang": "seni", "tingkat": "pesantren", "keterangan": "Juara 1 lomba kaligrafi"},
    {"bidang": "seni", "tingkat": "nasional", "keterangan": "Juara harapan festival nasyid"},
    {"bidang": "lainnya", "tingkat": "pesantren", "keterangan": "Santri teladan bulan ini"},
)
"""Examples of an achievement's own fields (the demo school's come from these)."""


class PrestasiIn(Strict):
    """`POST /prestasi` body, and a row of `mcp-asrama import prestasi`."""

    id_anak: Annotated[AnakId, Field(description="the student's id")]
    tanggal: Annotated[Tanggal, Field(description="the day of the achievement")]
    bidang: Annotated[BidangPrestasi, Field(description="the field")]
    tingkat: Annotated[TingkatPrestasi, Field(description="the level of the competition or award")]
    keterangan: Annotated[Catatan | None, Field(description="what it was, at most 500 characters")] = None


class Prestasi(Rekaman):
    """One achievement; its `keterangan` says what it was (e.g. "Juara 2 MTQ cabang hifzil Qur'an")."""

    tanggal: date
    bidang: str
    tingkat: str
    keterangan: str | None = None


class DaftarPrestasi(Shape):
    """`GET /prestasi`."""

    total: int
    data: list[Prestasi]


class JumlahTingkat(Shape):
    """Achievements per level, and in all."""

    pesantren: int = 0
    kabupaten: int = 0
    provinsi: int = 0
    nasional: int = 0
    jumlah: int = 0


class PrestasiBidang(JumlahTingkat):
    """One field's achievements."""

    bidang: str


class RekapPrestasiAnak(JumlahTingkat):
    """One student's achievements over a range."""

    id_anak: str
    nama: str | None = None
    kelas: str | None = None
    kamar: str | None = None


class RekapPrestasi(Shape):
    """`GET /prestasi/rekap`: over [dari, sampai], in all, per field (every field, in order, zeros included) and per
    student with at least one (the highest levels first)."""

    dari: date
    sampai: date
    jumlah_anak: int
    total: JumlahTingkat
    per_bidang: list[PrestasiBidang]
    per_anak: list[RekapPrestasiAnak]
