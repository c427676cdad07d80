"""Every disclosure is attributed: the student a successful call names, and each student of a small aggregate.

Tutorial data (see tests/server/conftest.py): A001 (7A, Al-Fatih 1) hadir on 2026-10-06 and 10-07, sakit on 10-08;
A002 (8B, Al-Fatih 1) hadir on 10-06, then absent; A003 (7A, Aisyah 2) izin on 10-06 and 10-07, hadir on 10-08.
"""

import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError

from mcp_asrama import cli
from mcp_asrama.server.features.common import READ_ONLY
from mcp_asrama.server.guard import audit
from tests.conftest import insert_rows
from tests.server.conftest import make_service, server_for
from tests.server.support import call_ok

pytestmark = pytest.mark.anyio


def audited(app: FastAPI, path: Path, scope: list[str] | None = None) -> Client:
    return Client(server_for(app, audit_log=path, stdio_scope=scope), mode="2026-07-28", cache=None)


def disclosures(path: Path) -> list[tuple[str, str, list[str]]]:
    """(target, outcome, disclosed) of every line that read data."""
    lines = [json.loads(line) for line in path.read_bytes().splitlines()]
    return [(e["target"], e["outcome"], e["disclosed"]) for e in lines if e["method"] != "tools/list"]


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "audit.jsonl"


async def test_rekap_of_one_child_without_absence_discloses_that_child(
    service_app: FastAPI, log_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with audited(service_app, log_path) as client:
        present = await call_ok(
            client, "rekap_absensi", {"dari": "2026-10-06", "sampai": "2026-10-07", "id_anak": "A001"}
        )
        assert (present["jumlah_anak"], present["paling_sering_tidak_hadir"]) == (1, [])  # no id in the answer
        no_records = {"dari": "2026-11-02", "sampai": "2026-11-06", "id_anak": "A001"}
        assert (await call_ok(client, "rekap_absensi", no_records))["jumlah_anak"] == 0

    assert disclosures(log_path) == [("rekap_absensi", "ok", ["A001"]), ("rekap_absensi", "ok", ["A001"])]
    assert cli.main(["audit", "who-saw", "A001", str(log_path)]) == 0
    saw = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(e["seq"], e["target"]) for e in saw] == [(1, "rekap_absensi"), (2, "rekap_absensi")]


async def test_an_aggregate_over_fewer_than_five_visible_students_discloses_each_of_them(
    service_app: FastAPI, log_path: Path
) -> None:
    async with audited(service_app, log_path) as client:
        day = await call_ok(client, "absensi_harian", {"tanggal": "2026-10-06", "kamar": "Al-Fatih 1"})
        assert (day["jumlah_anak"], day["tidak_hadir"]) == (2, [])  # both present: no id in the answer
        await call_ok(client, "rekap_absensi", {"dari": "2026-10-06", "sampai": "2026-10-07", "kamar": "Al-Fatih 1"})
        await client.read_resource("asrama://absensi/2026-10-08")
    async with audited(service_app, log_path, scope=["kamar:Aisyah 2"]) as musyrif:
        assert (await call_ok(musyrif, "absensi_harian", {"tanggal": "2026-10-08"}))["tidak_hadir"] == []
        rekap = await call_ok(musyrif, "rekap_absensi", {"dari": "2026-10-08", "sampai": "2026-10-08"})
        assert (rekap["jumlah_anak"], rekap["paling_sering_tidak_hadir"]) == (1, [])

    assert disclosures(log_path) == [
        ("absensi_harian", "ok", ["A001", "A002"]),
        ("rekap_absensi", "ok", ["A001", "A002"]),
        ("asrama://absensi/2026-10-08", "ok", ["A001", "A002", "A003"]),
        ("absensi_harian", "ok", ["A003"]),  # the musyrif sees one student: the counts are his
        ("rekap_absensi", "ok", ["A003"]),
    ]


# Two rooms: six students in Umar 1 (only U01 absent on 2026-10-06), two in Umar 2 (both present).
UMAR = [{"nama": f"Umar {n}", "gedung": "Putra", "kapasitas": 8, "musyrif": f"Ust. Umar {n}"} for n in (1, 2)]
STUDENTS = [
    {"id": f"U0{i}", "nama": f"Santri Umar {i}", "kelas": "9A", "kamar": "Umar 1" if i <= 6 else "Umar 2"}
    for i in range(1, 9)
]
DAY = [
    {"tanggal": date(2026, 10, 6), "id_anak": s["id"], "status": "alpa" if s["id"] == "U01" else "hadir"}
    for s in STUDENTS
]


@pytest.fixture
def umar_app(db_url: str) -> Iterator[FastAPI]:
    insert_rows(db_url, kamar=UMAR, anak=STUDENTS, absensi=DAY)
    app = make_service(db_url)
    yield app
    app.state.engine.dispose()


