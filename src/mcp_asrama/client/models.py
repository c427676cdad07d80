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


class Kelas(_Upstream):
    """A class and its number of students."""

    kelas: str
    jumlah_anak: int


class DaftarKelas(_Upstream):
    """`GET /kelas` (ours; the tutorial's contract has no class list)."""

    data: list[Kelas]


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


# --- pelanggaran (discipline) ---------------------------------------------------------------------------------


class JenisPelanggaran(_Upstream):
    """One kind of violation the school lists, with its default points."""

    kode: str
    nama: str
    kategori: str
    poin: int


class DaftarJenisPelanggaran(_Upstream):
    """`GET /pelanggaran/jenis`."""

    data: list[JenisPelanggaran]


class Pelanggaran(_Upstream):
    """One recorded violation. Its `keterangan` (a note that may be personal) and who recorded it are not kept."""

    id: str
    id_anak: str
    nama: str | None = None
    kelas: str | None = None
    kamar: str | None = None
    tanggal: date
    kategori: str
    jenis: str
    nama_jenis: str | None = None
    poin: int


class DaftarPelanggaran(_Upstream):
    """`GET /pelanggaran`."""

    total: int
    data: list[Pelanggaran]


class JumlahKategori(_Upstream):
    """Violations per category, their number and points."""

    ringan: int = 0
    sedang: int = 0
    berat: int = 0
    jumlah: int = 0
    poin: int = 0


class RekapPelanggaranAnak(JumlahKategori):
    """One student's violations over a range."""

    id_anak: str
    nama: str | None = None
    kelas: str | None = None
    kamar: str | None = None


class RekapPelanggaran(_Upstream):
    """`GET /pelanggaran/rekap`."""

    dari: date
    sampai: date
    jumlah_anak: int
    total: JumlahKategori
    per_anak: list[RekapPelanggaranAnak]


# --- hafalan (Qur'an memorisation deposits) -------------------------------------------------------------------


class Setoran(_Upstream):
    """One deposit (setoran) of memorisation; the examiner's name is not kept."""

    id: str
    id_anak: str
    nama: str | None = None
    kelas: str | None = None
    kamar: str | None = None
    tanggal: date
    jenis: str
    surah: int
    nama_surah: str | None = None
    ayat_mulai: int
    ayat_selesai: int
    juz: list[int] = []
    nilai: int | None = None


class DaftarSetoran(_Upstream):
    """`GET /hafalan`."""

    total: int
    data: list[Setoran]


class ProgresAnak(_Upstream):
    """One student's memorisation so far."""

    id_anak: str
    nama: str | None = None
    kelas: str | None = None
    kamar: str | None = None
    ayat: int = 0
    juz: float = 0
    setoran_terakhir: date | None = None
    ayat_per_pekan: float = 0


class RataRata(_Upstream):
    """Average ayat and juz memorised."""

    ayat: float = 0
    juz: float = 0


class ProgresHafalan(_Upstream):
    """`GET /hafalan/progres`."""

    jumlah_anak: int
    rata_rata: RataRata
    data: list[ProgresAnak]


# --- kesehatan (clinic visits): specific personal data ----------------------------------------------------------


class Kunjungan(_Upstream):
    """One clinic visit without its health details: what anyone may learn of it is that it happened (and even
    this only reaches clinic staff)."""

    id: str
    id_anak: str
    nama: str | None = None
    kelas: str | None = None
    kamar: str | None = None
    tanggal: date
    kategori: str


class KunjunganKlinik(Kunjungan):
    """One clinic visit with its health details: parsed only for a principal with `peran:kesehatan`."""

    keluhan: str | None = None
    tindakan: str | None = None
    obat: str | None = None
    rujukan: str | None = None
    petugas: str | None = None


class DaftarKunjungan(_Upstream):
    """`GET /kesehatan` without health details."""

    total: int
    data: list[Kunjungan]


class DaftarKunjunganKlinik(_Upstream):
    """`GET /kesehatan` with health details (clinic principals only)."""

    total: int
    data: list[KunjunganKlinik]


class KategoriKesehatan(_Upstream):
    """Visits and distinct students of one category."""

    kategori: str
    kunjungan: int
    anak: int


class RekapKesehatan(_Upstream):
    """`GET /kesehatan/rekap`: counts only."""

    dari: date
    sampai: date
    kunjungan: int
    anak: int
    per_kategori: list[KategoriKesehatan]
