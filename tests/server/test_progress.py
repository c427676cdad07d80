"""Progress notifications of long reads, through the SDK's in-memory client in both eras, against the real service.

A read that walks pages or rooms in scope, and every range rekap, reports one step per request to the data service
(counted here by recording what reaches the service): the values rise one by one and the last is n of n.
"""

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI

from tests.conftest import TUTORIAL_ANAK, insert_rows
from tests.server.conftest import connect, make_service, server_for
from tests.server.support import Recording
from tests.server.support_records import CLINIC

pytestmark = pytest.mark.anyio

BIG_ROOM, SMALL_ROOM = "Al-Fatih 1", "Aisyah 2"
TWO_ROOMS = [f"kamar:{BIG_ROOM}", f"kamar:{SMALL_ROOM}"]
RANGE = {"dari": "2026-10-01", "sampai": "2026-10-31"}


def student(i: int, room: str) -> dict[str, Any]:
    return {**TUTORIAL_ANAK[0], "id": f"S{i:04d}", "nama": f"Santri {i:04d}", "kamar": room, "nik": None}


@pytest.fixture
def big_school(db_url: str) -> Iterator[FastAPI]:
    """230 students in one room (three pages of a scoped search) and 20 in another."""
    rooms = [
        {"nama": BIG_ROOM, "gedung": "Putra", "kapasitas": 300, "musyrif": "Ust. Ridwan"},
        {"nama": SMALL_ROOM, "gedung": "Putri", "kapasitas": 30, "musyrif": "Ustz. Halimah"},
    ]
    anak = [student(i, BIG_ROOM if i < 230 else SMALL_ROOM) for i in range(250)]
    insert_rows(db_url, kamar=rooms, anak=anak, absensi=[])
    app = make_service(db_url)
    yield app
    app.state.engine.dispose()


class Progress:
    """A progress callback that keeps every report."""

    def __init__(self) -> None:
        self.reports: list[tuple[float, float | None, str | None]] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.reports.append((progress, total, message))


def assert_steps(reports: list[tuple[float, float | None, str | None]], requests: int) -> None:
    """One report per upstream request, rising by one, each with its total and message, the last n of n."""
    assert [p for p, _, _ in reports] == list(range(1, requests + 1)), reports
    for progress, total, message in reports:
        assert total is not None and total >= progress
        assert message == f"halaman {progress:g} dari {total:g}"
    assert reports[-1][:2] == (requests, requests)


async def test_a_two_sided_search_reports_each_page_of_each_side(big_school: FastAPI, era: str) -> None:
    # A room (20 students) and a class (all 250): each side's first 155 rows, and their overlap counted.
    upstream = Recording(big_school)
    scope = [f"kamar:{SMALL_ROOM}", "kelas:7A"]
    async with connect(server_for(upstream, stdio_scope=scope), era) as client:
        progress = Progress()
        result = await client.call_tool("cari_anak", {"limit": 5, "offset": 150}, progress_callback=progress)
    assert result.structured_content is not None and result.structured_content["total"] == 250
    assert [a["id"] for a in result.structured_content["data"]] == [f"S{i:04d}" for i in range(150, 155)]
    assert upstream.paths == [b"/anak"] * 4  # the room, the class in pages of 100, and the overlap
    # The three first requests start together; the total grows once the class's first page tells what follows.
    assert [r[:2] for r in progress.reports] == [(1, 3), (2, 3), (3, 4), (4, 4)]
    assert_steps(progress.reports, 4)


async def test_a_search_of_two_rooms_is_one_request_without_progress(big_school: FastAPI, era: str) -> None:
    upstream = Recording(big_school)
    async with connect(server_for(upstream, stdio_scope=TWO_ROOMS), era) as client:
        progress = Progress()
        result = await client.call_tool("cari_anak", {"limit": 5, "offset": 240}, progress_callback=progress)
    assert result.structured_content is not None and result.structured_content["total"] == 250
    assert [a["id"] for a in result.structured_content["data"]] == [f"S{i:04d}" for i in range(240, 245)]
    assert len(upstream.paths) == 1
    assert progress.reports == []


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("rekap_absensi", RANGE),
        ("absensi_harian", {"tanggal": "2026-10-06"}),
        ("daftar_izin", {}),
        ("rekap_pelanggaran", RANGE),
        ("progres_hafalan", {}),
    ],
)
async def test_every_long_read_reports_one_step_per_side_of_the_scope(
    service_app: FastAPI, era: str, tool: str, arguments: dict[str, Any]
) -> None:
    upstream = Recording(service_app)
    async with connect(server_for(upstream, stdio_scope=["kamar:Aisyah 2", "kelas:8B"]), era) as client:
        progress = Progress()
        result = await client.call_tool(tool, arguments, progress_callback=progress)
    assert not result.is_error
    assert len(upstream.paths) == 2  # one request for the rooms, one for the classes
    assert_steps(progress.reports, 2)


@pytest.mark.parametrize("tool", ["rekap_absensi", "rekap_pelanggaran", "rekap_kesehatan"])
async def test_a_range_rekap_with_full_access_is_one_step(service_app: FastAPI, era: str, tool: str) -> None:
    async with connect(server_for(service_app, stdio_scope=CLINIC), era) as client:  # health counts: any range
        progress = Progress()
        result = await client.call_tool(tool, RANGE, progress_callback=progress)
    assert not result.is_error
    assert progress.reports == [(1, 1, "halaman 1 dari 1")]


async def test_a_single_request_read_sends_no_progress(service_app: FastAPI, era: str) -> None:
    async with connect(server_for(service_app, stdio_scope=TWO_ROOMS), era) as client:
        progress = Progress()
        detail = await client.call_tool("detail_anak", {"id_anak": "A003"}, progress_callback=progress)
        rooms = await client.call_tool("daftar_kamar", {}, progress_callback=progress)
    assert not detail.is_error and not rooms.is_error
    assert progress.reports == []
