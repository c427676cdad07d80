"""`/perubahan`, the change feed: every write kind's events (keys only, never personal data), recorded in the
write's transaction, in commit order; the head frame, resume with Last-Event-ID, reset after pruning, heartbeat,
validation, the token, and a database that fails. Streams are read from the app served by uvicorn on a free port
(the in-process ASGI transport buffers whole responses)."""

import asyncio
import json
import os
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx2
import pytest
from fastapi import FastAPI
from sqlalchemy import event, insert, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from mcp_asrama.config import ServiceSettings
from mcp_asrama.runtime import serving
from mcp_asrama.service.app import create_app
from mcp_asrama.service.crud import perubahan as crud_perubahan
from mcp_asrama.service.db import make_engine, make_sessionmaker
from mcp_asrama.service.models import Kamar, Perubahan
from tests.conftest import TOKEN, TUTORIAL_ANAK, service_client
from tests.e2e.conftest import free_port

pytestmark = pytest.mark.anyio

TODAY = date.today()
KEYS = {"id", "jenis", "tanggal", "id_anak", "kamar", "kelas"}
PLACE = {a["id"]: (a["kamar"], a["kelas"]) for a in TUTORIAL_ANAK}  # an event names its student's room, class
PERSONAL = [str(a[f]) for a in TUTORIAL_ANAK for f in ("nama", "nik", "no_hp_wali", "alamat", "nama_wali")]
IDS = [str(a["id"]) for a in TUTORIAL_ANAK]
WAIT = 5.0  # seconds a frame may take to come (the feed's target is 0.2)


def day(offset: int = 0) -> str:
    return (TODAY + timedelta(days=offset)).isoformat()


def change(jenis: str, tanggal: str | None = None, id_anak: str | None = None) -> dict[str, Any]:
    kamar, kelas = PLACE.get(id_anak or "", (None, None))
    return {"jenis": jenis, "tanggal": tanggal, "id_anak": id_anak, "kamar": kamar, "kelas": kelas}


@asynccontextmanager
async def live(url: str, **settings: Any) -> AsyncIterator[tuple[httpx2.AsyncClient, FastAPI]]:
    """The service on `url` under uvicorn on a free port (heartbeat every 0.2 s): a client with its token, and
    the app."""
    config = ServiceSettings(db_url=url, service_token=TOKEN, **{"perubahan_ping": 0.2, **settings})
    app = create_app(config)
    port = free_port()
    server = serving.make_server(app, "127.0.0.1", port, config)
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            assert not task.done(), "uvicorn did not start"
            await asyncio.sleep(0.01)
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=10) as client:
            yield client, app
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)
        app.state.engine.dispose()


class Stream:
    """An open change stream, frame by frame."""

    def __init__(self, response: httpx2.Response) -> None:
        self.response = response
        self._events = aiter(httpx2.EventSource(response))

    async def frame(self) -> httpx2.ServerSentEvent:
        return await asyncio.wait_for(anext(self._events), WAIT)

    async def changes(self, count: int) -> list[dict[str, Any]]:
        """The next `count` events, each checked: a `perubahan` frame whose id line is its data's id."""
        found = []
        for _ in range(count):
            sse = await self.frame()
            assert sse.event == "perubahan", sse
            body = sse.json()
            assert isinstance(body, dict) and set(body) == KEYS and sse.id == str(body["id"])
            found.append(body)
        return found

    async def ended(self) -> bool:
        try:
            await asyncio.wait_for(anext(self._events), 10)
        except StopAsyncIteration:
            return True
        return False

    async def nothing_for(self, seconds: float) -> None:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(anext(self._events), seconds)


@asynccontextmanager
async def opened(client: httpx2.AsyncClient, **headers: str) -> AsyncIterator[Stream]:
    async with client.stream("GET", "/perubahan", headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        yield Stream(response)


async def head_frame(stream: Stream) -> int:
    sse = await stream.frame()
    assert sse.event == "mulai" and sse.json() == {"id": int(sse.id)}
    return int(sse.id)


def without_ids(changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in c.items() if k != "id"} for c in changes]


