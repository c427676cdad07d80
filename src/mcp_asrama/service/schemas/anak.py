"""Students: as imported or created (`AnakIn`, the contract's), as returned (`AnakPublic`: the contract's `Anak`
with every declared field, personal data included: the school's system of record returns them)."""

from datetime import date

from pydantic import ConfigDict

from mcp_asrama.contract import anak as wire
from mcp_asrama.contract.anak import AnakIn

__all__ = ["AnakIn", "AnakPublic", "DaftarAnak"]


class AnakPublic(wire.Anak):
    """A student as the service returns it: the school's system of record returns every declared field.

    Lenient on purpose: rows written by other tools are shown as they are, never turned into a 500.
    """

    model_config = ConfigDict(from_attributes=True)

    kelas: str
    kamar: str | None
    status: str
    nama_wali: str | None
    jenis_kelamin: str | None
    nik: str | None
    no_hp_wali: str | None
    alamat: str | None
    tanggal_lahir: date | None


class DaftarAnak(wire.DaftarAnak):
    """`GET /anak`: how many match, and one page of them."""

    data: list[AnakPublic]  # type: ignore[assignment]
