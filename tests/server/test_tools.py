import json

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.anyio


def structured(result) -> dict:
    assert not result.is_error, result.content
    text = result.content[0].text
    assert json.loads(text) == result.structured_content
    return result.structured_content


async def test_cari_anak_by_class_returns_allowlisted_fields(mcp: Client) -> None:
    result = await mcp.call_tool("cari_anak", {"kelas": "7A"})
    body = structured(result)
    assert body["total"] == 2
    assert [a["id"] for a in body["data"]] == ["A001", "A003"]
    assert set(body["data"][0]) == {"id", "nama", "kelas", "kamar", "status", "nama_wali"}
    assert "nik" not in result.content[0].text


async def test_detail_anak_unknown_is_tool_error_pointing_to_cari_anak(mcp: Client) -> None:
    result = await mcp.call_tool("detail_anak", {"id_anak": "X999"})
    assert result.is_error
    assert "cari_anak" in result.content[0].text


async def test_unknown_tool_is_invalid_params(mcp: Client) -> None:
    with pytest.raises(MCPError) as caught:
        await mcp.call_tool("hapus_anak", {})
    assert caught.value.error.code == -32602


async def test_absensi_harian_aggregates(mcp: Client) -> None:
    body = structured(await mcp.call_tool("absensi_harian", {"tanggal": "2026-10-06"}))
    assert body["per_status"] == {"hadir": 2, "izin": 1, "sakit": 0, "alpa": 0}
    assert [r["id_anak"] for r in body["tidak_hadir"]] == ["A003"]


async def test_resources_and_prompts(mcp: Client) -> None:
    resources = await mcp.list_resources()
    assert [r.uri for r in resources.resources] == ["asrama://kamar"]
    read = await mcp.read_resource("asrama://anak/A001")
    assert json.loads(read.contents[0].text)["nama"] == "Ahmad Fauzi"
    prompt = await mcp.get_prompt("laporan_kamar", {"nama_kamar": "Al-Fatih 1"})
    assert "Al-Fatih 1" in prompt.messages[0].content.text