def assert_no_personal_data(changes: list[dict[str, Any]]) -> None:
    text_ = json.dumps(changes)
    assert not [p for p in [*PERSONAL, "Panas", "membawa_hp", "ziyadah"] if p in text_]


async def roll_call(client: httpx2.AsyncClient, offset: int, status: str = "hadir", **headers: str) -> None:
    entri = [{"id_anak": i, "status": status} for i in IDS]
    response = await client.post(f"/absensi/{day(offset)}", json={"entri": entri}, headers=headers)
    assert response.status_code == 200, response.text


async def test_a_stream_opens_with_the_head_then_only_new_events(tutorial_db: str) -> None:
    async with live(tutorial_db) as (client, _):
        await roll_call(client, -1)  # before the stream: three events it does not send
        async with opened(client) as stream:
            assert await head_frame(stream) == 3
            started = time.monotonic()
            await roll_call(client, 0)
            changes = await stream.changes(3)
            assert time.monotonic() - started < 0.8  # woken by the commit, not by the 2 s poll
    assert [c["id"] for c in changes] == [4, 5, 6]
    assert without_ids(changes) == [change("absensi", day(0), i) for i in IDS]


async def test_a_stream_ends_when_its_reader_goes(tutorial_db: str) -> None:
    async with live(tutorial_db) as (client, app):
        async with opened(client) as first, opened(client) as second:
            await head_frame(first)
            await head_frame(second)
            assert app.state.feed.streams == 2
        deadline = time.monotonic() + 3
        while app.state.feed.streams and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert app.state.feed.streams == 0


async def test_every_write_kind_yields_its_events_with_keys_only(tutorial_db: str) -> None:
    async with live(tutorial_db) as (client, _), opened(client) as stream:
        assert await head_frame(stream) == 0
        await roll_call(client, -3)
        assert without_ids(await stream.changes(3)) == [change("absensi", day(-3), i) for i in IDS]
        # The same record again changes nothing: no event (the next one is the correction's).
        assert (await client.put(f"/absensi/{day(-3)}/A001", json={"status": "hadir"})).status_code == 200
        assert (await client.put(f"/absensi/{day(-3)}/A001", json={"status": "sakit"})).status_code == 200
        assert without_ids(await stream.changes(1)) == [change("absensi", day(-3), "A001")]

        asked = await client.post(
            "/izin", json={"id_anak": "A002", "dari": day(-1), "sampai": day(1), "jenis": "pulang"}
        )
        assert asked.status_code == 201
        assert without_ids(await stream.changes(5)) == [
            *(change("absensi", day(n), "A002") for n in (-1, 0, 1)),
            change("izin", day(-1), "A002"),
            change("anak", None, "A002"),  # its status is now izin
        ]
        ended = await client.post(f"/izin/{asked.json()['id']}/selesai", json={"tanggal_kembali": day(0)})
        assert ended.status_code == 200
        assert without_ids(await stream.changes(4)) == [
            *(change("absensi", day(n), "A002") for n in (0, 1)),  # the days from the return on, cleared
            change("izin", day(-1), "A002"),
            change("anak", None, "A002"),
        ]

        records: dict[str, dict[str, Any]] = {
            "pelanggaran": {"jenis": "membawa_hp"},
            "hafalan": {"jenis": "ziyadah", "surah": 78, "ayat_mulai": 1, "ayat_selesai": 10},
            "kesehatan": {"keluhan": "Panas 38,5", "kategori": "demam"},
        }
        for route, body in records.items():
            response = await client.post(f"/{route}", json={"id_anak": "A003", "tanggal": day(-2), **body})
            assert response.status_code == 201, response.text
            assert without_ids(await stream.changes(1)) == [change(route, day(-2), "A003")]
        await stream.nothing_for(0.5)
    async with live(tutorial_db) as (client, _), opened(client, **{"Last-Event-ID": "0"}) as stream:
        assert await head_frame(stream) == 16
        everything = await stream.changes(16)
    assert [c["id"] for c in everything] == list(range(1, 17))
    assert_no_personal_data(everything)


