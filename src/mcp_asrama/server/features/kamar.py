"""Rooms: every room with its building, capacity, occupancy and musyrif."""

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

from mcp_asrama.client.models import Kamar as DataKamar
from mcp_asrama.privacy import RESULT_BUDGET, fitting_count, json_text
from mcp_asrama.server.asrama_server import AsramaServer, resource_context, tool_result
from mcp_asrama.server.features.common import READ_ONLY, Result, add_tools, publish
from mcp_asrama.server.guard.scoped import ScopedReader, scoped_reader

RINGKASAN = "daftar kamar (daftar_kamar)"


class HasilDaftarKamar(Result):
    """Every room with building, capacity, occupancy and musyrif."""

    jumlah: int = Field(description="Jumlah semua kamar")
    data: list[DataKamar]
    catatan: str | None = None


async def visible_rooms(reader: ScopedReader) -> list[DataKamar]:
    """The rooms whose occupancy and musyrif this principal may see."""
    if reader.akses.kosong:
        return []
    rooms = (await reader.client.daftar_kamar()).data
    return [room for room in rooms if reader.akses.boleh_kamar(room.nama)]


async def daftar_kamar(ctx: Context) -> Annotated[CallToolResult, HasilDaftarKamar]:
    """Daftar semua kamar asrama: gedung (Putra/Putri), kapasitas, jumlah terisi dan musyrif (pembina kamar)."""
    return tool_result(ringkas_kamar(await visible_rooms(scoped_reader(ctx))))


def ringkas_kamar(rooms: list[DataKamar]) -> HasilDaftarKamar:
    """Every room, cut to the budget (with a note saying so) for a very large school."""
    shown = fitting_count(rooms, RESULT_BUDGET)
    catatan = None
    if shown < len(rooms):
        catatan = (
            f"Daftar dipotong agar ringkas: {shown} dari {len(rooms)} kamar. Untuk kamar lain, tanyakan penghuninya "
            "dengan cari_anak(kamar=...)."
        )
    return HasilDaftarKamar(jumlah=len(rooms), data=rooms[:shown], catatan=catatan)


async def kamar_resource() -> str:
    """Semua kamar asrama: gedung, kapasitas, jumlah terisi dan musyrif."""
    return json_text(ringkas_kamar(await visible_rooms(scoped_reader(resource_context()))))


def register(server: AsramaServer) -> None:
    """Add the room tool and the room list as a resource."""
    add_tools(server, {daftar_kamar: "Daftar kamar"}, READ_ONLY)
    publish(server, "kamar", "Daftar kamar", kamar_resource)
