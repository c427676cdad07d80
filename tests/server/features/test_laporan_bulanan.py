"""The monthly prompts of issue 10: one student's month for a parents' meeting (health only as "sakit N hari"
unless the caller is clinic staff) and the class meeting, each refused outside the caller's scope."""

import pytest
from mcp.shared.exceptions import MCPError

from tests.server.conftest import connect, server_for
from tests.server.support import leaky_upstream
from tests.server.support_records import CLINIC

pytestmark = pytest.mark.anyio

MONTH = {"bulan": "2026-10"}


async def render(scope: list[str], era: str, name: str, arguments: dict[str, str]) -> str | MCPError:
    async with connect(server_for(leaky_upstream(), stdio_scope=scope), era) as client:
        try:
            result = await client.get_prompt(name, arguments)
        except MCPError as exc:
            return exc
    return result.messages[0].content.text  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("scope", "allowed"),
    [(["kamar:Al-Fatih 1"], True), (["kamar:Aisyah 2"], False), (["kelas:7A"], True), (["kelas:8B"], False),
     (["peran:bk"], False), (CLINIC, True), (["all"], True), ([], False)],
)  # fmt: skip
async def test_laporan_bulanan_wali_follows_the_scope(era: str, scope: list[str], allowed: bool) -> None:
    rendered = await render(scope, era, "laporan_bulanan_wali", {"id_anak": "A001", **MONTH})
    if not allowed:
        assert isinstance(rendered, MCPError) and rendered.error.code == -32602
        assert "wewenang" in rendered.error.message and "Ahmad" not in rendered.error.message
        return
    assert isinstance(rendered, str)
    for call in ('detail_anak(id_anak="A001")', 'rekap_absensi(dari="2026-10-01", sampai="2026-10-31", id_anak="A001")',
                 'hafalan_anak(id_anak="A001")', 'pelanggaran_anak(id_anak="A001", dari="2026-10-01"'):  # fmt: skip
        assert call in rendered
    assert '"sakit N hari"' in rendered
    assert ("kesehatan_anak(" in rendered) == (scope == CLINIC)
    assert "Ahmad" not in rendered  # a template: the data comes from the tools


async def test_an_unknown_student_is_refused_like_a_hidden_one(era: str) -> None:
    hidden = await render(["kamar:Aisyah 2"], era, "laporan_bulanan_wali", {"id_anak": "A001", **MONTH})
    unknown = await render(["kamar:Aisyah 2"], era, "laporan_bulanan_wali", {"id_anak": "X999", **MONTH})
    assert isinstance(hidden, MCPError) and isinstance(unknown, MCPError)
    assert hidden.error.message == unknown.error.message


@pytest.mark.parametrize("bulan", ["2026-13", "2026-1", "Oktober", "2026-10-01", ""])
async def test_a_month_must_be_written_yyyy_mm(era: str, bulan: str) -> None:
    for name, arguments in (("laporan_bulanan_wali", {"id_anak": "A001"}), ("rapat_wali_kelas", {"kelas": "7A"})):
        rendered = await render(["all"], era, name, {**arguments, "bulan": bulan})
        assert isinstance(rendered, MCPError) and rendered.error.code == -32602, (name, bulan)


@pytest.mark.parametrize(
    ("scope", "allowed"),
    [(["kamar:Al-Fatih 1"], False), (["kelas:7A"], True), (["kelas:8B"], False), (["peran:bk"], False),
     (CLINIC, True), (["all"], True)],
)  # fmt: skip
async def test_rapat_wali_kelas_follows_the_scope(era: str, scope: list[str], allowed: bool) -> None:
    rendered = await render(scope, era, "rapat_wali_kelas", {"kelas": "7A", **MONTH})
    if not allowed:
        assert isinstance(rendered, MCPError) and "wewenang" in rendered.error.message
        return
    assert isinstance(rendered, str)
    for tool in ("cari_anak", "rekap_absensi", "progres_hafalan", "rekap_pelanggaran", "rekap_kesehatan"):
        assert f"{tool}(" in rendered and 'kelas="7A"' in rendered
    assert '"disembunyikan"' in rendered and "kesehatan_anak" not in rendered
