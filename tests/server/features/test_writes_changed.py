"""A confirmed roll call carries the old records the person was shown: when someone else recorded one of those students
after the answer, the service refuses the whole write (409 `berubah`), the tool says so and writes nothing, and the
next call asks again with the new question (which keeps the other's record). A service that does not mark
`nilai-lama` is sent no old values and writes as before. Ending an izin someone else ended is refused. In memory,
both eras, against the real data service."""

from collections.abc import Awaitable, Callable
from datetime import date, timedelta
from typing import Any

import pytest
from fastapi import FastAPI
from mcp import Client

from mcp_asrama.contract import FILTER_GANDA, FITUR_HEADER
from mcp_asrama.server.features.catat_absensi import CHANGED
from tests.conftest import service_client
from tests.server.conftest import server_for
from tests.server.features.test_writes import FRESH_DAY, Person, day_of
from tests.server.support import Receive, Scope, Send, call_error, call_ok

pytestmark = pytest.mark.anyio

KEPT_A001 = "\n1 anak yang sudah tercatat sakit, izin atau alpa tidak diubah.\n"  # A001's alpa, by another writer

ROLL_CALL = {
    "tanggal": FRESH_DAY,
    "kamar": "Al-Fatih 1",
    "yang_lain": "hadir",
    "entri": [{"id_anak": "A002", "status": "sakit", "keterangan": "Demam"}],
}


class Upstream:
    """The data service as reached by the MCP server: runs `before_write` once when the first write under `path`
    arrives (another writer gets there first), keeps every such write's body, and may hide the `nilai-lama` mark."""

    def __init__(self, app: FastAPI, *, marks_old_values: bool = True, path: str = "/absensi/") -> None:
        self.app, self.marks_old_values, self.path = app, marks_old_values, path
        self.before_write: Callable[[], Awaitable[None]] | None = None
        self.bodies: list[bytes] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not scope["path"].startswith(self.path):
            await self.app(scope, receive, self._unmarked(send))
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.bodies.append(body)
        if self.before_write is not None:
            await self.before_write()
            self.before_write = None
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, self._unmarked(send))

    def _unmarked(self, send: Send) -> Send:
        async def forward(message: Any) -> None:
            if message["type"] == "http.response.start" and not self.marks_old_values:
                headers = [(k, v) for k, v in message["headers"] if k.decode().lower() != FITUR_HEADER.lower()]
                message = {**message, "headers": [*headers, (FITUR_HEADER.lower().encode(), FILTER_GANDA.encode())]}
            await send(message)

        return forward


def writer(upstream: Upstream, era: str, person: Person) -> Client:
    return Client(server_for(upstream, writes=True), mode=era, cache=None, elicitation_callback=person)


async def someone_records_a001(app: FastAPI) -> None:
    async with service_client(app) as rest:
        assert (await rest.put(f"/absensi/{FRESH_DAY}/A001", json={"status": "alpa"})).status_code == 200


async def test_a_record_changed_after_the_answer_writes_nothing_and_the_next_call_asks_again(
    service_app: FastAPI, era: str
) -> None:
    upstream, person = Upstream(service_app), Person()

    async def first_comes_another_writer() -> None:
        await someone_records_a001(service_app)

    upstream.before_write = first_comes_another_writer
    async with writer(upstream, era, person) as client, service_client(service_app) as rest:
        assert await call_error(client, "catat_absensi", ROLL_CALL) == CHANGED
        assert await day_of(rest, FRESH_DAY) == {"A001": ("alpa", None)}
        assert (await rest.get(f"/absensi/{FRESH_DAY}/A002/riwayat")).json()["data"] == []
        body = await call_ok(client, "catat_absensi", ROLL_CALL)
        assert await day_of(rest, FRESH_DAY) == {"A001": ("alpa", None), "A002": ("sakit", "Demam")}
    assert len(person.asked) == 2
    assert "- Ahmad Fauzi (A001): belum dicatat → hadir" in person.asked[0]
    assert KEPT_A001 in person.asked[1] and "(A001)" not in person.asked[1]
    assert body["hasil"] == "ditulis" and (body["baru"], body["diubah"], body["tetap"]) == (1, 0, 1)


async def test_on_the_handshake_a_record_changed_while_the_person_reads_is_not_overwritten(
    service_app: FastAPI,
) -> None:
    """Asked in the middle of the call, the plan is not built again: the old values it carries stop the write."""
    upstream, person = Upstream(service_app), Person()

    async def meanwhile() -> None:
        await someone_records_a001(service_app)

    person.before_answer = meanwhile
    async with writer(upstream, "legacy", person) as client, service_client(service_app) as rest:
        assert await call_error(client, "catat_absensi", ROLL_CALL) == CHANGED
        assert await day_of(rest, FRESH_DAY) == {"A001": ("alpa", None)}
        await call_ok(client, "catat_absensi", ROLL_CALL)
    assert len(person.asked) == 2 and KEPT_A001 in person.asked[1]


async def test_the_old_values_sent_are_the_ones_shown(service_app: FastAPI, era: str) -> None:
    upstream = Upstream(service_app)
    async with writer(upstream, era, Person()) as client:
        await call_ok(
            client, "catat_absensi", {"tanggal": "2026-10-07", "entri": [{"id_anak": "A003", "status": "hadir"}]}
        )
    [sent] = upstream.bodies
    assert b'"status_lama":"izin","keterangan_lama":"Masih di rumah"' in sent


async def test_a_service_without_the_mark_gets_no_old_values_and_writes_as_before(
    service_app: FastAPI, era: str
) -> None:
    upstream = Upstream(service_app, marks_old_values=False)
    upstream.before_write = lambda: someone_records_a001(service_app)
    async with writer(upstream, era, Person()) as client, service_client(service_app) as rest:
        body = await call_ok(client, "catat_absensi", ROLL_CALL)
        assert await day_of(rest, FRESH_DAY) == {"A001": ("hadir", None), "A002": ("sakit", "Demam")}
    assert body["hasil"] == "ditulis"
    [sent] = upstream.bodies
    assert b"status_lama" not in sent and b"keterangan_lama" not in sent


async def test_an_izin_ended_by_someone_else_meanwhile_keeps_their_return_day(service_app: FastAPI, era: str) -> None:
    """akhiri_izin overwrites nothing another wrote: an izin already ended is refused (409 at the service on the
    handshake, a new plan on 2026-07-28), and its return day stays the first one's."""
    today = date.today()
    async with service_client(service_app) as rest:
        made = await rest.post(
            "/izin",
            json={"id_anak": "A001", "dari": str(today - timedelta(days=1)), "sampai": str(today), "jenis": "pulang"},
        )
        handle = made.json()["id"]
        person = Person()

        async def colleague_ends_it() -> None:
            ended = await rest.post(f"/izin/{handle}/selesai", json={"tanggal_kembali": str(today - timedelta(days=1))})
            assert ended.status_code == 200

        person.before_answer = colleague_ends_it
        async with Client(
            server_for(service_app, writes=True), mode=era, cache=None, elicitation_callback=person
        ) as client:
            refused = await call_error(client, "akhiri_izin", {"id_izin": handle, "tanggal_kembali": str(today)})
        assert "sudah selesai" in refused
        assert (await rest.get(f"/izin/{handle}")).json()["tanggal_kembali"] == str(today - timedelta(days=1))
