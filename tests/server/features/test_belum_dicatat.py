"""Attendance never silently drops a child: a student without a record that day counts as `belum_dicatat`.

The reported case (issue 8): four students imported into 7A after the day's attendance was taken. On 2026-10-06,
7A holds A001 (hadir), A003 (izin) and the four new ones without a record: N001 and N003 in Aisyah 2, N002 in
Al-Fatih 1, N004 in no room (a day student). N003's own status is `pulang`: she still expects a record.
"""

import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from mcp import Client

from mcp_asrama.privacy import RESULT_BUDGET
from tests.conftest import CITRA_ON_THE_6TH as CITRA
from tests.conftest import TUTORIAL_ABSENSI, TUTORIAL_ANAK, TUTORIAL_KAMAR, insert_rows
from tests.server.conftest import MORE_ABSENSI, connect, make_service, server_for
from tests.server.support import Recording, call_ok, text_of

pytestmark = pytest.mark.anyio

HARI = "2026-10-06"
IMPORTED = [
    {"id": "N001", "nama": "Dewi Anggraini", "kelas": "7A", "kamar": "Aisyah 2", "status": "aktif"},
    {"id": "N002", "nama": "Eko Prasetyo", "kelas": "7A", "kamar": "Al-Fatih 1", "status": "aktif"},
    {"id": "N003", "nama": "Fitri Handayani", "kelas": "7A", "kamar": "Aisyah 2", "status": "pulang"},
    {"id": "N004", "nama": "Gilang Ramadhan", "kelas": "7A", "kamar": None, "status": "aktif"},
]


def unrecorded(*ids: str) -> list[dict[str, Any]]:
    """The rows the model reads for imported students without a record (no room: no `kamar`)."""
    rows = [{"id_anak": a["id"], "status": "belum_dicatat", "nama": a["nama"], "kelas": a["kelas"]} for a in IMPORTED]
    for row, anak in zip(rows, IMPORTED, strict=True):
        if anak["kamar"]:
            row["kamar"] = anak["kamar"]
    return [r for r in rows if r["id_anak"] in ids]


@pytest.fixture
def imported_app(db_url: str) -> Iterator[FastAPI]:
    insert_rows(db_url, kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK + IMPORTED, absensi=TUTORIAL_ABSENSI + MORE_ABSENSI)
    app = make_service(db_url)
    yield app
    app.state.engine.dispose()


@pytest.fixture
async def school(imported_app: FastAPI, era: str) -> Any:
    async with connect(server_for(imported_app), era) as client:
        yield client


def total(per_status: dict[str, int]) -> int:
    return sum(per_status.values())


async def test_a_class_with_unrecorded_students_counts_them_and_agrees_with_cari_anak(school: Client) -> None:
    day = await call_ok(school, "absensi_harian", {"tanggal": HARI, "kelas": "7A"})
    found = await call_ok(school, "cari_anak", {"kelas": "7A"})
    assert day["jumlah_anak"] == found["total"] == total(day["per_status"]) == 6
    assert day["per_status"] == {"hadir": 1, "izin": 1, "sakit": 0, "alpa": 0, "belum_dicatat": 4}
    assert day["tidak_hadir"] == [CITRA, *unrecorded("N001", "N002", "N003", "N004")]
    assert "catatan" not in day


async def test_the_whole_school_counts_every_student(school: Client) -> None:
    day = await call_ok(school, "absensi_harian", {"tanggal": HARI})
    assert day["jumlah_anak"] == (await call_ok(school, "cari_anak", {}))["total"] == 7
    assert day["per_status"]["belum_dicatat"] == 4


@pytest.mark.parametrize(
    ("filters", "expected"), [({}, ["N001", "N002", "N003", "N004"]), ({"kamar": "Aisyah 2"}, ["N001", "N003"])]
)
async def test_status_belum_dicatat_lists_only_the_unrecorded_students(
    school: Client, filters: dict[str, str], expected: list[str]
) -> None:
    day = await call_ok(school, "absensi_harian", {"tanggal": HARI, "status": "belum_dicatat", **filters})
    assert day["tidak_hadir"] == unrecorded(*expected)
    assert day["per_status"]["belum_dicatat"] == len(expected)
    assert day["jumlah_anak"] == (await call_ok(school, "cari_anak", filters))["total"]


async def test_our_service_gives_the_unrecorded_students_in_the_same_single_request(
    imported_app: FastAPI, era: str
) -> None:
    upstream = Recording(imported_app)
    async with connect(server_for(upstream), era) as client:
        day = await call_ok(client, "absensi_harian", {"tanggal": HARI, "kelas": "7A"})
    assert day["per_status"]["belum_dicatat"] == 4
    assert upstream.paths == [b"/absensi"]


