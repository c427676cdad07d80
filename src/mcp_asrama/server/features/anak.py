"""Students: search, one student's detail, and that student as a resource."""

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp_types import CallToolResult
from pydantic import Field

from mcp_asrama.client import NotFound
from mcp_asrama.client.models import Anak, AnakRingkas
from mcp_asrama.privacy import RESULT_BUDGET, fitting_count, json_text
from mcp_asrama.server.arguments import IdAnak, Kamar, Kelas, Limit, Nama, Offset, StatusAnak, is_id
from mcp_asrama.server.asrama_server import AsramaServer, tool_result
from mcp_asrama.server.features import anak_reads
from mcp_asrama.server.features.common import BAD_ID, NO_ACCESS, READ_ONLY, Result, add_tools, publish
from mcp_asrama.server.guard.scoped import ScopedReader, scoped_reader

RINGKASAN = "cari anak (cari_anak), detail satu anak (detail_anak)"


class HasilCariAnak(Result):
    """Students matching the filters; `next_offset` is the offset of the next page when there is one."""

    total: int = Field(description="Jumlah semua anak yang cocok")
    data: list[AnakRingkas]
    next_offset: int | None = Field(None, description="Offset halaman berikutnya; kosong bila sudah habis")
    catatan: str | None = None


class DetailAnak(Anak):
    """One student: id, name, class, room, status, gender and guardian's name."""


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
    reader = scoped_reader(ctx)
    total, page = await anak_reads.cari_anak(
        reader, nama=nama, kelas=kelas, kamar=kamar, status=status, limit=limit, offset=offset
    )
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


async def satu_anak(reader: ScopedReader, id_anak: str) -> Anak:
    """One student this principal may see, or the tool error that says how to find the right id."""
    try:
        return await anak_reads.detail_anak(reader, id_anak)
    except NotFound:
        raise ToolError(
            f"Anak dengan id '{id_anak}' tidak ditemukan. Cari id yang benar dengan cari_anak "
            "(mis. berdasarkan nama atau kelas)."
        ) from None


async def detail_anak(ctx: Context, id_anak: IdAnak) -> Annotated[CallToolResult, DetailAnak]:
    """Detail satu anak asrama berdasarkan id (mis. 'A001'): nama, kelas, kamar, status, jenis kelamin dan nama
    wali. Belum tahu id-nya? Cari dulu dengan cari_anak."""
    anak = await satu_anak(scoped_reader(ctx), id_anak)
    return tool_result(DetailAnak.model_validate(anak.model_dump()))


async def anak_resource(id_anak: str, ctx: Context) -> str:
    """Data satu anak (tanpa data pribadi), mis. asrama://anak/A001."""
    if not is_id(id_anak):
        raise ResourceNotFoundError(BAD_ID)
    try:
        found = await anak_reads.detail_anak(scoped_reader(ctx), id_anak)
    except NotFound:
        message = f"Anak dengan id '{id_anak}' tidak ditemukan; cari id-nya dengan cari_anak"
        raise ResourceNotFoundError(message) from None
    return json_text(DetailAnak.model_validate(found.model_dump()))


def register(server: AsramaServer) -> None:
    """Add the student tools and the student resource."""
    add_tools(server, {cari_anak: "Cari anak", detail_anak: "Detail anak"}, READ_ONLY)
    publish(server, "anak", "Data anak", anak_resource)
