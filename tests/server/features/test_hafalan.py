"""Hafalan: one student's progress and deposits, progress per class or room, both following the scope; a deposit's
surah by number or name and its ayat checked against the surah's length before anyone is asked; the examiner's
name never shown. Against the leaky upstream (every student deposited Al-Mulk 1–10, 85)."""

import json
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitResult

from tests.server.conftest import connect, server_for
from tests.server.support import call_error, call_ok, leaky_upstream
from tests.server.support_records import CLINIC, RECORD_EXTRAS

pytestmark = pytest.mark.anyio

SEES = [
    (["kamar:Al-Fatih 1"], ["A001", "A002"]),
    (["kelas:7A"], ["A001", "A003"]),
    (["peran:bk"], []),
    (CLINIC, ["A001", "A002", "A003"]),
    (["all"], ["A001", "A002", "A003"]),
]


@pytest.mark.parametrize(("scope", "seen"), SEES)
async def test_progress_and_deposits_follow_the_scope(era: str, scope: list[str], seen: list[str]) -> None:
    async with connect(server_for(leaky_upstream(), stdio_scope=scope), era) as client:
        progres = await call_ok(client, "progres_hafalan", {})
        assert sorted(r["id_anak"] for r in progres["data"]) == seen and progres["jumlah_anak"] == len(seen)
        if seen:
            assert progres["rata_rata"] == {"ayat": 10, "juz": 0.04}
        for id_anak in ("A001", "A002", "A003"):
            if id_anak in seen:
                body = await call_ok(client, "hafalan_anak", {"id_anak": id_anak})
                assert (body["ayat"], body["juz"], body["ayat_per_pekan"], body["jumlah_setoran"]) == (10, 0.04, 2.5, 1)
                deposit = body["setoran"][0]
                assert (deposit["nama_surah"], deposit["juz"], deposit["nilai"]) == ("Al-Mulk", [29], 85)
                resource = await client.read_resource(f"asrama://anak/{id_anak}/hafalan")
                assert json.loads(resource.contents[0].text) == body
                assert not any(v in resource.contents[0].text for v in RECORD_EXTRAS.values())
            else:
                assert "tidak ditemukan" in await call_error(client, "hafalan_anak", {"id_anak": id_anak})
                with pytest.raises(MCPError):
                    await client.read_resource(f"asrama://anak/{id_anak}/hafalan")


async def test_progress_of_a_room_within_a_class_scope(era: str) -> None:
    async with connect(server_for(leaky_upstream(), stdio_scope=["kelas:7A"]), era) as client:
        body = await call_ok(client, "progres_hafalan", {"kamar": "Aisyah 2"})
    assert [r["id_anak"] for r in body["data"]] == ["A003"]


def person(answers: list[str]) -> Any:
    async def answer(_ctx: Any, params: Any) -> ElicitResult:
        answers.append(params.message)
        return ElicitResult(action="cancel")

    return answer


@pytest.mark.parametrize(
    ("surah", "mulai", "selesai", "problem"),
    [
        ("Al-Baqarah", 280, 286, None),
        ("al mulk", 25, 31, "Argumen tidak valid: Al-Mulk hanya punya 30 ayat."),
        ("Al-Baqarah", 280, 287, "ayat_selesai: paling besar 286"),
        (2, 10, 5, "melewati ayat selesai"),
        ("Surat Entah", 1, 2, "Surah tidak dikenal"),
        (115, 1, 2, "Surah tidak dikenal"),
    ],
)
async def test_a_deposit_is_checked_against_the_surah(
    era: str, surah: Any, mulai: int, selesai: int, problem: str | None
) -> None:
    asked: list[str] = []
    server = server_for(leaky_upstream(), writes=True)
    arguments = {"id_anak": "A001", "tanggal": "2026-10-06", "jenis": "ziyadah", "surah": surah,
                 "ayat_mulai": mulai, "ayat_selesai": selesai}  # fmt: skip
    async with Client(server, mode=era, cache=None, elicitation_callback=person(asked)) as client:
        if problem is None:
            assert (await call_ok(client, "catat_setoran_hafalan", arguments))["hasil"] == "dibatalkan"
        else:
            assert problem in await call_error(client, "catat_setoran_hafalan", arguments)
    if problem is None:
        assert asked == [
            "Catat setoran ziyadah Ahmad Fauzi (A001) pada 2026-10-06: Al-Baqarah (2) ayat 280–286 (7 ayat, juz 3).\n"
            "Setujui untuk mencatat?"
        ]
    else:
        assert asked == []


async def test_a_surah_name_is_forgiving_and_the_examiner_is_asked_about(era: str) -> None:
    asked: list[str] = []
    server = server_for(leaky_upstream(), writes=True, stdio_scope=["kamar:Al-Fatih 1"])
    arguments = {"id_anak": "A002", "tanggal": "2026-10-06", "jenis": "murajaah", "surah": "yaasiin",
                 "ayat_mulai": 1, "ayat_selesai": 12, "nilai": 90, "penguji": "Ust. Hadi"}  # fmt: skip
    async with Client(server, mode=era, cache=None, elicitation_callback=person(asked)) as client:
        await call_ok(client, "catat_setoran_hafalan", arguments)
        outside = await call_error(client, "catat_setoran_hafalan", {**arguments, "id_anak": "A003"})
    assert asked == [
        "Catat setoran murajaah Budi Santoso (A002) pada 2026-10-06: Yasin (36) ayat 1–12 (12 ayat, juz 22), "
        "nilai 90.\n"
        "Penguji: Ust. Hadi\nSetujui untuk mencatat?"
    ]
    assert "tidak ditemukan" in outside
