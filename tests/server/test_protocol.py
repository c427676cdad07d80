"""What hosts see of the protocol: tool definitions, protocol errors, cache hints, server identity, discovery."""

import re
from collections.abc import AsyncIterator
from typing import Any

import mcp_types as types
import pytest
from fastapi import FastAPI
from mcp import Client, ClientSession
from mcp.client._memory import InMemoryTransport  # private, but the only in-memory route to a pinned old version
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from mcp_asrama import __version__
from tests.server.conftest import connect, server_for
from tests.server.support import TOOLS, Recording, assert_listed, listed

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
INDONESIAN = re.compile(r"\b(anak|kamar|absensi|tanggal|dan|untuk|dengan)\b")
ENGLISH = re.compile(r"\b(the|returns?|students?|room|attendance|with)\b", re.IGNORECASE)


@pytest.fixture
async def modern(service_app: FastAPI) -> AsyncIterator[Client]:
    async with connect(server_for(service_app), MODERN) as client:
        yield client


@pytest.fixture
async def legacy(service_app: FastAPI) -> AsyncIterator[Client]:
    async with connect(server_for(service_app), "legacy") as client:
        yield client


async def test_unknown_tool_is_invalid_params_and_reaches_nothing(service_app: FastAPI, era: str) -> None:
    upstream = Recording(service_app)
    async with connect(server_for(upstream), era) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("hapus_anak", {"id_anak": "A001"})
    assert caught.value.error.code == INVALID_PARAMS
    assert "hapus_anak" in caught.value.error.message
    assert upstream.requests == []


async def test_tools_are_listed_in_a_fixed_order(mcp: Client) -> None:
    first = [t.name for t in (await mcp.list_tools()).tools]
    again = [t.name for t in (await mcp.list_tools()).tools]
    assert first == again
    assert_listed(first, TOOLS)
    assert all(re.fullmatch(r"[A-Za-z0-9_.\-]{1,128}", name) for name in first)


async def test_every_input_schema_is_closed(mcp: Client) -> None:
    tools = {t.name: t.input_schema for t in (await mcp.list_tools()).tools}
    for name, schema in tools.items():
        assert schema["type"] == "object", name
        assert schema["additionalProperties"] is False, name
        assert "title" not in schema, name
    assert tools["daftar_kamar"] == {"type": "object", "properties": {}, "additionalProperties": False}


