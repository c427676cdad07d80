"""Attendance: one record and a roll call as written (`AbsensiIn`, `AbsensiBanyakIn`), a day, a summary and a roll
call's answer as a client keeps them."""

from datetime import date
from typing import Self

from pydantic import Field, model_validator

from mcp_asrama.contract.types import (
    BELUM_DICATAT,
    AnakId,
    Catatan,
    Shape,
    StatusAbsensi,
    StatusHarian,
    Strict,
)

Keterangan = Catatan
MAX_ENTRI = 300


class AbsensiIn(Strict):
    """`PUT /absensi/{tanggal}/{id_anak}` body. With `status_lama` (what the caller read: `belum_dicatat` for no
    record) and `keterangan_lama`, the write happens only while the stored record is still that: else 409."""

    status: StatusAbsensi
    keterangan: Keterangan | None = None
    status_lama: StatusHarian | None = None
    keterangan_lama: Keterangan | None = None

    @model_validator(mode="after")
    def _old_note_needs_old_status(self) -> Self:
        if self.keterangan_lama is not None and self.status_lama in (None, BELUM_DICATAT):
            raise ValueError("keterangan_lama hanya bersama status_lama yang tercatat")
        return self


class EntriAbsensi(AbsensiIn):
    """One student's line of a roll call."""

    id_anak: AnakId


class AbsensiBanyakIn(Strict):
    """`POST /absensi/{tanggal}` body: a roll call of up to 300 students, written all or nothing."""

    entri: list[EntriAbsensi] = Field(min_length=1, max_length=MAX_ENTRI)


class CatatanAbsensi(Shape):
    """One attendance record, or a student without one (`BELUM_DICATAT`); a bare tutorial-contract service sends
    no nama/kelas/kamar."""

    id_anak: str
    status: str
    keterangan: str | None = None
    nama: str | None = None
    kelas: str | None = None
    kamar: str | None = None


class JumlahStatus(Shape):
    """Counts per attendance status."""

    hadir: int = 0
    izin: int = 0
    sakit: int = 0
    alpa: int = 0


class JumlahHarian(JumlahStatus):
    """Counts per status of one day, with the students who have no record yet."""

    belum_dicatat: int = 0


class AbsensiHarian(Shape):
    """`GET /absensi`; `semua_anak` true when `data` holds every student of the filter (our service's extension).
    Asked `ringkas` (ours too), the day counted at the service: `per_status` of every student of the filter
    (`jumlah_anak` of them), and `data` only the listed ones (see the route); a service without it ignores `ringkas`
    and sends the day as without it."""

    tanggal: date | str
    data: list[CatatanAbsensi]
    semua_anak: bool | None = None
    jumlah_anak: int | None = None
    per_status: JumlahHarian | None = None


class RekapAnak(JumlahStatus):
    """One student's counts over a range."""

    id_anak: str
    nama: str | None = None
    kelas: str | None = None
    kamar: str | None = None
    tidak_hadir: int = 0


class RekapAbsensi(Shape):
    """`GET /absensi/rekap`."""

    dari: date
    sampai: date
    total: JumlahStatus
    jumlah_anak: int
    per_anak: list[RekapAnak]


class PerubahanAbsensi(Shape):
    """One student's status before (None: no record) and after a roll call."""

    id_anak: str
    status_lama: str | None = None
    status_baru: str | None = None


class HasilAbsensi(Shape):
    """`POST /absensi/{tanggal}`: counts and every student's old → new status."""

    tanggal: date
    jumlah: int
    baru: int
    diubah: int
    tetap: int
    data: list[PerubahanAbsensi]
