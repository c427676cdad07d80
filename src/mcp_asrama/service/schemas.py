"""The service's wire shapes, in families: what comes in (`...In`), what goes out (`...Public`).

Response models are a second privacy layer: a column added to a table never leaves unless declared here.
"""

import re
from datetime import date, datetime
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
)

ID_PATTERN = r"^[A-Za-z0-9_.\-]{1,64}$"


def _without_nul(value: str) -> str:
    """Refuse NUL characters: PostgreSQL cannot store them and SQLite's full-text search cannot match them."""
    if "\x00" in value:
        raise ValueError("tidak boleh berisi karakter NUL")
    return value


TanpaNul = AfterValidator(_without_nul)
AnakId = Annotated[str, StringConstraints(pattern=ID_PATTERN)]
Teks = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), TanpaNul]
Cari = Annotated[str, StringConstraints(max_length=200), TanpaNul]
"""A search term, filter or looked-up id in a request (query or path): at most 200 characters, no NUL."""
StatusAnak = Literal["aktif", "izin", "sakit", "pulang"]
StatusAbsensi = Literal["hadir", "izin", "sakit", "alpa"]
StatusHarian = Literal["hadir", "izin", "sakit", "alpa", "belum_dicatat"]
"""The status of a row of `GET /absensi`: one recorded, or `belum_dicatat` (a student without a record that day)."""
JenisKelamin = Literal["L", "P"]


def _iso_date_text(value: object) -> object:
    """Only `YYYY-MM-DD` text is a date here (pydantic would also take numbers as timestamps)."""
    if isinstance(value, str) and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        raise ValueError("tanggal harus berformat YYYY-MM-DD")
    if isinstance(value, int | float):
        raise ValueError("tanggal harus berformat YYYY-MM-DD")
    return value


Tanggal = Annotated[date, BeforeValidator(_iso_date_text)]
STATUS_ABSENSI: tuple[StatusAbsensi, ...] = ("hadir", "izin", "sakit", "alpa")
BELUM_DICATAT: StatusHarian = "belum_dicatat"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class AnakIn(_Strict):
    """A student as imported, validated field by field; `nik` to `tanggal_lahir` are personal data."""

    id: AnakId
    nama: Teks
    kelas: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=20), TanpaNul]
    kamar: Annotated[str, StringConstraints(strip_whitespace=True, max_length=100), TanpaNul] | None = None
    status: StatusAnak = "aktif"
    jenis_kelamin: JenisKelamin | None = None
    nama_wali: Teks | None = None
    nik: Annotated[str, StringConstraints(pattern=r"^\d{16}$")] | None = None
    no_hp_wali: Annotated[str, StringConstraints(pattern=r"^\+?[0-9][0-9 \-]{6,18}$")] | None = None
    alamat: Annotated[str, StringConstraints(max_length=500), TanpaNul] | None = None
    tanggal_lahir: Tanggal | None = None


class AnakPublic(BaseModel):
    """A student as the service returns it: the school's system of record returns every declared field.

    Lenient on purpose: rows written by other tools are shown as they are, never turned into a 500.
    """

    model_config = ConfigDict(from_attributes=True)

    id: str
    nama: str
    kelas: str
    kamar: str | None
    status: str
    jenis_kelamin: str | None
    nama_wali: str | None
    nik: str | None
    no_hp_wali: str | None
    alamat: str | None
    tanggal_lahir: date | None


class DaftarAnak(BaseModel):
    """`GET /anak`: how many match, and one page of them."""

    total: int
    data: list[AnakPublic]


class KamarIn(_Strict):
    """A room as imported."""

    nama: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100), TanpaNul]
    gedung: Teks
    kapasitas: int = Field(ge=0, le=1000)
    musyrif: Teks | None = None


class KamarPublic(BaseModel):
    """A room with its computed occupancy."""

    nama: str
    gedung: str
    kapasitas: int
    musyrif: str | None
    terisi: int


class DaftarKamar(BaseModel):
    """`GET /kamar`."""

    data: list[KamarPublic]


class AbsensiIn(_Strict):
    """`PUT /absensi/{tanggal}/{id_anak}` body."""

    status: StatusAbsensi
    keterangan: Annotated[str, StringConstraints(strip_whitespace=True, max_length=500), TanpaNul] | None = None

    @field_validator("keterangan")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        """A blank note is no note: it is stored as NULL and left out of responses."""
        return value or None


MAX_ENTRI = 300


class EntriAbsensi(AbsensiIn):
    """One student's line of a roll call."""

    id_anak: AnakId


class AbsensiBanyakIn(_Strict):
    """`POST /absensi/{tanggal}` body: a roll call of up to 300 students, written all or nothing."""

    entri: list[EntriAbsensi] = Field(min_length=1, max_length=MAX_ENTRI)


class PerubahanAbsensi(BaseModel):
    """One student's status before (none: no record) and after a write."""

    id_anak: str
    status_lama: str | None = None
    status_baru: str | None = None


class HasilAbsensi(BaseModel):
    """The answer to a roll call: counts and every student's old → new status (ids and statuses only)."""

    tanggal: date
    jumlah: int
    baru: int
    diubah: int
    tetap: int
    data: list[PerubahanAbsensi]


class RiwayatPublic(BaseModel):
    """One change of a record: old → new, who, when, under which confirmation (`kunci`)."""

    model_config = ConfigDict(from_attributes=True)

    status_lama: str | None = None
    status_baru: str | None = None
    keterangan_lama: str | None = None
    keterangan_baru: str | None = None
    oleh: str | None = None
    waktu: datetime
    kunci: str | None = None


class DaftarRiwayat(BaseModel):
    """`GET /absensi/{tanggal}/{id_anak}/riwayat`: the changes of one student's day, oldest first."""

    tanggal: date
    id_anak: str
    data: list[RiwayatPublic]


class AbsensiPublic(BaseModel):
    """One attendance record, with who the student is (so clients need not look each one up); a student without a
    record that day has status `belum_dicatat` and no `keterangan`."""

    id_anak: str
    status: str
    keterangan: str | None = None
    nama: str | None = None
    kelas: str | None = None
    kamar: str | None = None


class AbsensiHarian(BaseModel):
    """`GET /absensi`: the records of one day; `semua_anak` (true, else left out) when `data` holds every student of
    the filter, those without a record as `belum_dicatat`."""

    tanggal: date
    data: list[AbsensiPublic]
    semua_anak: bool | None = None


class JumlahStatus(BaseModel):
    """Counts per attendance status."""

    hadir: int = 0
    izin: int = 0
    sakit: int = 0
    alpa: int = 0


class RekapAnak(JumlahStatus):
    """One student's counts over a range; `tidak_hadir` = izin + sakit + alpa."""

    id_anak: str
    nama: str
    kelas: str
    kamar: str | None = None
    tidak_hadir: int = 0


class RekapAbsensi(BaseModel):
    """`GET /absensi/rekap`: counts over a date range, overall and per student (most absent first)."""

    dari: date
    sampai: date
    total: JumlahStatus
    jumlah_anak: int
    per_anak: list[RekapAnak]


class Kesehatan(BaseModel):
    """`GET /healthz`."""

    status: Literal["ok", "error"]
    database: Literal["ok", "unavailable"]
