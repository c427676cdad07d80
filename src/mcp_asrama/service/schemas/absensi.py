"""Attendance: one record, a roll call and its answer, a record's history, a day, a summary."""

from datetime import date, datetime
from typing import Annotated, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from mcp_asrama.service.schemas.common import BELUM_DICATAT, AnakId, StatusAbsensi, StatusHarian, Strict, TanpaNul

Keterangan = Annotated[str, StringConstraints(strip_whitespace=True, max_length=500), TanpaNul]


class AbsensiIn(Strict):
    """`PUT /absensi/{tanggal}/{id_anak}` body. With `status_lama` (what the caller read: `belum_dicatat` for no
    record) and `keterangan_lama`, the write happens only while the stored record is still that: else 409."""

    status: StatusAbsensi
    keterangan: Keterangan | None = None
    status_lama: StatusHarian | None = None
    keterangan_lama: Keterangan | None = None

    @field_validator("keterangan", "keterangan_lama")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        """A blank note is no note: it is stored as NULL and left out of responses."""
        return value or None

    @model_validator(mode="after")
    def _old_note_needs_old_status(self) -> Self:
        if self.keterangan_lama is not None and self.status_lama in (None, BELUM_DICATAT):
            raise ValueError("keterangan_lama hanya bersama status_lama yang tercatat")
        return self


MAX_ENTRI = 300


class EntriAbsensi(AbsensiIn):
    """One student's line of a roll call."""

    id_anak: AnakId


class AbsensiBanyakIn(Strict):
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
