"""`/izin` wire shapes: a leave as asked for (`IzinIn`), ended (`IzinSelesaiIn`) and as returned (`IzinPublic`).

An izin is returned with the student's name, class and room, never their personal data; its `alasan` (which may be
personal) is the service's to return, and an MCP tool shows it only if its output model declares it.
"""

from datetime import date
from typing import Annotated, Literal, Self

from pydantic import BaseModel, Field, StringConstraints, field_validator, model_validator

from mcp_asrama.service.schemas.absensi import Keterangan
from mcp_asrama.service.schemas.common import BELUM_DICATAT, AnakId, StatusHarian, Strict, Tanggal, TanpaNul

JenisIzin = Literal["pulang", "sakit", "keperluan"]
MAX_DAYS = 30


class AbsensiLama(Strict):
    """One day of the leave as its caller read it: `status_lama` (`belum_dicatat`: no record), `keterangan_lama`."""

    tanggal: Tanggal
    status_lama: StatusHarian
    keterangan_lama: Keterangan | None = None

    @field_validator("keterangan_lama")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        return value or None

    @model_validator(mode="after")
    def _note_needs_a_record(self) -> Self:
        if self.keterangan_lama is not None and self.status_lama == BELUM_DICATAT:
            raise ValueError("keterangan_lama hanya bersama status_lama yang tercatat")
        return self


class IzinIn(Strict):
    """`POST /izin` body; `alasan` may be personal: stored here, never copied into the attendance record. With
    `absensi_lama` (the days' records as the caller read them; a day left out is not checked), the izin is written
    only while every one of them is still so: else 409."""

    id_anak: AnakId
    dari: Tanggal
    sampai: Tanggal
    jenis: JenisIzin
    alasan: Annotated[str, StringConstraints(strip_whitespace=True, max_length=500), TanpaNul] | None = None
    absensi_lama: list[AbsensiLama] | None = Field(None, max_length=MAX_DAYS)

    @field_validator("alasan")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        return value or None

    @model_validator(mode="after")
    def _old_days_within_the_leave(self) -> Self:
        days = [d.tanggal for d in self.absensi_lama or []]
        if any(not self.dari <= d <= self.sampai for d in days) or len(set(days)) != len(days):
            raise ValueError("absensi_lama: tiap tanggal sekali, di antara dari dan sampai")
        return self


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
