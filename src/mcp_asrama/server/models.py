"""What each tool returns: the `outputSchema` and the allowlist. A field not declared here never leaves."""

from datetime import date

from pydantic import BaseModel, ConfigDict, Field

from mcp_asrama.client.models import Anak, AnakRingkas, CatatanAbsensi, JumlahStatus, Kamar, RekapAnak


class Result(BaseModel):
    """A tool's result: fields not declared are dropped (allowlist)."""

    model_config = ConfigDict(extra="ignore")


class HasilCariAnak(Result):
    """Students matching the filters; `next_offset` is the offset of the next page when there is one."""

    total: int = Field(description="Jumlah semua anak yang cocok")
    data: list[AnakRingkas]
    next_offset: int | None = Field(None, description="Offset halaman berikutnya; kosong bila sudah habis")
    catatan: str | None = None


class DetailAnak(Anak):
    """One student: id, name, class, room, status, gender and guardian's name."""


class HasilDaftarKamar(Result):
    """Every room with building, capacity, occupancy and musyrif."""

    jumlah: int = Field(description="Jumlah semua kamar")
    data: list[Kamar]
    catatan: str | None = None


class JumlahHarian(JumlahStatus):
    """Counts per status of one day, with the students who have no record yet."""

    belum_dicatat: int | None = Field(
        None, description="Anak tanpa catatan absensi pada tanggal itu; kosong bila layanan tidak bisa mendaftarnya"
    )


class HasilAbsensiHarian(Result):
    """One day's attendance of every visible student of the filter: counts per status, then who was not `hadir`."""

    tanggal: date
    jumlah_anak: int = Field(description="Jumlah semua anak pada filter itu (sesuai wewenang), dicatat atau belum")
    per_status: JumlahHarian
    tidak_hadir: list[CatatanAbsensi] = Field(
        description="Anak yang izin, sakit atau alpa, lalu yang belum_dicatat (dengan filter status: hanya status itu)"
    )
    catatan: str | None = None


class HasilRekapAbsensi(Result):
    """Counts per status over a date range and the students with the most absences."""

    dari: date
    sampai: date
    jumlah_anak: int
    total: JumlahStatus
    paling_sering_tidak_hadir: list[RekapAnak] = Field(description="Maksimal 10 anak, yang paling sering absen")
