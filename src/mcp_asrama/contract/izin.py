"""`/izin`: a leave as asked for (`IzinIn`), ended (`IzinSelesaiIn`) and as a client keeps it (`Izin`, without its
reason, which may be personal)."""

from datetime import date
from typing import Literal, Self

from pydantic import Field, model_validator

from mcp_asrama.contract.types import BELUM_DICATAT, AnakId, Catatan, Rekaman, Shape, StatusHarian, Strict, Tanggal

JenisIzin = Literal["pulang", "sakit", "keperluan"]
MAX_DAYS = 30


class AbsensiLama(Strict):
    """One day of the leave as its caller read it: `status_lama` (`belum_dicatat`: no record), `keterangan_lama`."""

    tanggal: Tanggal
    status_lama: StatusHarian
    keterangan_lama: Catatan | None = None

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
    alasan: Catatan | None = None
    absensi_lama: list[AbsensiLama] | None = Field(None, max_length=MAX_DAYS)

    @model_validator(mode="after")
    def _old_days_within_the_leave(self) -> Self:
        days = [d.tanggal for d in self.absensi_lama or []]
        if any(not self.dari <= d <= self.sampai for d in days) or len(set(days)) != len(days):
            raise ValueError("absensi_lama: tiap tanggal sekali, di antara dari dan sampai")
        return self


class IzinSelesaiIn(Strict):
    """`POST /izin/{id}/selesai` body: the day the student is back (before `sampai`: early; after: late)."""

    tanggal_kembali: Tanggal


class Izin(Rekaman):
    """One izin (its reason, which may be personal, is not kept)."""

    nama: str
    dari: date
    sampai: date
    jenis: str
    tanggal_kembali: date | None = None
    aktif: bool


class DaftarIzin(Shape):
    """`GET /izin`."""

    total: int
    data: list[Izin]
