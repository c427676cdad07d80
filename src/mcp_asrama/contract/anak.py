"""Students and rooms: as imported (`AnakIn`, `KamarIn`) and as a client keeps them (without personal data)."""

from typing import Annotated

from pydantic import Field, StringConstraints

from mcp_asrama.contract.types import (
    AnakId,
    JenisKelamin,
    Rapi,
    Shape,
    StatusAnak,
    Strict,
    Tanggal,
    TanpaNul,
    Teks,
)

NamaKamar = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100), TanpaNul, Rapi]


class AnakIn(Strict):
    """A student as imported, validated field by field; `nik` to `tanggal_lahir` are personal data."""

    id: AnakId
    nama: Teks
    kelas: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=20), TanpaNul, Rapi]
    kamar: Annotated[str, StringConstraints(strip_whitespace=True, max_length=100), TanpaNul, Rapi] | None = None
    status: StatusAnak = "aktif"
    jenis_kelamin: JenisKelamin | None = None
    nama_wali: Teks | None = None
    nik: Annotated[str, StringConstraints(pattern=r"^\d{16}$")] | None = None
    no_hp_wali: Annotated[str, StringConstraints(pattern=r"^\+?[0-9][0-9 \-]{6,18}$")] | None = None
    alamat: Annotated[str, StringConstraints(max_length=500), TanpaNul] | None = None
    tanggal_lahir: Tanggal | None = None


class AnakRingkas(Shape):
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


class DaftarAnak(Shape):
    """`GET /anak`."""

    total: int
    data: list[Anak]


class KamarIn(Strict):
    """A room as imported."""

    nama: NamaKamar
    gedung: Teks
    kapasitas: int = Field(ge=0, le=1000)
    musyrif: Teks | None = None


class Kamar(Shape):
    """A room with its occupancy."""

    nama: str
    gedung: str | None = None
    kapasitas: int | None = None
    terisi: int | None = None
    musyrif: str | None = None


class DaftarKamar(Shape):
    """`GET /kamar`."""

    data: list[Kamar]


class Kelas(Shape):
    """A class, its number of students and its wali kelas (by the staff list; None when it names nobody)."""

    kelas: str
    jumlah_anak: int
    wali_kelas: str | None = None


class DaftarKelas(Shape):
    """`GET /kelas` (ours; the tutorial's contract has no class list)."""

    data: list[Kelas]
