"""Resources: the room list and the templates, JSON with the tools' allowlists, and errors without internals."""

import json
from typing import Any

import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from mcp_asrama.privacy import RESULT_BUDGET
from mcp_asrama.server.app import build_server
from mcp_asrama.server.errors import INTERNAL_ERROR as INTERNAL_MESSAGE
from mcp_asrama.server.settings import ServerSettings
from tests.conftest import TOKEN
from tests.server.conftest import connect, server_for
from tests.server.support import (
    RESOURCE_URIS,
    Recording,
    answering,
    closed_port_url,
    compact,
    crashing,
    listed,
)

pytestmark = pytest.mark.anyio

JSON = "application/json"


async def read_json(client: Client, uri: str) -> Any:
    result = await client.read_resource(uri)
    assert len(result.contents) == 1
    content = result.contents[0]
    assert str(content.uri) == uri
    assert content.mime_type == JSON
    text = getattr(content, "text", None)
    assert isinstance(text, str)
    value = json.loads(text)
    assert text == compact(value)
    return value


async def read_error(client: Client, uri: str) -> MCPError:
    with pytest.raises(MCPError) as caught:
        await client.read_resource(uri)
    return caught.value


async def test_resources_list_has_the_room_list_as_json(mcp: Client) -> None:
    resources = [r for r in (await mcp.list_resources()).resources if not str(r.uri).startswith("ui://")]
    assert [(str(r.uri), r.name, r.mime_type) for r in resources] == [("asrama://kamar", "kamar", JSON)]
    assert resources[0].description  # the ui:// views beside it: tests/server/test_views.py


async def test_templates_are_listed_as_json(mcp: Client) -> None:
    templates = (await mcp.list_resource_templates()).resource_templates
    assert [(t.uri_template, t.name, t.mime_type) for t in templates if listed([t.name])] == [
        ("asrama://anak/{id_anak}", "anak", JSON),
        ("asrama://absensi/{tanggal}", "absensi", JSON),
        ("asrama://anak/{id_anak}/pelanggaran", "pelanggaran", JSON),
        ("asrama://anak/{id_anak}/hafalan", "hafalan", JSON),
    ]
    assert all(t.description for t in templates)


async def test_kamar_resource_is_the_same_as_daftar_kamar(mcp: Client) -> None:
    value = await read_json(mcp, "asrama://kamar")
    tool = await mcp.call_tool("daftar_kamar", {})
    assert value == tool.structured_content
    assert value["jumlah"] == 2
    assert value["data"][0]["terisi"] == 2


async def test_anak_resource_is_the_same_as_detail_anak(mcp: Client) -> None:
    value = await read_json(mcp, "asrama://anak/A001")
    tool = await mcp.call_tool("detail_anak", {"id_anak": "A001"})
    assert value == tool.structured_content
    assert set(value) == {"id", "nama", "kelas", "kamar", "status", "nama_wali", "jenis_kelamin"}


async def test_absensi_resource_is_the_same_as_absensi_harian(mcp: Client) -> None:
    value = await read_json(mcp, "asrama://absensi/2026-10-06")
    tool = await mcp.call_tool("absensi_harian", {"tanggal": "2026-10-06"})
    assert value == tool.structured_content
    assert value["per_status"] == {"hadir": 2, "izin": 1, "sakit": 0, "alpa": 0, "belum_dicatat": 0}


async def test_unknown_anak_is_invalid_params(mcp: Client) -> None:
    error = await read_error(mcp, "asrama://anak/X999")
    assert error.error.code == INVALID_PARAMS
    assert "tidak ditemukan" in error.error.message and "cari_anak" in error.error.message


@pytest.mark.parametrize(
    "uri",
    [
        "asrama://anak/..",
        "asrama://anak/.",
        "asrama://anak/%2e%2e",
        "asrama://anak/%2e%2e%2fkamar",
        "asrama://anak/A001?x=1",
        "asrama://anak/A001%3Fx%3D1",
        "asrama://anak/",
        "asrama://anak/a/b",
        "asrama://anak/../kamar",
        "asrama://anak/" + "A" * 65,
        "asrama://anak/A%20001",
    ],
)
async def test_invalid_anak_id_is_an_error_before_any_request(service_app: FastAPI, era: str, uri: str) -> None:
    upstream = Recording(service_app)
    async with connect(server_for(upstream), era) as client:
        error = await read_error(client, uri)
    assert error.error.code == INVALID_PARAMS
    assert upstream.requests == []
    assert "Traceback" not in error.error.message


@pytest.mark.parametrize("tanggal", ["2026-02-30", "2026-13-01", "kemarin", "1700000000", "2026-1-5", "2026-10-06x"])
async def test_bad_date_in_absensi_resource_is_an_error(service_app: FastAPI, era: str, tanggal: str) -> None:
    upstream = Recording(service_app)
    async with connect(server_for(upstream), era) as client:
        error = await read_error(client, f"asrama://absensi/{tanggal}")
    assert error.error.code == INVALID_PARAMS
    assert "YYYY-MM-DD" in error.error.message
    assert upstream.requests == []


async def test_unknown_resource_is_invalid_params(mcp: Client) -> None:
    error = await read_error(mcp, "asrama://rahasia")
    assert error.error.code == INVALID_PARAMS


@pytest.mark.parametrize("uri", RESOURCE_URIS)
async def test_service_down_during_a_read_is_a_clean_error(era: str, uri: str) -> None:
    url = closed_port_url()
    server = build_server(ServerSettings(api_url=url, api_token=TOKEN, api_timeout=5))
    async with connect(server, era) as client:
        error = await read_error(client, uri)
    assert error.error.code == INTERNAL_ERROR
    assert error.error.message.startswith("Layanan data asrama tidak dapat dihubungi")
    dumped = error.error.model_dump_json()
    for internal in ("127.0.0.1", "Errno", "Connect", "Traceback", "Error creating resource"):
        assert internal not in dumped


@pytest.mark.parametrize("uri", RESOURCE_URIS)
async def test_service_500_during_a_read_hides_its_body(era: str, uri: str) -> None:
    upstream = answering(500, b'{"detail": "password=HUNTER2-RAHASIA"}')
    async with connect(server_for(upstream), era) as client:
        error = await read_error(client, uri)
    assert error.error.code == INTERNAL_ERROR
    assert error.error.message.startswith("Layanan data asrama sedang bermasalah")
    assert "HUNTER2" not in error.error.model_dump_json()


@pytest.mark.parametrize("uri", RESOURCE_URIS)
async def test_unexpected_exception_during_a_read_is_masked(era: str, uri: str) -> None:
    async with connect(server_for(crashing("SECRET-BOOM in /srv/asrama")), era) as client:
        error = await read_error(client, uri)
    assert error.error.code == INTERNAL_ERROR
    assert error.error.message == INTERNAL_MESSAGE
    assert "SECRET-BOOM" not in error.error.model_dump_json()


async def test_kamar_resource_of_a_very_large_school_stays_within_budget(many_rooms_app: FastAPI, era: str) -> None:
    async with connect(server_for(many_rooms_app), era) as client:
        value = await read_json(client, "asrama://kamar")
    assert len(compact(value)) <= RESULT_BUDGET + 500
    assert value["jumlah"] == 400
    assert len(value["data"]) < 400
    assert "dipotong" in value["catatan"]
