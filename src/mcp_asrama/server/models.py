"""What each tool returns: the `outputSchema` and the allowlist. A field not declared here never leaves."""

from datetime import date

from pydantic import BaseModel, ConfigDict, Field

from mcp_asrama.client.models import Anak, AnakRingkas, CatatanAbsensi, JumlahStatus, Kamar, RekapAnak


class _Result(BaseModel):
    model_config = ConfigDict(extra="ignore")


class HasilCariAnak(_Result):
    """Students matching the filters; `next_offset` is the offset of the next page when there is one."""

    total: int = Field(description="Jumlah semua anak yang cocok")
    data: list[AnakRingkas]
    next_offset: int | None = Field(None, description="Offset halaman berikutnya; kosong bila sudah habis")
    catatan: str | None = None


class DetailAnak(Anak):
    """One student: id, name, class, room, status, gender and guardian's name."""


class HasilDaftarKamar(_Result):
    """Every room with building, capacity, occupancy and musyrif."""

    jumlah: int = Field(description="Jumlah semua kamar")
    data: list[Kamar]
    catatan: str | None = None


class HasilAbsensiHarian(_Result):
    """One day's attendance: counts per status, then the students who were not `hadir`."""

    tanggal: date
    jumlah_anak: int = Field(description="Jumlah anak yang tercatat pada tanggal itu (setelah filter)")
    per_status: JumlahStatus
    tidak_hadir: list[CatatanAbsensi] = Field(
        description="Anak yang tidak hadir (atau yang berstatus sesuai filter status)"
    )
    catatan: str | None = None


class HasilRekapAbsensi(_Result):
    """Counts per status over a date range and the students with the most absences."""

    dari: date
    sampai: date
    jumlah_anak: int
    total: JumlahStatus
    paling_sering_tidak_hadir: list[RekapAnak] = Field(description="Maksimal 10 anak, yang paling sering absen")
