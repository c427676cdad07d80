"""Role-scoped data: a principal sees only the students of the rooms and classes in its scope, everywhere.

Tutorial data: A001 Ahmad Fauzi (7A, Al-Fatih 1), A002 Budi Santoso (8B, Al-Fatih 1), A003 Citra Lestari
(7A, Aisyah 2). The scope is the local operator's (`ASRAMA_STDIO_SCOPE`); tokens carry the same list in a claim.
"""

import json
import logging
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import unquote_plus

import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_asrama.server.guard import access
from mcp_asrama.server.guard.access import Akses
from tests.server.conftest import connect, server_for
from tests.server.support import (
    RESOURCE_URIS,
    VALID_CALLS,
    Recording,
    call_error,
    call_ok,
    text_of,
    tutorial_upstream,
)

pytestmark = pytest.mark.anyio

MUSYRIF_AISYAH = ["kamar:Aisyah 2"]
WALI_8B = ["kelas:8B"]


def scoped(app: FastAPI, era: str, scope: list[str]) -> Any:
    return connect(server_for(app, stdio_scope=scope), era)


@pytest.fixture
async def musyrif(service_app: FastAPI, era: str) -> AsyncIterator[Client]:
    async with scoped(service_app, era, MUSYRIF_AISYAH) as client:
        yield client


async def test_search_lists_and_counts_only_the_students_in_scope(musyrif: Client) -> None:
    body = await call_ok(musyrif, "cari_anak", {})
    assert (body["total"], [a["id"] for a in body["data"]]) == (1, ["A003"])
    assert (await call_ok(musyrif, "cari_anak", {"kelas": "7A"}))["total"] == 1
    outside = await call_ok(musyrif, "cari_anak", {"kamar": "Al-Fatih 1"})
    assert (outside["total"], outside["data"]) == (0, [])
    assert (await call_ok(musyrif, "cari_anak", {"nama": "ahmad"}))["total"] == 0


async def test_detail_of_a_student_outside_scope_is_indistinguishable_from_an_unknown_id(musyrif: Client) -> None:
    hidden = await call_error(musyrif, "detail_anak", {"id_anak": "A001"})
    unknown = await call_error(musyrif, "detail_anak", {"id_anak": "X001"})
    assert hidden.replace("A001", "X") == unknown.replace("X001", "X")
    assert (await call_ok(musyrif, "detail_anak", {"id_anak": "A003"}))["nama"] == "Citra Lestari"


async def test_rooms_outside_scope_are_not_listed(service_app: FastAPI, era: str) -> None:
    async with scoped(service_app, era, MUSYRIF_AISYAH) as client:
        rooms = await call_ok(client, "daftar_kamar", {})
        assert [(r["nama"], r["terisi"]) for r in rooms["data"]] == [("Aisyah 2", 1)]
    async with scoped(service_app, era, WALI_8B) as client:
        assert (await call_ok(client, "daftar_kamar", {}))["data"] == []


async def test_attendance_counts_only_visible_students(service_app: FastAPI, era: str) -> None:
    async with scoped(service_app, era, ["kamar:Al-Fatih 1"]) as client:
        day = await call_ok(client, "absensi_harian", {"tanggal": "2026-10-06"})
        assert day["jumlah_anak"] == 2
        assert day["per_status"] == {"hadir": 2, "izin": 0, "sakit": 0, "alpa": 0, "belum_dicatat": 0}
        assert day["tidak_hadir"] == []
    async with scoped(service_app, era, ["kelas:7A"]) as client:
        day = await call_ok(client, "absensi_harian", {"tanggal": "2026-10-06"})
        assert (day["jumlah_anak"], day["per_status"]["izin"]) == (2, 1)
        assert [r["id_anak"] for r in day["tidak_hadir"]] == ["A003"]


async def test_summary_covers_only_visible_students(service_app: FastAPI, era: str) -> None:
    async with scoped(service_app, era, WALI_8B) as client:
        rekap = await call_ok(client, "rekap_absensi", {"dari": "2026-10-01", "sampai": "2026-10-31"})
        assert rekap["jumlah_anak"] == 1
        assert {r["id_anak"] for r in rekap["paling_sering_tidak_hadir"]} <= {"A002"}
        everyone = sum(rekap["total"].values())
    async with connect(server_for(service_app), era) as client:
        full = await call_ok(client, "rekap_absensi", {"dari": "2026-10-01", "sampai": "2026-10-31"})
        assert full["jumlah_anak"] == 3 and sum(full["total"].values()) > everyone


async def test_a_room_and_a_class_together_see_each_student_once(service_app: FastAPI, era: str) -> None:
    async with scoped(service_app, era, ["kamar:Al-Fatih 1", "kelas:7A"]) as client:
        body = await call_ok(client, "cari_anak", {})
        assert [a["id"] for a in body["data"]] == ["A001", "A002", "A003"]
        assert body["total"] == 3
        page = await call_ok(client, "cari_anak", {"limit": 1, "offset": 1})
        assert ([a["id"] for a in page["data"]], page["next_offset"]) == (["A002"], 2)
        day = await call_ok(client, "absensi_harian", {"tanggal": "2026-10-06"})
        assert day["jumlah_anak"] == 3


