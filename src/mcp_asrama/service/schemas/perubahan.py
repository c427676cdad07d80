"""The change feed's event (`GET /perubahan`): a kind and its keys, never personal data."""

from datetime import date

from pydantic import BaseModel

from mcp_asrama.service.crud.perubahan import Jenis


class PerubahanPublic(BaseModel):
    """One committed change: `tanggal`, `id_anak` and `kamar` say which records; null: any of that kind. With a
    student: `kamar` and `kelas` are that student's (who may see the change)."""

    id: int
    jenis: Jenis
    tanggal: date | None
    id_anak: str | None
    kamar: str | None
    kelas: str | None = None


class Kepala(BaseModel):
    """The newest event's id when the stream opened (0: none), in its first frame and in a reset."""

    id: int
