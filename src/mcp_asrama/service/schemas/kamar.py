"""Rooms: as imported (`KamarIn`) and as returned with their occupancy."""

from typing import Annotated

from pydantic import (
    BaseModel,
    Field,
    StringConstraints,
)

from mcp_asrama.service.schemas.common import Rapi, Strict, TanpaNul, Teks


class KamarIn(Strict):
    """A room as imported."""

    nama: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100), TanpaNul, Rapi]
    gedung: Teks
    kapasitas: int = Field(ge=0, le=1000)
    musyrif: Teks | None = None


class KamarPublic(BaseModel):
    """A room with its computed occupancy."""

    nama: str
    gedung: str
    kapasitas: int
    musyrif: str | None
    terisi: int


class DaftarKamar(BaseModel):
    """`GET /kamar`."""

    data: list[KamarPublic]