async def test_no_scope_sees_nothing_and_is_told_why(service_app: FastAPI, era: str) -> None:
    async with scoped(service_app, era, []) as client:
        body = await call_ok(client, "cari_anak", {})
        assert (body["total"], body["data"]) == (0, [])
        assert "wewenang" in body["catatan"]
        assert (await call_ok(client, "daftar_kamar", {}))["data"] == []
        assert (await call_ok(client, "absensi_harian", {"tanggal": "2026-10-06"}))["jumlah_anak"] == 0
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("laporan_harian", {"tanggal": "2026-10-06"})
        assert caught.value.error.code == -32602


async def test_resources_follow_the_scope(musyrif: Client) -> None:
    rooms = json.loads((await musyrif.read_resource("asrama://kamar")).contents[0].text)
    assert [r["nama"] for r in rooms["data"]] == ["Aisyah 2"]
    with pytest.raises(MCPError) as caught:
        await musyrif.read_resource("asrama://anak/A001")
    assert caught.value.error.code == -32602 and "Ahmad" not in caught.value.error.message
    day = json.loads((await musyrif.read_resource("asrama://absensi/2026-10-06")).contents[0].text)
    assert day["jumlah_anak"] == 1


async def test_prompts_refuse_rooms_and_classes_outside_scope(musyrif: Client) -> None:
    rendered = await musyrif.get_prompt("laporan_kamar", {"nama_kamar": "aisyah 2"})
    assert "aisyah 2" in rendered.messages[0].content.text.lower()
    for name, arguments in [
        ("laporan_kamar", {"nama_kamar": "Al-Fatih 1"}),
        ("rekap_wali_kelas", {"kelas": "7A", "dari": "2026-10-01", "sampai": "2026-10-31"}),
    ]:
        with pytest.raises(MCPError) as caught:
            await musyrif.get_prompt(name, arguments)
        assert caught.value.error.code == -32602 and "wewenang" in caught.value.error.message
    # His rooms' part of any class is his to report on.
    assert (await musyrif.get_prompt("laporan_harian", {"tanggal": "2026-10-06", "kelas": "7A"})).messages


async def test_nothing_of_hidden_students_reaches_any_output(musyrif: Client) -> None:
    # Every read of everything, asking only for what the caller may name itself (its answer may not add more).
    calls = [(name, {"id_anak": "A003"} if name == "detail_anak" else args) for name, args in VALID_CALLS]
    outputs = [text_of(await musyrif.call_tool(name, args)) for name, args in calls]
    outputs += [text_of(await musyrif.call_tool("cari_anak", {"nama": n})) for n in ("Ahmad", "Budi", "a")]
    for uri in [u.replace("A001", "A003") for u in RESOURCE_URIS]:
        try:
            outputs.append((await musyrif.read_resource(uri)).contents[0].text)
        except MCPError as exc:
            outputs.append(exc.error.message)
    everything = "\n".join(outputs)
    for hidden in ("A001", "A002", "Ahmad", "Budi", "Hasan", "Sari", "8B"):
        assert hidden not in everything, hidden
    assert "Citra Lestari" in everything


async def test_scoped_attendance_fails_closed_when_the_service_omits_kelas_and_kamar(era: str) -> None:
    async with scoped(tutorial_upstream(), era, MUSYRIF_AISYAH) as client:
        text = await call_error(client, "absensi_harian", {"tanggal": "2026-10-06"})
        assert "wewenang" in text


async def test_a_one_room_search_of_a_tutorial_service_is_its_own_page_in_one_request(era: str) -> None:
    # 150 more students in Al-Fatih 1: the room's filter is the scope, so the service cuts the page itself.
    extra = [{"id": f"T{i:03d}", "nama": f"Santri {i:03d}", "kelas": "9A", "kamar": "Al-Fatih 1"} for i in range(150)]
    upstream = Recording(tutorial_upstream(extra))
    async with scoped(upstream, era, ["kamar:Al-Fatih 1"]) as client:
        body = await call_ok(client, "cari_anak", {})
    assert body["total"] == 152
    assert [a["id"] for a in body["data"]][:3] == ["A001", "A002", "T000"] and len(body["data"]) == 20
    assert body["next_offset"] == 20
    assert [unquote_plus(q.decode()) for q in upstream.queries] == ["kamar=Al-Fatih 1&limit=20"]


async def test_a_two_sided_search_the_service_cannot_page_through_is_an_error_not_a_short_count(era: str) -> None:
    # A room and a class: each side's first 120 rows are needed, and the tutorial's /anak ignores offset.
    extra = [{"id": f"T{i:03d}", "nama": f"Santri {i:03d}", "kelas": "9A", "kamar": "Al-Fatih 1"} for i in range(150)]
    async with scoped(tutorial_upstream(extra), era, ["kamar:Al-Fatih 1", "kelas:7A"]) as client:
        assert (await call_ok(client, "cari_anak", {}))["total"] == 153  # first pages: one request per side each
        text = await call_error(client, "cari_anak", {"offset": 100})
    assert "Terlalu banyak anak" in text and "persempit" in text


