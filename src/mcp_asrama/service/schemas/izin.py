"""`/izin` wire shapes: a leave as asked for (`IzinIn`), ended (`IzinSelesaiIn`) and as returned (`IzinPublic`).

An izin is returned with the student's name, class and room, never their personal data; its `alasan` (which may be
personal) is the service's to return, and an MCP tool shows it only if its output model declares it.
"""

from datetime import date
from typing import Annotated, Literal

from pydantic import BaseModel, StringConstraints, field_validator

from mcp_asrama.service.schemas.common import AnakId, Strict, Tanggal, TanpaNul

JenisIzin = Literal["pulang", "sakit", "keperluan"]


class IzinIn(Strict):
    """`POST /izin` body; `alasan` may be personal: stored here, never copied into the attendance record."""

    id_anak: AnakId
    dari: Tanggal
    sampai: Tanggal
    jenis: JenisIzin
    alasan: Annotated[str, StringConstraints(strip_whitespace=True, max_length=500), TanpaNul] | None = None

    @field_validator("alasan")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        return value or None


class IzinSelesaiIn(Strict):
    """`POST /izin/{id}/selesai` body: the day the student is back (before `sampai`: early; after: late)."""

    tanggal_kembali: Tanggal


class IzinPublic(BaseModel):
    """One izin; `aktif` when it runs today."""

    id: str
    id_anak: str
    nama: str
    kelas: str
    kamar: str | None = None
    dari: date
    sampai: date
    jenis: str
    alasan: str | None = None
    tanggal_kembali: date | None = None
    aktif: bool


class DaftarIzin(BaseModel):
    """`GET /izin`: how many match, and one page of them (latest first)."""

    total: int
    data: list[IzinPublic]
