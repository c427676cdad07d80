"""Students: search and one student's detail."""

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult

from mcp_asrama.client import NotFound
from mcp_asrama.client.models import Anak
from mcp_asrama.privacy import RESULT_BUDGET, fitting_count
from mcp_asrama.server.arguments import IdAnak, Kamar, Kelas, Limit, Nama, Offset, StatusAnak
from mcp_asrama.server.core import AsramaServer, tool_result
from mcp_asrama.server.features.common import NO_ACCESS, READ_ONLY, add_tools
from mcp_asrama.server.models import DetailAnak, HasilCariAnak
from mcp_asrama.server.scoped import Terbatas, terbatas


async def cari_anak(
    ctx: Context,
    nama: Nama = None,
    kelas: Kelas = None,
    kamar: Kamar = None,
    status: StatusAnak = None,
    limit: Limit = 20,
    offset: Offset = 0,
) -> Annotated[CallToolResult, HasilCariAnak]:
    """Cari anak asrama berdasarkan sebagian nama, kelas (mis. '7A'), nama kamar (mis. 'Al-Fatih 1') atau status
    (aktif, izin, sakit, pulang). Semua filter opsional dan digabung (DAN). Hasil: total yang cocok dan satu halaman
    anak (id, nama, kelas, kamar, status, nama_wali); bila ada next_offset, panggil lagi dengan offset=next_offset
    untuk halaman berikutnya. Gunakan id dari hasil ini untuk detail_anak."""
    reader = terbatas(ctx)
    total, page = await reader.cari_anak(nama=nama, kelas=kelas, kamar=kamar, status=status, limit=limit, offset=offset)
    if status and any((a.status or "").lower() != status for a in page):
        # A tutorial-contract service ignores `status`: say so rather than present others as matches.
        raise ToolError(
            "Layanan data asrama ini tidak mendukung filter status pada pencarian anak. Panggil cari_anak "
            "tanpa status; setiap anak di hasil menyertakan statusnya."
        )
    shown = fitting_count(page, RESULT_BUDGET)
    following = offset + shown
    catatan = NO_ACCESS if reader.akses.kosong else None
    if shown < len(page):
        catatan = f"Hasil dipotong agar ringkas: {shown} dari {len(page)} anak di halaman ini."
    return tool_result(
        HasilCariAnak(
            total=total,
            data=page[:shown],
            catatan=catatan,
            next_offset=following if following < total else None,
        )
    )


async def satu_anak(reader: Terbatas, id_anak: str) -> Anak:
    """One student this principal may see, or the tool error that says how to find the right id."""
    try:
        return await reader.detail_anak(id_anak)
    except NotFound:
        raise ToolError(
            f"Anak dengan id '{id_anak}' tidak ditemukan. Cari id yang benar dengan cari_anak "
            "(mis. berdasarkan nama atau kelas)."
        ) from None


async def detail_anak(ctx: Context, id_anak: IdAnak) -> Annotated[CallToolResult, DetailAnak]:
    """Detail satu anak asrama berdasarkan id (mis. 'A001'): nama, kelas, kamar, status, jenis kelamin dan nama
    wali. Belum tahu id-nya? Cari dulu dengan cari_anak."""
    anak = await satu_anak(terbatas(ctx), id_anak)
    return tool_result(DetailAnak.model_validate(anak.model_dump()))


def register(server: AsramaServer) -> None:
    """Add the student tools."""
    add_tools(server, {cari_anak: "Cari anak", detail_anak: "Detail anak"}, READ_ONLY)
