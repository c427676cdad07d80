"""Failures are tool results (`isError: true`) with a short Indonesian message the model can act on.

Invalid arguments are refused before any request (asserted with an upstream that records what reaches it); data
service failures never carry its body, our exception text or a stack trace.
"""

import json
import logging
import time
from typing import Any
from urllib.parse import parse_qs

import pytest
from fastapi import FastAPI

from mcp_asrama.server.app import build_server
from mcp_asrama.server.errors import INTERNAL_ERROR
from mcp_asrama.server.features.absensi_reads import LISTED
from mcp_asrama.server.settings import ServerSettings
from tests.conftest import TOKEN
from tests.server.conftest import connect, server_for
from tests.server.support import (
    TOOLS,
    VALID_CALLS,
    Recording,
    answering,
    call_error,
    closed_port_url,
    crashing,
    sleeping_upstream,
)
from tests.server.support_records import RECORD_CALLS

pytestmark = pytest.mark.anyio

HOSTILE_IDS = [
    "../kamar",
    "A001?x=1",
    "%2e%2e/kamar",
    ".",
    "..",
    "...",
    "A" * 65,
    "",
    "A001/../../kamar",
    "A001#frag",
    "A001\n",
    "A001 ",
    "A001;rm",
    "A001\\..\\kamar",
    "Ａ001",
    "A001\x00",
]


@pytest.fixture
def recorded(service_app: FastAPI) -> Recording:
    """Our real service behind a recorder of every raw request path that reaches it."""
    return Recording(service_app)


# --- invalid arguments never reach the service ----------------------------------------------------------------


@pytest.mark.parametrize("hostile", HOSTILE_IDS)
async def test_hostile_id_is_refused_before_any_request(recorded: Recording, era: str, hostile: str) -> None:
    async with connect(server_for(recorded), era) as client:
        detail = await call_error(client, "detail_anak", {"id_anak": hostile})
        rekap = await call_error(
            client, "rekap_absensi", {"dari": "2026-10-01", "sampai": "2026-10-31", "id_anak": hostile}
        )
    assert recorded.requests == []
    for text in (detail, rekap):
        assert text.startswith("Argumen tidak valid")
        assert "id_anak" in text
    if len(hostile) > 2:
        assert hostile not in detail


@pytest.mark.parametrize("good", ["A.01", "a-b_c", "A001..B", "x" * 64])
async def test_valid_id_reaches_the_service_as_one_exact_path_segment(recorded: Recording, era: str, good: str) -> None:
    async with connect(server_for(recorded), era) as client:
        text = await call_error(client, "detail_anak", {"id_anak": good})
    assert recorded.paths == [f"/anak/{good}".encode()]
    assert "cari_anak" in text


@pytest.mark.parametrize(
    "tanggal", ["2026-02-30", "2026-13-01", "2026-00-10", "kemarin", 1700000000, 20261006, "2026-1-5", "06-10-2026",
                "2026-10-06T00:00:00", "2026-10-06 ", "", None, 2026.5]
)  # fmt: skip
async def test_impossible_or_malformed_date_is_refused(recorded: Recording, era: str, tanggal: Any) -> None:
    async with connect(server_for(recorded), era) as client:
        harian = await call_error(client, "absensi_harian", {"tanggal": tanggal})
        dari = await call_error(client, "rekap_absensi", {"dari": tanggal, "sampai": "2026-10-31"})
        sampai = await call_error(client, "rekap_absensi", {"dari": "2026-10-01", "sampai": tanggal})
    assert recorded.requests == []
    for text, field in ((harian, "tanggal"), (dari, "dari"), (sampai, "sampai")):
        assert text.startswith(f"Argumen tidak valid: {field}:")
        assert "YYYY-MM-DD" in text


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"limit": 1000}, "limit: paling besar 100"),
        ({"limit": 0}, "limit: paling kecil 1"),
        ({"limit": "banyak"}, "limit: harus bilangan bulat"),
        ({"offset": -5}, "offset: paling kecil 0"),
        ({"nama": "x" * 101}, "nama: paling panjang 100 karakter"),
        ({"kelas": ["7A"]}, "kelas: harus teks"),
        ({"status": "lulus"}, "status: harus salah satu dari"),
    ],
)
async def test_out_of_range_argument_names_the_bound(
    recorded: Recording, era: str, arguments: dict[str, Any], expected: str
) -> None:
    async with connect(server_for(recorded), era) as client:
        text = await call_error(client, "cari_anak", arguments)
    assert recorded.requests == []
    assert text.startswith("Argumen tidak valid: ")
    assert expected in text