async def test_an_idempotent_replay_records_nothing(tutorial_db: str) -> None:
    body = {"id_anak": "A001", "tanggal": day(0), "jenis": "membawa_hp"}
    key = {"Idempotency-Key": "konfirmasi-perubahan-01"}
    async with live(tutorial_db) as (client, _), opened(client) as stream:
        await head_frame(stream)
        for _ in range(2):
            assert (await client.post("/pelanggaran", json=body, headers=key)).status_code == 201
        other = {"entri": [{"id_anak": "A001", "status": "hadir"}]}  # the same key, another request: nothing written
        assert (await client.post(f"/absensi/{day(0)}", json=other, headers=key)).status_code == 409
        assert without_ids(await stream.changes(1)) == [change("pelanggaran", day(0), "A001")]
        await roll_call(client, -1)
        assert [c["jenis"] for c in await stream.changes(3)] == ["absensi"] * 3


async def test_a_write_that_is_rolled_back_or_fails_to_commit_leaves_no_event(tutorial_db: str) -> None:
    engine = make_engine(tutorial_db)
    sessions = make_sessionmaker(engine)
    try:
        with sessions() as session:
            crud_perubahan.catat(session, "kamar", kamar="Al-Fatih 1")
            session.rollback()
            session.commit()  # nothing queued any more
        with sessions() as session:
            crud_perubahan.catat(session, "kamar", kamar="Al-Fatih 1")
            session.add(Kamar(nama="Al-Fatih 1", gedung="Putra", kapasitas=6))  # already there: the commit fails
            with pytest.raises(Exception, match=r"(?i)unique|duplicate"):
                session.commit()
            session.rollback()
        with sessions() as session:
            crud_perubahan.catat(session, "kamar", kamar="Aisyah 2")
            session.commit()
        with engine.connect() as conn:
            stored = conn.execute(select(Perubahan.id, Perubahan.jenis, Perubahan.kamar)).all()
    finally:
        engine.dispose()
    assert [tuple(r) for r in stored] == [(1, "kamar", "Aisyah 2")]


async def test_a_reader_that_reconnects_with_its_last_id_misses_nothing(tutorial_db: str) -> None:
    async with live(tutorial_db) as (client, _):
        async with opened(client) as stream:
            await head_frame(stream)
            await roll_call(client, -2)
            first = await stream.changes(1)  # dropped after one of three
        await roll_call(client, -1)  # while nobody listens
        async with opened(client, **{"Last-Event-ID": str(first[0]["id"])}) as stream:
            assert await head_frame(stream) == 6
            rest = await stream.changes(5)
            await roll_call(client, 0)
            rest += await stream.changes(3)
        async with client.stream("GET", "/perubahan", params={"sejak": "7"}) as response:  # curl's way
            again = Stream(response)
            assert await head_frame(again) == 9
            assert [c["id"] for c in await again.changes(2)] == [8, 9]
        both = {"params": {"sejak": "2"}, "headers": {"Last-Event-ID": "8"}}
        async with client.stream("GET", "/perubahan", **both) as response:  # the header wins
            again = Stream(response)
            assert await head_frame(again) == 9
            assert [c["id"] for c in await again.changes(1)] == [9]
            await again.nothing_for(0.3)
    assert [c["id"] for c in first + rest] == list(range(1, 10))
    assert [c["tanggal"] for c in first + rest] == [day(-2)] * 3 + [day(-1)] * 3 + [day(0)] * 3


async def test_a_resume_point_already_pruned_or_never_given_starts_with_reset(tutorial_db: str) -> None:
    async with live(tutorial_db, perubahan_maks=4) as (client, _):
        for offset in (-3, -2, -1):
            await roll_call(client, offset)  # 9 events, the newest 4 (6-9) kept: pruned at every commit (maks < 10)
        for resume, reset in (("0", True), ("4", True), ("5", False), ("9", False), ("10", True)):
            async with opened(client, **{"Last-Event-ID": resume}) as stream:
                assert await head_frame(stream) == 9
                if reset:
                    sse = await stream.frame()
                    assert (sse.event, sse.id, sse.json()) == ("reset", "9", {"id": 9})
                else:
                    missed = await stream.changes(9 - int(resume))
                    assert [c["id"] for c in missed] == list(range(int(resume) + 1, 10))
                await stream.nothing_for(0.3)
        async with opened(client, **{"Last-Event-ID": "1"}) as stream:
            await head_frame(stream)
            assert (await stream.frame()).event == "reset"
            await roll_call(client, 0)  # then live, after the head
            assert [c["id"] for c in await stream.changes(3)] == [10, 11, 12]


