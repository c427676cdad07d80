"""`absensi_harian` and `rekap_pelanggaran` answer exactly as before now that the service counts: each answer from
our service is compared with the same call to the service as an older one of ours would answer (`ringkas`,
`daftar` and `limit` ignored: the whole day, every student of the rekap), on random schools, for the office, a
musyrif's rooms, a class, both sides, and a principal who sees nothing; a school too big for one answer is cut at
the same student with the same note, and the office gets no more of the day than could ever fit an answer.
"""

import random
from collections.abc import Iterator
from datetime import date
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest
from fastapi import FastAPI
from starlette.types import Message, Receive, Scope, Send

from tests.conftest import TUTORIAL_ANAK, insert_rows, service_client
from tests.server.conftest import ERAS, connect, make_service, server_for
from tests.server.support import call_ok

pytestmark = pytest.mark.anyio

ERA = ERAS[-1]
HARI = "2026-10-06"
ROOMS = ["Al-Fatih 1", "Al-Fatih 2", "Aisyah 2"]
CLASSES = ["7A", "7B", "8A"]
NAMES = ["Ahmad", "Budi", "Citra", "Dewi", "Eka"]
KINDS = ["terlambat_sholat", "membawa_hp", "berkelahi", "tidak_piket", "merokok"]
SCOPES = [
    ["all"],
    ["kamar:Al-Fatih 2"],
    ["kamar:al-fatih 1", "kamar:Aisyah 2"],
    ["kelas:7B"],
    ["kamar:Aisyah 2", "kelas:7A"],
    [],
]
NEW_PARAMS = {"ringkas", "daftar", "limit"}


class Older:
    """`app` as an older service of ours answers: the new parameters dropped; counts the bytes of its answers."""

    def __init__(self, app: Any, *, older: bool) -> None:
        self.app, self.older, self.sent = app, older, 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.older:
            kept = [(k, v) for k, v in parse_qsl(scope["query_string"].decode()) if k not in NEW_PARAMS]
            scope = {**scope, "query_string": urlencode(kept).encode()}

        async def counting(message: Message) -> None:
            if message["type"] == "http.response.body":
                self.sent += len(message.get("body", b""))
            await send(message)

        await self.app(scope, receive, counting)


def _school(rng: random.Random, size: int, recorded: float) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    anak = [
        {
            **TUTORIAL_ANAK[0],
            "id": f"S{rng.randrange(10**6):06d}-{i}",
            "nama": f"{rng.choice(NAMES)} {rng.choice(['Santoso', 'Lestari', 'Wijaya'])}",
            "kelas": rng.choice(CLASSES),
            "kamar": rng.choice(ROOMS),
            "nik": None,
        }
        for i in range(size)
    ]
    statuses = ["hadir", "hadir", "hadir", "izin", "sakit", "alpa"]
    absensi = [
        {"id_anak": a["id"], "tanggal": date(2026, 10, 6), "status": rng.choice(statuses), "keterangan": None}
        for a in anak
        if rng.random() < recorded
    ]
    return anak, absensi


def _service(db_url: str, seed: int, size: int, recorded: float) -> FastAPI:
    rng = random.Random(seed)
    anak, absensi = _school(rng, size, recorded)
    rooms = [{"nama": r, "gedung": "G", "kapasitas": 400, "musyrif": "Ust."} for r in ROOMS]
    insert_rows(db_url, kamar=rooms, anak=anak, absensi=absensi)
    return make_service(db_url)


@pytest.fixture(params=[1, 2])
def school(request: pytest.FixtureRequest, db_url: str) -> Iterator[FastAPI]:
    app = _service(db_url, request.param, 90, 0.8)
    yield app
    app.state.engine.dispose()


async def _answers(app: FastAPI, scope: list[str], calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for older in (False, True):
        upstream = Older(app, older=older)
        async with connect(server_for(upstream, stdio_scope=scope), ERA) as client:
            found.append({f"{name} {arguments}": await call_ok(client, name, arguments) for name, arguments in calls})
    return found


@pytest.mark.parametrize("scope", SCOPES, ids=lambda s: ",".join(s) or "none")
async def test_absensi_harian_answers_as_before(school: FastAPI, scope: list[str]) -> None:
    calls = [
        ("absensi_harian", {"tanggal": HARI, **extra})
        for extra in (
            {},
            {"status": "izin"},
            {"status": "hadir"},
            {"status": "belum_dicatat"},
            {"kelas": "7a"},
            {"kamar": "Al-Fatih 1", "status": "alpa"},
            {"kelas": "9Z"},
        )
    ]
    calls.append(("absensi_harian", {"tanggal": "2026-10-07"}))  # nobody recorded
    now, before = await _answers(school, scope, calls)
    assert now == before
    if scope == ["all"]:
        assert now[f"absensi_harian {calls[0][1]}"]["jumlah_anak"] == 90


@pytest.mark.parametrize("scope", SCOPES, ids=lambda s: ",".join(s) or "none")
async def test_rekap_pelanggaran_answers_as_before(school: FastAPI, scope: list[str]) -> None:
    rng = random.Random(len(scope))
    async with service_client(school) as rest:
        ids = [a["id"] for a in (await rest.get("/anak", params={"limit": 100})).json()["data"]]
        for n in range(60):
            body = {
                "id_anak": rng.choice(ids),
                "tanggal": f"2026-10-{rng.randint(1, 30):02d}",
                "jenis": rng.choice(KINDS),
            }
            made = await rest.post("/pelanggaran", json=body, headers={"Idempotency-Key": f"counts-unchanged-{n:04d}"})
            assert made.status_code == 201, made.text
    calls = [
        ("rekap_pelanggaran", {"dari": "2026-10-01", "sampai": "2026-10-31", **extra})
        for extra in ({}, {"kelas": "7B"}, {"kamar": "Aisyah 2"}, {"dari": "2026-10-10", "sampai": "2026-10-12"})
    ]
    now, before = await _answers(school, [*scope, "peran:bk"] if scope == ["kelas:7B"] else scope, calls)
    assert now == before


async def test_a_school_too_big_for_one_answer_is_cut_the_same_and_the_office_gets_a_fraction(db_url: str) -> None:
    app = _service(db_url, 9, 1500, 0.3)
    sizes: list[int] = []
    answers: list[dict[str, Any]] = []
    for older in (False, True):
        upstream = Older(app, older=older)
        async with connect(server_for(upstream), ERA) as client:
            answers.append(await call_ok(client, "absensi_harian", {"tanggal": HARI}))
        sizes.append(upstream.sent)
    app.state.engine.dispose()
    assert answers[0] == answers[1]
    assert answers[0]["jumlah_anak"] == 1500
    assert "Daftar dipotong" in answers[0]["catatan"]
    assert sizes[0] * 2 < sizes[1], sizes  # the listed students only, as many as could ever fit: whatever the school
    assert sizes[0] < 100_000, sizes
