"""A scoped read costs what a full read costs, and answers what the full read shows of the scope.

A school of 90 students in three rooms and three classes, names repeating (so pages are ordered by name *then*
id). Each scope's answers are compared with the office's (full access) answers filtered to the scope, page by
page, and the upstream requests are counted: one per side of the scope (its rooms, its classes) from our service,
one per room or class from a service that does not mark `filter-ganda`, and the rows re-checked when an upstream
ignores a filter.
"""

from collections.abc import Iterator
from datetime import date
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest
from fastapi import FastAPI
from mcp import Client
from starlette.types import Message, Receive, Scope, Send

from mcp_asrama.contract import FITUR_HEADER
from tests.conftest import TUTORIAL_ANAK, insert_rows
from tests.server.conftest import ERAS, connect, make_service, server_for
from tests.server.support import Recording, call_ok

pytestmark = pytest.mark.anyio

ROOMS = ["Al-Fatih 1", "Al-Fatih 2", "Aisyah 2"]
CLASSES = ["7A", "7B", "8A"]
NAMES = ["Ahmad", "Budi", "Citra", "Dewi", "Eka", "Fajar", "Gita"]
SCOPES = [
    ["kamar:Al-Fatih 2"],
    ["kamar:Al-Fatih 1", "kamar:Aisyah 2"],
    ["kelas:7B"],
    ["kamar:Al-Fatih 2", "kelas:7A"],
    ["kamar:al-fatih 1", "kamar:Aisyah 2", "kelas:8a", "kelas:7B"],
]
ERA = ERAS[0]