async def test_retention_prunes_old_events_as_a_prefix_and_keeps_the_newest(tutorial_db: str) -> None:
    engine = make_engine(tutorial_db)
    now = datetime.now(UTC)
    with engine.begin() as conn:
        rows = [{"id": n, "jenis": "anak", "waktu": now - timedelta(days=30)} for n in (1, 2, 3)]
        # A writer with a clock ahead: a prefix of ids goes, whatever the times after it say.
        conn.execute(insert(Perubahan), [*rows, {"id": 4, "jenis": "anak", "waktu": now + timedelta(days=1)}])
    sessions = make_sessionmaker(engine, crud_perubahan.Retention(hari=7, maks=10))
    try:
        with sessions() as session:
            crud_perubahan.catat(session, "kamar")
            session.commit()
        with engine.connect() as conn:
            kept = list(conn.scalars(select(Perubahan.id).order_by(Perubahan.id)))
    finally:
        engine.dispose()
    assert kept == [4, 5]


async def test_heartbeat_comes_every_ping_interval(tutorial_db: str) -> None:
    async with live(tutorial_db) as (client, _), client.stream("GET", "/perubahan") as response:
        started = time.monotonic()
        lines = []
        async for line in response.aiter_lines():
            lines.append(line)
            if lines.count(": ping") == 3:
                break
    assert lines[:3] == ["id: 0", "event: mulai", 'data: {"id":0}']
    assert 0.4 < time.monotonic() - started < 3


@pytest.mark.parametrize(
    ("headers", "params", "named"),
    [
        ({"Last-Event-ID": "abc"}, {}, "Last-Event-ID"),
        ({"Last-Event-ID": "-1"}, {}, "Last-Event-ID"),
        ({"Last-Event-ID": "1.5"}, {}, "Last-Event-ID"),
        ({}, {"sejak": "kemarin"}, "sejak"),
        ({"Last-Event-ID": "3"}, {"sejak": "x"}, "sejak"),
    ],
)
async def test_a_malformed_resume_point_is_422(
    service: httpx2.AsyncClient, headers: dict[str, str], params: dict[str, str], named: str
) -> None:
    response = await service.get("/perubahan", headers=headers, params=params)
    assert response.status_code == 422
    assert response.json() == {
        "detail": f"{named} harus bilangan bulat 0 atau lebih: id perubahan terakhir yang diterima"
    }


async def test_the_feed_needs_the_token(tutorial_db: str) -> None:
    app = create_app(ServiceSettings(db_url=tutorial_db, service_token=TOKEN))
    try:
        for token in (None, "salah"):
            async with service_client(app, token) as client:
                response = await client.get("/perubahan")
            assert response.status_code == 401 and response.json() == {"detail": "Token tidak valid"}
    finally:
        app.state.engine.dispose()


async def test_the_route_is_in_the_openapi_description(service: httpx2.AsyncClient) -> None:
    operation = (await service.get("/openapi.json")).json()["paths"]["/perubahan"]["get"]
    assert "text/event-stream" in operation["responses"]["200"]["content"]
    assert {p["name"] for p in operation["parameters"]} == {"Last-Event-ID", "sejak"}
    assert {"422", "503"} <= set(operation["responses"])