async def test_input_schemas_declare_the_tutorial_arguments(mcp: Client) -> None:
    tools = {t.name: t.input_schema for t in (await mcp.list_tools()).tools}
    declared = {
        n: (list(s.get("properties", {})), sorted(s.get("required", []))) for n, s in tools.items() if listed([n])
    }
    assert declared == {
        "cari_anak": (["nama", "kelas", "kamar", "status", "limit", "offset"], []),
        "detail_anak": (["id_anak"], ["id_anak"]),
        "daftar_kamar": ([], []),
        "absensi_harian": (["tanggal", "kelas", "kamar", "status"], ["tanggal"]),
        "rekap_absensi": (["dari", "sampai", "kelas", "kamar", "id_anak"], ["dari", "sampai"]),
        "pelanggaran_anak": (["id_anak", "dari", "sampai"], ["id_anak"]),
        "rekap_pelanggaran": (["dari", "sampai", "kelas", "kamar"], ["dari", "sampai"]),
        "hafalan_anak": (["id_anak"], ["id_anak"]),
        "progres_hafalan": (["kelas", "kamar"], []),
        "kesehatan_anak": (["id_anak", "dari", "sampai"], ["id_anak"]),
        "rekap_kesehatan": (["dari", "sampai", "kelas", "kamar"], ["dari", "sampai"]),
        "daftar_izin": (["aktif", "kelas", "kamar"], []),
    }
    limit = tools["cari_anak"]["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 100, 20)
    assert tools["detail_anak"]["properties"]["id_anak"]["pattern"] == r"^[A-Za-z0-9_.\-]{1,64}$"
    assert tools["absensi_harian"]["properties"]["tanggal"]["format"] == "date"


async def test_tools_are_annotated_read_only_idempotent_closed_world(mcp: Client) -> None:
    for tool in (await mcp.list_tools()).tools:
        annotations = tool.annotations
        assert annotations is not None, tool.name
        assert annotations.read_only_hint is True, tool.name
        assert annotations.destructive_hint is False, tool.name
        assert annotations.idempotent_hint is True, tool.name
        assert annotations.open_world_hint is False, tool.name
        assert tool.title, tool.name
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", tool.name


async def test_descriptions_are_indonesian_and_without_stray_indentation(mcp: Client) -> None:
    for tool in (await mcp.list_tools()).tools:
        description = tool.description or ""
        assert len(description) > 40, tool.name
        assert description == description.strip(), tool.name
        assert "\n" not in description and "  " not in description, tool.name
        assert INDONESIAN.search(description), tool.name
        assert not ENGLISH.search(description), (tool.name, ENGLISH.findall(description))
    detail = next(t for t in (await mcp.list_tools()).tools if t.name == "detail_anak")
    assert "cari_anak" in (detail.description or "")


async def test_list_results_carry_public_cache_hints_on_2026(modern: Client) -> None:
    results = [
        await modern.list_tools(),
        await modern.list_prompts(),
        await modern.list_resources(),
        await modern.list_resource_templates(),
    ]
    for result in results:
        assert result.ttl_ms is not None and result.ttl_ms > 0, type(result).__name__
        assert result.cache_scope == "public", type(result).__name__
        assert result.result_type == "complete", type(result).__name__


async def test_resource_reads_are_never_cached_on_2026(modern: Client) -> None:
    for uri in ("asrama://kamar", "asrama://anak/A001", "asrama://absensi/2026-10-06"):
        result = await modern.read_resource(uri)
        assert (result.ttl_ms, result.cache_scope, result.result_type) == (0, "private", "complete"), uri


async def test_every_2026_result_names_the_server(modern: Client) -> None:
    results: list[Any] = [
        await modern.list_tools(),
        await modern.call_tool("daftar_kamar", {}),
        await modern.call_tool("detail_anak", {"id_anak": "X999"}),
        await modern.read_resource("asrama://kamar"),
        await modern.get_prompt("laporan_kamar", {"nama_kamar": "Al-Fatih 1"}),
    ]
    for result in results:
        assert result.result_type == "complete"
        info = (result.meta or {}).get(SERVER_INFO)
        assert info is not None, type(result).__name__
        assert info["name"] == "asrama"
        assert info["version"] == __version__ != ""


async def test_handshake_names_the_server_and_gives_instructions(legacy: Client) -> None:
    assert legacy.protocol_version in ("2025-06-18", "2025-11-25")
    assert legacy.server_info is not None
    assert (legacy.server_info.name, legacy.server_info.version) == ("asrama", __version__)
    assert legacy.instructions and all(tool in legacy.instructions for tool in TOOLS)


async def test_server_discover_is_answered_with_instructions(modern: Client) -> None:
    discovered = await modern.session.send_discover(MODERN)
    assert MODERN in discovered["supportedVersions"]
    assert discovered["resultType"] == "complete"
    assert discovered["ttlMs"] > 0
    assert discovered["_meta"][SERVER_INFO]["name"] == "asrama"
    assert set(discovered["capabilities"]) >= {"tools", "resources", "prompts"}
    instructions = discovered["instructions"]
    assert all(tool in instructions for tool in TOOLS)
    assert "NIK" in instructions


async def test_tool_results_are_complete_on_both_eras(mcp: Client) -> None:
    ok = await mcp.call_tool("daftar_kamar", {})
    failed = await mcp.call_tool("detail_anak", {"id_anak": "X999"})
    assert (ok.is_error, failed.is_error) == (False, True)
    assert ok.result_type == failed.result_type == "complete"


async def test_a_2025_06_18_host_is_served(service_app: FastAPI) -> None:
    """Hosts that open with `initialize` at 2025-06-18 (older than the SDK client's default) get the same tools."""
    async with InMemoryTransport(server_for(service_app)) as (read, write), ClientSession(read, write) as session:
        request = types.InitializeRequest(
            params=types.InitializeRequestParams(
                protocol_version="2025-06-18",
                capabilities=types.ClientCapabilities(),
                client_info=types.Implementation(name="host-lama", version="0"),
            )
        )
        init = await session.send_request(request, types.InitializeResult)
        session.adopt(init)
        await session.send_notification(types.InitializedNotification())
        tools = await session.list_tools()
        result = await session.call_tool("detail_anak", {"id_anak": "A001"})
        with pytest.raises(MCPError) as caught:
            await session.call_tool("hapus_anak", {})
    assert (init.protocol_version, init.server_info.name) == ("2025-06-18", "asrama")
    assert_listed([t.name for t in tools.tools], TOOLS)
    assert not result.is_error
    assert result.structured_content is not None and result.structured_content["jenis_kelamin"] == "L"
    assert caught.value.error.code == INVALID_PARAMS
