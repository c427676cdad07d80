"""Argument types of tools, resources and prompts: validated before any request is made."""

import re
from datetime import date
from typing import Annotated, Literal

from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints

ID_PATTERN = r"^[A-Za-z0-9_.\-]{1,64}$"
MAX_RANGE_DAYS = 366


def is_id(text: str) -> bool:
    """An id is 1–64 of letters, digits, `-`, `_`, `.`; `.` and `..` match that but are path segments, never ids."""
    return re.fullmatch(ID_PATTERN, text) is not None and set(text) != {"."}


def parse_tanggal(text: str) -> date | None:
    """A real date written `YYYY-MM-DD`, or None (no other format, no timestamps, no 2026-02-30)."""
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def _not_only_dots(value: str) -> str:
    if not is_id(value):
        raise ValueError("id tidak boleh hanya titik")
    return value


def _iso_date_text(value: object) -> object:
    """Only `YYYY-MM-DD` text is a date (pydantic would also take numbers as timestamps)."""
    if isinstance(value, date) or (isinstance(value, str) and parse_tanggal(value) is not None):
        return value
    raise ValueError("tanggal harus berformat YYYY-MM-DD")


IdAnak = Annotated[
    str,
    Field(pattern=ID_PATTERN, description="Id anak, mis. 'A001'. Belum tahu id-nya? Cari dulu dengan cari_anak."),
    AfterValidator(_not_only_dots),
]
Tanggal = Annotated[date, BeforeValidator(_iso_date_text), Field(description="Tanggal YYYY-MM-DD, mis. '2026-10-06'")]
Nama = Annotated[str | None, Field(max_length=100, description="Sebagian nama anak (tanpa beda huruf besar/kecil)")]
Kelas = Annotated[str | None, Field(max_length=20, description="Kelas persis, mis. '7A'")]
Kamar = Annotated[str | None, Field(max_length=100, description="Nama kamar persis, mis. 'Al-Fatih 1'")]
StatusAnak = Annotated[Literal["aktif", "izin", "sakit", "pulang"] | None, Field(description="Status anak di asrama")]
StatusAbsensi = Annotated[
    Literal["hadir", "izin", "sakit", "alpa", "belum_dicatat"] | None,
    Field(description="Hanya tampilkan anak dengan status absensi ini ('belum_dicatat': belum punya catatan hari itu)"),
]
Limit = Annotated[int, Field(ge=1, le=100, description="Jumlah anak per halaman (1–100)")]
Offset = Annotated[int, Field(ge=0, le=1_000_000, description="Lewati sejumlah anak (untuk halaman berikutnya)")]


def _printable(value: str) -> str:
    """Text a person wrote for the record: control characters (newlines, NUL) are refused, never stored."""
    if not value.isprintable():
        raise ValueError("tidak boleh berisi karakter kendali")
    return value


Teks = Annotated[str, StringConstraints(strip_whitespace=True, max_length=500), AfterValidator(_printable)]
Status = Literal["hadir", "izin", "sakit", "alpa"]
StatusCatat = Annotated[Status, Field(description="Status absensi: hadir, izin, sakit atau alpa")]
Keterangan = Annotated[
    Teks | None, AfterValidator(lambda v: v or None), Field(description="Catatan singkat, mis. 'Demam'")
]
IdIzin = Annotated[
    str, Field(pattern=r"^[A-Za-z0-9_\-]{1,64}$", description="Id izin dari ajukan_izin atau daftar_izin")
]
JenisIzin = Annotated[Literal["pulang", "sakit", "keperluan"], Field(description="Jenis izin")]
Alasan = Annotated[Teks, Field(min_length=1, description="Alasan izin (disimpan di layanan, tidak ditampilkan lagi)")]

# --- pelanggaran, hafalan, kesehatan (issue 10) ---
Bulan = Annotated[str, Field(description="Bulan YYYY-MM, mis. '2026-10'")]
KodeJenis = Annotated[
    str,
    Field(pattern=r"^[a-z0-9_\-]{1,40}$", description="Kode jenis pelanggaran, mis. 'terlambat_sholat', 'membawa_hp'"),
]
Poin = Annotated[int | None, Field(ge=0, le=1000, description="Poin; kosong: poin bawaan jenis itu")]
JenisSetoran = Annotated[
    Literal["ziyadah", "murajaah"], Field(description="ziyadah = hafalan baru, murajaah = mengulang")
]
SurahArg = Annotated[
    int | str,
    Field(description="Surah: nomor 1–114 atau nama (mis. 'Al-Baqarah', 'yasin'); ejaan dimaafkan"),
]
Ayat = Annotated[int, Field(ge=1, le=286, description="Nomor ayat (mulai 1)")]
Nilai = Annotated[int | None, Field(ge=0, le=100, description="Nilai setoran 0–100 (opsional)")]
Nama200 = Annotated[Teks | None, AfterValidator(lambda v: v or None), Field(max_length=200)]
KategoriKesehatan = Annotated[
    Literal["demam", "batuk-pilek", "pencernaan", "cedera", "kulit", "lainnya"],
    Field(description="Kategori keluhan: demam, batuk-pilek, pencernaan, cedera, kulit atau lainnya"),
]
TeksKlinik = Annotated[Teks | None, AfterValidator(lambda v: v or None)]