def _lose_database(url: str, engine: Any) -> None:
    """Make the database unreachable: a SQLite file removed (a new, empty one has no tables), a PostgreSQL
    database dropped (its connections cut)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        assert parsed.database
        engine.dispose()  # no connection keeps the removed file open
        os.remove(parsed.database)
        return
    admin = make_engine(parsed.set(database="postgres").render_as_string(hide_password=False))
    with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text(f'DROP DATABASE "{parsed.database}" WITH (FORCE)'))
    admin.dispose()


async def test_a_database_down_at_connect_is_503(tutorial_db: str) -> None:
    app = create_app(ServiceSettings(db_url=tutorial_db, service_token=TOKEN))
    try:
        _lose_database(tutorial_db, app.state.engine)
        async with service_client(app) as client:
            response = await client.get("/perubahan", headers={"Last-Event-ID": "0"})
        assert response.status_code == 503
        assert response.json() == {"detail": "Database tidak tersedia, coba lagi nanti"}
    finally:
        app.state.engine.dispose()


async def test_a_database_lost_mid_stream_ends_the_stream(tutorial_db: str) -> None:
    async with live(tutorial_db) as (client, app), opened(client) as stream:
        await head_frame(stream)
        _lose_database(tutorial_db, app.state.engine)
        assert await stream.ended()


async def test_ids_become_visible_in_commit_order_under_concurrent_writers(tutorial_db: str) -> None:
    """Writer A takes its id, then lingers before committing; writer B, beside it, gets the next id and commits
    after A; no reader ever sees B's event without A's."""
    engine = make_engine(tutorial_db)
    sessions = make_sessionmaker(engine)
    a_has_id = threading.Event()
    lingered: list[float] = []  # when A's linger ended: its commit follows
    committed: dict[str, float] = {}  # when each writer's commit returned

    def linger(_session: Session) -> None:
        a_has_id.set()
        time.sleep(0.6)
        lingered.append(time.monotonic())

    def writer(name: str, slow: bool) -> None:
        with sessions() as session:
            session.execute(text("UPDATE kamar SET kapasitas = kapasitas WHERE nama = :n"), {"n": name})
            crud_perubahan.catat(session, "kamar", kamar=name)
            if slow:
                event.listen(session, "before_commit", linger)
            session.commit()
            committed[name] = time.monotonic()

    seen: list[list[int]] = []
    a = threading.Thread(target=writer, args=("Al-Fatih 1", True))
    b = threading.Thread(target=writer, args=("Aisyah 2", False))
    try:
        a.start()
        assert a_has_id.wait(5)
        b.start()
        while a.is_alive() or b.is_alive():
            with engine.connect() as conn:
                seen.append(list(conn.scalars(select(Perubahan.id).order_by(Perubahan.id))))
            time.sleep(0.02)
        a.join()
        b.join()
        with engine.connect() as conn:
            final = conn.execute(select(Perubahan.id, Perubahan.kamar).order_by(Perubahan.id)).all()
    finally:
        engine.dispose()
    # B's commit waited for A's (the threads' own bookkeeping after their commits may run in either order)
    assert set(committed) == {"Al-Fatih 1", "Aisyah 2"}
    assert committed["Aisyah 2"] > lingered[0]
    assert [tuple(r) for r in final] == [(1, "Al-Fatih 1"), (2, "Aisyah 2")]
    assert {tuple(s) for s in seen} <= {(), (1,), (1, 2)}


async def test_two_services_on_one_database_deliver_every_event_once_in_order(tutorial_db: str) -> None:
    async with live(tutorial_db) as (first, _), live(tutorial_db) as (second, _), opened(first) as stream:
        await head_frame(stream)
        await asyncio.gather(*(roll_call(second if n % 2 else first, -n) for n in range(6)))
        changes = await stream.changes(18)
        await stream.nothing_for(0.5)
    assert [c["id"] for c in changes] == list(range(1, 19))
    assert sorted(c["tanggal"] for c in changes) == sorted(day(-n) for n in range(6) for _ in TUTORIAL_ANAK)


def test_the_feed_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert (ServiceSettings().perubahan_ping, ServiceSettings().perubahan_hari) == (15.0, 7)
    assert ServiceSettings().perubahan_maks == 100_000
    for name, value in (("PING", "0.5"), ("HARI", "30"), ("MAKS", "5000")):
        monkeypatch.setenv(f"ASRAMA_PERUBAHAN_{name}", value)
    settings = ServiceSettings()
    assert (settings.perubahan_ping, settings.perubahan_hari, settings.perubahan_maks) == (0.5, 30, 5000)
    monkeypatch.setenv("ASRAMA_PERUBAHAN_PING", "0")
    with pytest.raises(ValueError, match="perubahan_ping"):
        ServiceSettings()
