"""Attendance: one record and a roll call as written (the contract's `AbsensiIn`, `AbsensiBanyakIn`), a roll call's
answer, a record's history, a day, a summary."""

from datetime import date, datetime

from pydantic import BaseModel, ConfigDict

from mcp_asrama.contract import absensi as wire
from mcp_asrama.contract.absensi import (
    MAX_ENTRI,
    AbsensiBanyakIn,
    AbsensiIn,
    EntriAbsensi,
    JumlahHarian,
    JumlahStatus,
    Keterangan,
)

__all__ = [
    "MAX_ENTRI",
    "AbsensiBanyakIn",
    "AbsensiHarian",
    "AbsensiIn",
    "AbsensiPublic",
    "DaftarRiwayat",
    "EntriAbsensi",
    "HasilAbsensi",
    "JumlahHarian",
    "JumlahStatus",
    "Keterangan",
    "PerubahanAbsensi",
    "RekapAbsensi",
    "RekapAnak",
    "RiwayatPublic",
]


class PerubahanAbsensi(wire.PerubahanAbsensi):
    """One student's status before (none: no record) and after a write."""


class HasilAbsensi(wire.HasilAbsensi):
    """The answer to a roll call: counts and every student's old → new status (ids and statuses only)."""

    data: list[PerubahanAbsensi]  # type: ignore[assignment]


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


class AbsensiPublic(wire.CatatanAbsensi):
    """One attendance record, with who the student is (so clients need not look each one up); a student without a
    record that day has status `belum_dicatat` and no `keterangan`."""


class AbsensiHarian(wire.AbsensiHarian):
    """`GET /absensi`: the records of one day; `semua_anak` (true, else left out) when `data` holds every student of
    the filter, those without a record as `belum_dicatat`; with `ringkas`, the counts and the listed students."""

    tanggal: date
    data: list[AbsensiPublic]  # type: ignore[assignment]


class RekapAnak(wire.RekapAnak):
    """One student's counts over a range; `tidak_hadir` = izin + sakit + alpa."""

    nama: str
    kelas: str


class RekapAbsensi(wire.RekapAbsensi):
    """`GET /absensi/rekap`: counts over a date range, overall and per student (most absent first)."""

    per_anak: list[RekapAnak]  # type: ignore[assignment]