@pytest.mark.parametrize(("name", "arguments"), VALID_CALLS)
async def test_unknown_extra_argument_is_refused(
    recorded: Recording, era: str, name: str, arguments: dict[str, Any]
) -> None:
    async with connect(server_for(recorded), era) as client:
        text = await call_error(client, name, {**arguments, "hapus_semua": True})
    assert recorded.requests == []
    assert text == "Argumen tidak valid: argumen tidak dikenal: hapus_semua"


async def test_unknown_argument_names_are_bounded_in_the_message(recorded: Recording, era: str) -> None:
    arguments = {f"{'z' * 500}{i}": 1 for i in range(20)}
    async with connect(server_for(recorded), era) as client:
        text = await call_error(client, "daftar_kamar", arguments)
    assert "argumen tidak dikenal" in text
    assert "+15 lagi" in text


@pytest.mark.parametrize(
    ("name", "arguments", "missing"),
    [
        ("detail_anak", {}, ["id_anak"]),
        ("absensi_harian", {"kelas": "7A"}, ["tanggal"]),
        ("rekap_absensi", {"dari": "2026-10-01"}, ["sampai"]),
        ("rekap_absensi", {}, ["dari", "sampai"]),
    ],
)
async def test_missing_required_argument_is_named(
    recorded: Recording, era: str, name: str, arguments: dict[str, Any], missing: list[str]
) -> None:
    async with connect(server_for(recorded), era) as client:
        text = await call_error(client, name, arguments)
    assert recorded.requests == []
    for field in missing:
        assert f"{field}: wajib diisi" in text


# --- the data service fails -----------------------------------------------------------------------------------


async def test_service_down_is_unreachable_error_for_every_tool(era: str) -> None:
    url = closed_port_url()
    server = build_server(ServerSettings(api_url=url, api_token=TOKEN, api_timeout=5))
    async with connect(server, era) as client:
        texts = [await call_error(client, name, arguments) for name, arguments in VALID_CALLS]
    for text in texts:
        assert text.startswith("Layanan data asrama tidak dapat dihubungi")
        assert "ASRAMA_API_URL" in text
        for internal in ("127.0.0.1", url.rsplit(":", 1)[1], "Errno", "Connect", "refused"):
            assert internal not in text


async def test_slow_service_is_timeout_error_for_every_tool(era: str) -> None:
    async with sleeping_upstream(delay=10) as url:
        server = build_server(ServerSettings(api_url=url, api_token=TOKEN, api_timeout=0.2))
        started = time.monotonic()
        async with connect(server, era) as client:
            texts = [await call_error(client, name, arguments) for name, arguments in VALID_CALLS]
        elapsed = time.monotonic() - started
    assert elapsed < 5
    for text in texts:
        assert "tidak menjawab dalam batas waktu" in text
        assert "Timeout" not in text


@pytest.mark.parametrize("token", ["token-salah-XYZ987", None])
async def test_refused_token_tells_to_check_asrama_api_token_without_showing_it(
    service_app: FastAPI, era: str, token: str | None
) -> None:
    async with connect(server_for(service_app, token=token), era) as client:
        texts = [await call_error(client, name, arguments) for name, arguments in VALID_CALLS]
    for text in texts:
        assert "ASRAMA_API_TOKEN" in text
        assert "HTTP 401" in text
        assert "XYZ987" not in text
        assert TOKEN not in text
        assert "Token tidak valid" not in text  # the service's own detail


SECRET_BODY = json.dumps(
    {"detail": "psycopg.OperationalError: password=HUNTER2-RAHASIA host=db.internal", "trace": "Traceback (most"}
).encode()


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (500, "Layanan data asrama sedang bermasalah"),
        (502, "Layanan data asrama sedang bermasalah"),
        (503, "Layanan data asrama sedang bermasalah"),
        (400, "Layanan data asrama menolak permintaan ini"),
        (422, "Layanan data asrama menolak permintaan ini"),
        (403, "ASRAMA_API_TOKEN"),
    ],
)
async def test_service_error_status_gives_our_message_never_its_body(era: str, status: int, expected: str) -> None:
    async with connect(server_for(answering(status, SECRET_BODY)), era) as client:
        results = [await client.call_tool(name, arguments) for name, arguments in VALID_CALLS]
    for result in results:
        assert result.is_error
        text = result.content[0].text
        assert text.startswith(expected) or expected in text
        assert f"(HTTP {status})" in text
        dumped = result.model_dump_json()
        for leak in ("HUNTER2", "psycopg", "db.internal", "Traceback"):
            assert leak not in dumped