async def test_an_aggregate_over_five_or_more_discloses_only_the_students_it_shows(
    umar_app: FastAPI, log_path: Path
) -> None:
    async with audited(umar_app, log_path) as client:
        day = await call_ok(client, "absensi_harian", {"tanggal": "2026-10-06", "kamar": "Umar 1"})
        assert day["jumlah_anak"] == 6
        rekap = await call_ok(client, "rekap_absensi", {"dari": "2026-10-06", "sampai": "2026-10-06"})
        assert rekap["jumlah_anak"] == 8
        await client.read_resource("asrama://absensi/2026-10-06")
        await call_ok(client, "absensi_harian", {"tanggal": "2026-10-06", "kamar": "Umar 2"})  # two: both

    assert disclosures(log_path) == [
        ("absensi_harian", "ok", ["U01"]),
        ("rekap_absensi", "ok", ["U01"]),
        ("asrama://absensi/2026-10-06", "ok", ["U01"]),
        ("absensi_harian", "ok", ["U07", "U08"]),
    ]


async def test_a_failed_call_discloses_nothing(service_app: FastAPI, log_path: Path) -> None:
    async with audited(service_app, log_path) as client:
        assert (await client.call_tool("detail_anak", {"id_anak": "X999"})).is_error
        unknown = await client.call_tool(
            "rekap_absensi", {"dari": "2026-10-06", "sampai": "2026-10-09", "id_anak": "X9"}
        )
        assert unknown.is_error and "tidak ditemukan" in unknown.content[0].text
        with pytest.raises(MCPError):
            await client.read_resource("asrama://anak/X999")
    async with audited(service_app, log_path, scope=["kamar:Aisyah 2"]) as musyrif:
        hidden = await musyrif.call_tool(
            "rekap_absensi", {"dari": "2026-10-06", "sampai": "2026-10-09", "id_anak": "A001"}
        )
        assert hidden.is_error  # another room's student: exactly like an unknown id

    assert disclosures(log_path) == [
        ("detail_anak", "tool_error", []),
        ("rekap_absensi", "tool_error", []),
        ("asrama://anak/X999", "error", []),
        ("rekap_absensi", "tool_error", []),
    ]


async def test_one_student_named_by_a_successful_call_is_disclosed(service_app: FastAPI, log_path: Path) -> None:
    async with audited(service_app, log_path) as client:
        await call_ok(client, "detail_anak", {"id_anak": "A002"})
        await client.read_resource("asrama://anak/A003")
        await call_ok(client, "rekap_absensi", {"dari": "2026-10-06", "sampai": "2026-10-09", "id_anak": "A002"})

    assert disclosures(log_path) == [
        ("detail_anak", "ok", ["A002"]),
        ("asrama://anak/A003", "ok", ["A003"]),
        ("rekap_absensi", "ok", ["A002"]),
    ]


async def test_prompts_carry_no_data_and_disclose_no_one(service_app: FastAPI, log_path: Path) -> None:
    """The report templates name tools to call; the calls that follow are what disclose (and are audited)."""
    async with audited(service_app, log_path) as client:
        await client.get_prompt("laporan_kamar", {"nama_kamar": "Al-Fatih 1"})
        await client.get_prompt("laporan_harian", {"tanggal": "2026-10-06", "kelas": "8B"})
        await client.get_prompt("rekap_wali_kelas", {"kelas": "8B", "dari": "2026-10-01", "sampai": "2026-10-31"})

    assert [disclosed for _, _, disclosed in disclosures(log_path)] == [[], [], []]


async def test_a_tool_declares_whom_it_disclosed_even_from_a_worker_thread(
    service_app: FastAPI, log_path: Path
) -> None:
    """`audit.disclose` reaches the request's line from a sync tool (the SDK runs it in a thread), and only a
    successful answer discloses."""
    server = server_for(service_app, audit_log=log_path)

    def ringkasan_rahasia(gagal: bool = False) -> dict[str, Any]:
        audit.disclose(["Z001", "Z002"])
        if gagal:
            raise ToolError("gagal")
        return {"jumlah": 2}

    server.tool(annotations=READ_ONLY)(ringkasan_rahasia)  # unannotated, it would count as a write tool
    async with Client(server, mode="2026-07-28", cache=None) as client:
        assert not (await client.call_tool("ringkasan_rahasia", {})).is_error
        assert (await client.call_tool("ringkasan_rahasia", {"gagal": True})).is_error
    audit.disclose(["Z003"])  # outside a request: nothing to attribute, no error

    assert disclosures(log_path) == [
        ("ringkasan_rahasia", "ok", ["Z001", "Z002"]),
        ("ringkasan_rahasia", "tool_error", []),
    ]