def _student(i: int) -> dict[str, Any]:
    return {
        **TUTORIAL_ANAK[0],
        "id": f"S{(i * 37) % 90:03d}",  # ids not in name order
        "nama": f"{NAMES[i % len(NAMES)]} {'Santoso' if i % 2 else 'Lestari'}",
        "kelas": CLASSES[(i // 3) % 3],
        "kamar": ROOMS[i % 3],
        "nik": None,
    }


@pytest.fixture
def school(db_url: str) -> Iterator[FastAPI]:
    rooms = [{"nama": r, "gedung": "G", "kapasitas": 40, "musyrif": "Ust."} for r in ROOMS]
    absensi = [
        {"id_anak": f"S{(i * 37) % 90:03d}", "tanggal": date(2026, 10, 6), "status": "hadir"} for i in range(0, 90, 4)
    ]
    insert_rows(db_url, kamar=rooms, anak=[_student(i) for i in range(90)], absensi=absensi)
    app = make_service(db_url)
    yield app
    app.state.engine.dispose()


def _visible(row: dict[str, Any], scope: list[str]) -> bool:
    kinds = {tuple(e.split(":", 1)) for e in scope}
    return ("kamar", row["kamar"].casefold()) in {(k, v.casefold()) for k, v in kinds} or (
        "kelas",
        row["kelas"].casefold(),
    ) in {(k, v.casefold()) for k, v in kinds}


async def _everyone(office: Client, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    body = await call_ok(office, "cari_anak", {**arguments, "limit": 100})
    return list(body["data"])


@pytest.mark.parametrize("scope", SCOPES)
async def test_every_page_of_a_scoped_search_is_the_office_s_answer_cut_to_the_scope(
    school: FastAPI, scope: list[str]
) -> None:
    upstream = Recording(school)
    async with (
        connect(server_for(school), ERA) as office,
        connect(server_for(upstream, stdio_scope=scope), ERA) as mine,
    ):
        for filters in (
            {},
            {"kelas": "7A"},
            {"kamar": "Al-Fatih 1"},
            {"nama": "dewi"},
            {"kelas": "8A", "kamar": "Aisyah 2"},
        ):
            expected = [a for a in await _everyone(office, filters) if _visible(a, scope)]
            for offset in (0, 7, 14, 35):
                upstream.requests.clear()
                body = await call_ok(mine, "cari_anak", {**filters, "limit": 7, "offset": offset})
                assert body["total"] == len(expected), (filters, offset)
                assert body["data"] == expected[offset : offset + 7], (filters, offset)
                sides = {e.split(":")[0] for e in scope}
                assert len(upstream.requests) <= (1 if len(sides) == 1 else 3), upstream.requests


async def test_two_rooms_are_one_request_with_both_rooms(school: FastAPI) -> None:
    upstream = Recording(school)
    async with connect(server_for(upstream, stdio_scope=SCOPES[1]), ERA) as client:
        for tool, arguments in [
            ("cari_anak", {}),
            ("absensi_harian", {"tanggal": "2026-10-06"}),
            ("rekap_absensi", {"dari": "2026-10-01", "sampai": "2026-10-31"}),
            ("daftar_izin", {}),
        ]:
            upstream.requests.clear()
            await call_ok(client, tool, arguments)
            assert len(upstream.requests) == 1, tool
            assert [v for k, v in parse_qsl(upstream.queries[0].decode()) if k == "kamar"] == ["Aisyah 2", "Al-Fatih 1"]


async def test_scoped_day_and_rekap_are_the_office_s_cut_to_the_scope(school: FastAPI) -> None:
    scope = SCOPES[3]
    day, period = {"tanggal": "2026-10-06"}, {"dari": "2026-10-01", "sampai": "2026-10-31"}
    async with connect(server_for(school), ERA) as office, connect(server_for(school, stdio_scope=scope), ERA) as mine:
        everyone = [a for a in await _everyone(office, {}) if _visible(a, scope)]
        harian = await call_ok(mine, "absensi_harian", day)
        recorded = sum(1 for i in range(0, 90, 4) if _visible(_student(i), scope))
        assert harian["jumlah_anak"] == len(everyone)
        assert harian["per_status"]["hadir"] == recorded
        rekap = await call_ok(mine, "rekap_absensi", period)
        assert rekap["jumlah_anak"] == recorded  # the students with a record in the period
        assert rekap["total"]["hadir"] == recorded


def _without_header(app: Any) -> Any:
    """`app` answering as a service of the tutorial's contract would: without the `filter-ganda` mark."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        async def strip(message: Message) -> None:
            if message["type"] == "http.response.start":
                name = FITUR_HEADER.lower().encode()
                message = {**message, "headers": [(k, v) for k, v in message["headers"] if k.lower() != name]}
            await send(message)

        await app(scope, receive, strip if scope["type"] == "http" else send)

    return wrapped


async def test_a_service_without_the_mark_is_asked_one_room_at_a_time_from_its_first_answer(school: FastAPI) -> None:
    upstream = Recording(_without_header(school))
    async with (
        connect(server_for(school), ERA) as office,
        connect(server_for(upstream, stdio_scope=SCOPES[1]), ERA) as mine,
    ):
        expected = [a for a in await _everyone(office, {}) if _visible(a, SCOPES[1])]
        first = await call_ok(mine, "cari_anak", {"limit": 10, "offset": 5})
        assert (first["total"], first["data"]) == (len(expected), expected[5:15])
        rooms = [[v for k, v in parse_qsl(q.decode()) if k == "kamar"] for q in upstream.queries]
        assert rooms[0] == ["Aisyah 2", "Al-Fatih 1"]  # tried once, refused for lack of the mark
        assert sorted(map(tuple, rooms[1:])) == [("Aisyah 2",), ("Al-Fatih 1",)]
        upstream.requests.clear()
        await call_ok(mine, "daftar_izin", {})
        assert sorted(dict(parse_qsl(q.decode()))["kamar"] for q in upstream.queries) == ["Aisyah 2", "Al-Fatih 1"]


def _ignoring(app: Any, name: str) -> Any:
    """`app` behind a proxy that drops the `name` query parameter: an upstream that ignores that filter."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            kept = [(k, v) for k, v in parse_qsl(scope["query_string"].decode()) if k != name]
            scope = {**scope, "query_string": urlencode(kept).encode()}
        await app(scope, receive, send)

    return wrapped


@pytest.mark.parametrize("scope", [SCOPES[0], SCOPES[3]])
async def test_an_upstream_that_ignores_the_room_filter_still_shows_only_the_scope(
    school: FastAPI, scope: list[str]
) -> None:
    async with (
        connect(server_for(school), ERA) as office,
        connect(server_for(_ignoring(school, "kamar"), stdio_scope=scope), ERA) as mine,
    ):
        expected = [a for a in await _everyone(office, {}) if _visible(a, scope)]
        body = await call_ok(mine, "cari_anak", {"limit": 50})
        assert body["total"] == len(expected)
        assert body["data"] == expected[:50]
