"""Rooms: as imported (`KamarIn`, the contract's) and as returned with their occupancy."""

from mcp_asrama.contract import anak as wire
from mcp_asrama.contract.anak import KamarIn

__all__ = ["DaftarKamar", "KamarIn", "KamarPublic"]


class KamarPublic(wire.Kamar):
    """A room with its computed occupancy."""

    gedung: str
    kapasitas: int
    musyrif: str | None
    terisi: int


class DaftarKamar(wire.DaftarKamar):
    """`GET /kamar`."""

    data: list[KamarPublic]  # type: ignore[assignment]