async def test_service_404_gives_each_tool_its_own_advice(era: str) -> None:
    async with connect(server_for(answering(404, SECRET_BODY)), era) as client:
        texts = {name: await call_error(client, name, arguments) for name, arguments in VALID_CALLS}
    assert "cari_anak" in texts["detail_anak"]
    assert "tidak menyediakan rekap absensi" in texts["rekap_absensi"]
    assert "absensi_harian" in texts["rekap_absensi"]
    for name in ("cari_anak", "daftar_kamar", "absensi_harian"):
        assert texts[name] == "Data tidak ditemukan di layanan data asrama."
    assert not any("HUNTER2" in t for t in texts.values())


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b'{"total": 3, "data": [ SECRET-UNPARSEABLE', b"application/json"),
        (b"<html><body>SECRET-UNPARSEABLE proxy error</body></html>", b"text/html"),
        (b"", b"application/json"),
        (b'["SECRET-UNPARSEABLE"]', b"application/json"),
        (b'{"items": [], "note": "SECRET-UNPARSEABLE"}', b"application/json"),
        (b'{"total": "SECRET-UNPARSEABLE", "data": {}}', b"application/json"),
    ],
)
async def test_malformed_or_wrong_shape_answer_is_a_contract_error(era: str, body: bytes, content_type: bytes) -> None:
    async with connect(server_for(answering(200, body, content_type)), era) as client:
        results = [await client.call_tool(name, arguments) for name, arguments in VALID_CALLS]
    for result in results:
        assert result.is_error
        assert result.content[0].text.startswith("Jawaban layanan data asrama tidak sesuai format")
        dumped = result.model_dump_json()
        assert "SECRET" not in dumped
        assert "validation" not in dumped


async def test_redirect_is_not_followed(era: str) -> None:
    upstream = Recording(answering(302, b"", headers={b"location": b"http://elsewhere.example/steal"}))
    async with connect(server_for(upstream), era) as client:
        text = await call_error(client, "daftar_kamar", {})
    assert upstream.paths == [b"/kamar"]
    assert "elsewhere" not in text
    assert "(HTTP 302)" in text
    assert "ASRAMA_API_URL" in text, "a redirect points the admin at the service URL, not the model at its arguments"


async def test_unexpected_exception_is_masked_and_logged(era: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="mcp_asrama")
    calls = VALID_CALLS + RECORD_CALLS
    async with connect(server_for(crashing("KeyError-like SECRET-BOOM at /srv/asrama/db.py")), era) as client:
        results = [await client.call_tool(name, arguments) for name, arguments in calls]
    for result in results:
        assert result.is_error
        assert result.content[0].text == INTERNAL_ERROR
        dumped = result.model_dump_json()
        for leak in ("SECRET-BOOM", "RuntimeError", "/srv/asrama", "Traceback", "Error executing tool"):
            assert leak not in dumped
    crashes = [r for r in caplog.records if r.name.startswith("mcp_asrama") and r.exc_info]
    assert len(crashes) == len(calls) == len(TOOLS) - 1  # all but kesehatan_anak (the office is not the clinic)
    assert all(isinstance(r.exc_info[1], RuntimeError) for r in crashes if r.exc_info)


async def test_filter_text_cannot_inject_query_parameters(recorded: Recording, era: str) -> None:
    hostile = "Al-Fatih 1&status=izin#x"
    async with connect(server_for(recorded), era) as client:
        body = await client.call_tool("cari_anak", {"kamar": hostile, "nama": "../anak/A001?"})
        day = await client.call_tool("absensi_harian", {"tanggal": "2026-10-06", "kelas": "7A&kamar=x"})
    assert not body.is_error and not day.is_error
    (anak_path, anak_query), (absensi_path, absensi_query) = recorded.requests
    assert (anak_path, absensi_path) == (b"/anak", b"/absensi")
    assert parse_qs(anak_query.decode()) == {"kamar": [hostile], "nama": ["../anak/A001?"], "limit": ["20"]}
    expected = {"tanggal": ["2026-10-06"], "kelas": ["7A&kamar=x"], "semua_anak": ["true"], "ringkas": ["true"]}
    expected["limit"] = [str(LISTED)]  # the office's day is counted by the service (issue 24, item 3)
    assert parse_qs(absensi_query.decode()) == expected
