"""Rooms: every room with its building, capacity, occupancy and musyrif."""

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult

from mcp_asrama.client.models import Kamar as DataKamar
from mcp_asrama.privacy import RESULT_BUDGET, fitting_count
from mcp_asrama.server.core import AsramaServer, tool_result
from mcp_asrama.server.features.common import READ_ONLY, add_tools
from mcp_asrama.server.models import HasilDaftarKamar
from mcp_asrama.server.scoped import terbatas


async def daftar_kamar(ctx: Context) -> Annotated[CallToolResult, HasilDaftarKamar]:
    """Daftar semua kamar asrama: gedung (Putra/Putri), kapasitas, jumlah terisi dan musyrif (pembina kamar)."""
    return tool_result(ringkas_kamar(await terbatas(ctx).daftar_kamar()))


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


def register(server: AsramaServer) -> None:
    """Add the room tool."""
    add_tools(server, {daftar_kamar: "Daftar kamar"}, READ_ONLY)