async def test_a_musyrif_sees_only_his_rooms_unrecorded_students(imported_app: FastAPI, era: str) -> None:
    async with connect(server_for(imported_app, stdio_scope=["kamar:Aisyah 2"]), era) as client:
        for filters in ({}, {"kelas": "7A"}):
            day = await call_ok(client, "absensi_harian", {"tanggal": HARI, **filters})  # its text is this JSON
            assert day["jumlah_anak"] == (await call_ok(client, "cari_anak", filters))["total"] == 3
            assert day["per_status"] == {"hadir": 0, "izin": 1, "sakit": 0, "alpa": 0, "belum_dicatat": 2}
            assert day["tidak_hadir"] == [CITRA, *unrecorded("N001", "N003")]
            for hidden in ("N002", "Eko", "N004", "Gilang", "A001", "A002"):
                assert hidden not in json.dumps(day), hidden


async def test_a_wali_kelas_sees_an_unrecorded_student_without_a_room(imported_app: FastAPI, era: str) -> None:
    async with connect(server_for(imported_app, stdio_scope=["kelas:7A"]), era) as client:
        day = await call_ok(client, "absensi_harian", {"tanggal": HARI})
    assert day["jumlah_anak"] == 6
    assert unrecorded("N004")[0] in day["tidak_hadir"]


async def test_the_resource_says_the_same_as_the_tool(school: Client) -> None:
    resource = json.loads((await school.read_resource(f"asrama://absensi/{HARI}")).contents[0].text)
    assert resource == await call_ok(school, "absensi_harian", {"tanggal": HARI})
    assert resource["per_status"]["belum_dicatat"] == 4
    assert [r["id_anak"] for r in resource["tidak_hadir"]] == ["A003", "N001", "N002", "N003", "N004"]


@pytest.mark.parametrize(
    ("name", "arguments"),
    [("laporan_harian", {"tanggal": HARI, "kelas": "7A"}), ("laporan_kamar", {"nama_kamar": "Aisyah 2"})],
)
async def test_daily_report_prompts_ask_for_the_unrecorded_students(
    school: Client, name: str, arguments: dict[str, str]
) -> None:
    text = (await school.get_prompt(name, arguments)).messages[0].content.text
    assert "absensi_harian(" in text
    assert "belum dicatat" in text and "belum_dicatat" in text


async def test_class_summary_prompt_asks_to_compare_with_the_class_list(school: Client) -> None:
    arguments = {"kelas": "7A", "dari": "2026-10-01", "sampai": "2026-10-31"}
    text = (await school.get_prompt("rekap_wali_kelas", arguments)).messages[0].content.text
    assert 'cari_anak(kelas="7A")' in text
    assert "jumlah_anak" in text and "belum pernah dicatat" in text
    assert 'status="belum_dicatat"' in text


def disclosed(path: Path) -> list[list[str]]:
    return [e["disclosed"] for e in map(json.loads, path.read_bytes().splitlines()) if e["method"] == "tools/call"]


async def test_unrecorded_students_are_attributed_in_the_audit(imported_app: FastAPI, tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    async with Client(server_for(imported_app, audit_log=log), mode="2026-07-28", cache=None) as client:
        await call_ok(client, "absensi_harian", {"tanggal": HARI, "kelas": "7A"})  # six: the listed ones
        await call_ok(client, "absensi_harian", {"tanggal": HARI, "kamar": "Al-Fatih 1", "status": "sakit"})
    assert disclosed(log) == [
        ["A003", "N001", "N002", "N003", "N004"],
        ["A001", "A002", "N002"],  # three, none listed: a small group, each of them
    ]


# --- a big class that has not been recorded yet -----------------------------------------------------------


@pytest.fixture
def unrecorded_app(db_url: str) -> Iterator[FastAPI]:
    """600 students with long names in 9A: the first 100 recorded alpa, the other 500 without a record."""
    anak = [
        {"id": f"S{i:04d}", "nama": f"Santri {i:04d} " + "Panjang" * 25, "kelas": "9A", "kamar": "Al-Fatih 1"}
        for i in range(600)
    ]
    absensi = [{"tanggal": date(2026, 10, 6), "id_anak": a["id"], "status": "alpa"} for a in anak[:100]]
    insert_rows(db_url, kamar=TUTORIAL_KAMAR, anak=anak, absensi=absensi)
    app = make_service(db_url)
    yield app
    app.state.engine.dispose()


@pytest.mark.parametrize("status", [None, "belum_dicatat"])
async def test_a_long_unrecorded_list_is_cut_to_the_budget_with_a_note(
    unrecorded_app: FastAPI, era: str, status: str | None
) -> None:
    arguments = {"tanggal": HARI, "kelas": "9A", **({"status": status} if status else {})}
    async with connect(server_for(unrecorded_app), era) as client:
        day = await call_ok(client, "absensi_harian", arguments)
        text = text_of(await client.call_tool("absensi_harian", arguments))
    assert len(text) <= RESULT_BUDGET + 1000
    assert day["jumlah_anak"] == 600
    assert day["per_status"] == {"hadir": 0, "izin": 0, "sakit": 0, "alpa": 100, "belum_dicatat": 500}
    listed = day["tidak_hadir"]
    assert 0 < len(listed) < (500 if status else 600)
    assert {r["status"] for r in listed} == {status or "alpa"}  # recorded absences come first
    assert f"{len(listed)} dari {500 if status else 600} anak" in day["catatan"]
    assert "belum_dicatat" in day["catatan"]