@pytest.mark.parametrize(
    ("claim", "semua", "kamar", "kelas"),
    [
        (["all"], True, set(), set()),
        (["kamar:Al-Fatih 1", "kelas:7A"], False, {"Al-Fatih 1"}, {"7A"}),
        ("kamar:Al-Fatih 1,kelas:7A", False, {"Al-Fatih 1"}, {"7A"}),
        ("all", True, set(), set()),
        (["kamar:  Al-Fatih   1 "], False, {"Al-Fatih 1"}, set()),
        ("kamar:Al-Fatih 1", False, {"Al-Fatih 1"}, set()),
        (" kamar:Al-Fatih 1 , kelas:7A ", False, {"Al-Fatih 1"}, {"7A"}),
        ("kamar:Aula all", False, {"Aula all"}, set()),
        ("kelas:7A all", False, set(), {"7A all"}),
        (["kamar:Aula all"], False, {"Aula all"}, set()),
        ("all kamar:Aula", False, set(), set()),
        (["ALL", "All", "all:", "all:x", "semua"], False, set(), set()),
        (["KAMAR:Al-Fatih 1", "Kelas:7A"], False, set(), set()),
        (["kamar:", "kelas", "guru:x", 7, None], False, set(), set()),
        (None, False, set(), set()),
        ({"kamar": "x"}, False, set(), set()),
    ],
)
def test_scope_claims_are_parsed_strictly(claim: object, semua: bool, kamar: set[str], kelas: set[str]) -> None:
    akses = Akses.parse(claim)
    assert (akses.semua, set(akses.kamar), set(akses.kelas)) == (semua, kamar, kelas)


def test_an_ignored_scope_entry_is_logged_once_by_reason_without_its_value(
    caplog: pytest.LogCaptureFixture,
) -> None:
    access._reported.clear()
    with caplog.at_level(logging.WARNING, logger="mcp_asrama.server.guard.access"):
        for _ in range(3):
            Akses.parse(["guru:Prayoga Lestari", "kamar:Aisyah 2"])
    warnings = [r for r in caplog.records if r.name == "mcp_asrama.server.guard.access"]
    assert len(warnings) == 1
    assert "unknown kind" in warnings[0].__dict__["reason"]
    assert "Prayoga" not in caplog.text and "guru" not in caplog.text


def test_scope_matching_ignores_case_and_spacing() -> None:
    akses = Akses.parse(["kamar:Al-Fatih 1"])
    assert akses.melihat(kelas="9C", kamar="al-fatih  1")
    assert not akses.melihat(kelas="9C", kamar="Al-Fatih 10")
    assert not akses.melihat(kelas=None, kamar=None)
    assert Akses.parse([]).kosong and not Akses.parse(["all"]).kosong


@pytest.mark.parametrize(
    ("claim", "semua", "kelas", "peran"),
    [
        (["all", "peran:kesehatan"], True, set(), {"kesehatan"}),
        (["kelas:7A", "peran:bk"], False, {"7A"}, {"bk"}),
        ("peran:bk, kelas:7A", False, {"7A"}, {"bk"}),
        (["peran:bk", "peran:kesehatan"], False, set(), {"bk", "kesehatan"}),
        (["peran:dokter", "peran:", "peran:Kesehatan", "PERAN:bk", "peran: bk", "peran:bk:x"], False, set(), set()),
    ],
)
def test_roles_are_parsed_strictly_next_to_the_scope(
    claim: object, semua: bool, kelas: set[str], peran: set[str]
) -> None:
    akses = Akses.parse(claim)
    assert (akses.semua, set(akses.kelas), set(akses.peran)) == (semua, kelas, peran)
    assert akses.klinik == ("kesehatan" in peran) and akses.bk == ("bk" in peran)


def test_a_role_alone_sees_no_student_but_bk_sees_every_violation() -> None:
    bk = Akses.parse(["peran:bk"])
    assert bk.kosong and not bk.melihat(kelas="7A", kamar="Aisyah 2")
    assert bk.untuk_pelanggaran().semua and bk.untuk_pelanggaran().bk
    wali = Akses.parse(["kelas:7A"])
    assert wali.untuk_pelanggaran() == wali
    assert not Akses.parse(["kelas:7A", "peran:kesehatan"]).untuk_pelanggaran().semua


def test_an_unknown_role_is_logged_once_without_its_value(caplog: pytest.LogCaptureFixture) -> None:
    access._reported.clear()
    with caplog.at_level(logging.WARNING, logger="mcp_asrama.server.guard.access"):
        for _ in range(3):
            assert Akses.parse(["peran:dokter-gigi-rahasia", "kamar:Aisyah 2"]).peran == frozenset()
    warnings = [r for r in caplog.records if r.name == "mcp_asrama.server.guard.access"]
    assert len(warnings) == 1 and "unknown role" in warnings[0].__dict__["reason"]
    assert "dokter" not in caplog.text
