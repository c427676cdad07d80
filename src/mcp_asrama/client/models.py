"""What we read from the service, and nothing more: unknown fields are dropped on parse (allowlist).

No model here declares `nik`, `no_hp_wali`, `alamat` or `tanggal_lahir`: personal data is never even kept.
"""

from datetime import date

from pydantic import BaseModel, ConfigDict


class _Upstream(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class AnakRingkas(_Upstream):
    """A student as a search result."""

    id: str
    nama: str
    kelas: str | None = None
    kamar: str | None = None
    status: str | None = None
    nama_wali: str | None = None


class Anak(AnakRingkas):
    """One student in detail (still without personal data)."""

    jenis_kelamin: str | None = None


class DaftarAnak(_Upstream):
    """`GET /anak`."""

    total: int
    data: list[Anak]


class Kamar(_Upstream):
    """A room with its occupancy."""

    nama: str
    gedung: str | None = None
    kapasitas: int | None = None
    terisi: int | None = None
    musyrif: str | None = None


class DaftarKamar(_Upstream):
    """`GET /kamar`."""

    data: list[Kamar]


# The status of a row for a student without a record that day (our service's `semua_anak`, or our fallback).
BELUM_DICATAT = "belum_dicatat"


class CatatanAbsensi(_Upstream):
    """One attendance record, or a student without one (`BELUM_DICATAT`); a bare tutorial-contract service sends
    no nama/kelas/kamar."""

    id_anak: str
    status: str
    keterangan: str | None = None
    nama: str | None = None
    kelas: str | None = None
    kamar: str | None = None


class AbsensiHarian(_Upstream):
    """`GET /absensi`; `semua_anak` true when `data` holds every student of the filter (our service's extension)."""

    tanggal: date | str
    data: list[CatatanAbsensi]
    semua_anak: bool | None = None


class JumlahStatus(_Upstream):
    """Counts per attendance status."""

    hadir: int = 0
    izin: int = 0
    sakit: int = 0
    alpa: int = 0


class RekapAnak(JumlahStatus):
    """One student's counts over a range."""

    id_anak: str
    nama: str | None = None
    kelas: str | None = None
    kamar: str | None = None
    tidak_hadir: int = 0


class RekapAbsensi(_Upstream):
    """`GET /absensi/rekap`."""

    dari: date
    sampai: date
    total: JumlahStatus
    jumlah_anak: int
    per_anak: list[RekapAnak]


class PerubahanAbsensi(_Upstream):
    """One student's status before (None: no record) and after a roll call."""

    id_anak: str
    status_lama: str | None = None
    status_baru: str | None = None


class HasilAbsensi(_Upstream):
    """`POST /absensi/{tanggal}`: counts and every student's old → new status."""

    tanggal: date
    jumlah: int
    baru: int
    diubah: int
    tetap: int
    data: list[PerubahanAbsensi]


class Izin(_Upstream):
    """One izin (its reason, which may be personal, is not kept)."""

    id: str
    id_anak: str
    nama: str
    kelas: str | None = None
    kamar: str | None = None
    dari: date
    sampai: date
    jenis: str
    tanggal_kembali: date | None = None
    aktif: bool


class DaftarIzin(_Upstream):
    """`GET /izin`."""

    total: int
    data: list[Izin]
