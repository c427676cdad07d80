"""Resources the host may attach as context: rooms, one student, one day's attendance (JSON, allowlisted)."""

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceNotFoundError

from mcp_asrama.client import NotFound
from mcp_asrama.privacy import json_text
from mcp_asrama.server.arguments import is_id, parse_tanggal
from mcp_asrama.server.core import AsramaServer, resource_context
from mcp_asrama.server.features.absensi import ringkas_absensi
from mcp_asrama.server.features.kamar import ringkas_kamar
from mcp_asrama.server.models import DetailAnak
from mcp_asrama.server.scoped import terbatas

JSON = "application/json"


async def kamar() -> str:
    """Semua kamar asrama: gedung, kapasitas, jumlah terisi dan musyrif."""
    return json_text(ringkas_kamar(await terbatas(resource_context()).daftar_kamar()))


async def anak(id_anak: str, ctx: Context) -> str:
    """Data satu anak (tanpa data pribadi), mis. asrama://anak/A001."""
    if not is_id(id_anak):
        raise ResourceNotFoundError("id anak tidak valid: 1–64 huruf, angka, '-', '_' atau '.'")
    try:
        found = await terbatas(ctx).detail_anak(id_anak)
    except NotFound:
        message = f"Anak dengan id '{id_anak}' tidak ditemukan; cari id-nya dengan cari_anak"
        raise ResourceNotFoundError(message) from None
    return json_text(DetailAnak.model_validate(found.model_dump()))


async def absensi(tanggal: str, ctx: Context) -> str:
    """Absensi satu tanggal: jumlah per status dan anak yang tidak hadir, mis. asrama://absensi/2026-10-06."""
    day = parse_tanggal(tanggal)
    if day is None:
        raise ResourceNotFoundError("tanggal tidak valid: gunakan tanggal yang ada, format YYYY-MM-DD")
    return json_text(await ringkas_absensi(terbatas(ctx), day))


def register(server: AsramaServer) -> None:
    """Add the room list and the two templates."""
    server.resource("asrama://kamar", name="kamar", title="Daftar kamar", mime_type=JSON)(kamar)
    server.resource("asrama://anak/{id_anak}", name="anak", title="Data anak", mime_type=JSON)(anak)
    server.resource("asrama://absensi/{tanggal}", name="absensi", title="Absensi harian", mime_type=JSON)(absensi)
