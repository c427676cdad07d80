"""Students: as imported or created (`AnakIn`), as returned (`AnakPublic`, without personal data)."""

from datetime import date
from typing import Annotated

from pydantic import (
    BaseModel,
    ConfigDict,
    StringConstraints,
)

from mcp_asrama.service.schemas.common import (
    AnakId,
    JenisKelamin,
    Rapi,
    StatusAnak,
    Strict,
    Tanggal,
    TanpaNul,
    Teks,
)


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
