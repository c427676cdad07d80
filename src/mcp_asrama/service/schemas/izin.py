"""`/izin` wire shapes: a leave as asked for (`IzinIn`), ended (`IzinSelesaiIn`) — the contract's — and as returned
(`IzinPublic`: the contract's `Izin` with its `alasan`).

An izin is returned with the student's name, class and room, never their personal data; its `alasan` (which may be
personal) is the service's to return, and an MCP tool shows it only if its output model declares it.
"""

from mcp_asrama.contract import izin as wire
from mcp_asrama.contract.izin import MAX_DAYS, AbsensiLama, IzinIn, IzinSelesaiIn, JenisIzin

__all__ = ["MAX_DAYS", "AbsensiLama", "DaftarIzin", "IzinIn", "IzinPublic", "IzinSelesaiIn", "JenisIzin"]


class IzinPublic(wire.Izin):
    """One izin; `aktif` when it runs today."""

    kelas: str
    alasan: str | None = None


class DaftarIzin(wire.DaftarIzin):
    """`GET /izin`: how many match, and one page of them (latest first)."""

    data: list[IzinPublic]  # type: ignore[assignment]
