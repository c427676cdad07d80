"""ajukan_izin shows each day whose attendance it changes and carries those old records: when a colleague records
one of the days between the question and the write, the service refuses the whole izin (409 `berubah`), the tool
says so and writes nothing, and the next call asks again with that day's record shown, then writes. A service that
does not mark `nilai-lama` is sent no old values and writes as before. In memory, both eras, against the real data
service."""

import json
from typing import Any

import httpx2
import pytest
from fastapi import FastAPI

from mcp_asrama.server.features.izin import CHANGED
from tests.conftest import service_client
from tests.server.features.test_writes import Person
from tests.server.features.test_writes_changed import Upstream, writer
from tests.server.support import call_error, call_ok

pytestmark = pytest.mark.anyio

DAYS = ("2026-10-20", "2026-10-21", "2026-10-22")  # no records in the seed
LEAVE = {"id_anak": "A001", "dari": DAYS[0], "sampai": DAYS[-1], "jenis": "pulang", "alasan": "Acara keluarga"}
HEAD = (
    "Ajukan izin pulang untuk Ahmad Fauzi (A001): 2026-10-20 s.d. 2026-10-22 (3 hari).\n"
    "Alasan: Acara keluarga\n"
    "Yang berubah:\n"
)
TAIL = "Absensi lama tetap tersimpan di riwayat. Setujui untuk mencatat?"


async def record(app: FastAPI, tanggal: str, status: str, keterangan: str | None = None) -> None:
    async with service_client(app) as rest:
        body = {"status": status, "keterangan": keterangan}
        assert (await rest.put(f"/absensi/{tanggal}/A001", json=body)).status_code == 200


async def days(rest: httpx2.AsyncClient) -> dict[str, tuple[str, str | None]]:
    """A001's records of the leave's days."""
    found: dict[str, tuple[str, str | None]] = {}
    for tanggal in DAYS:
        rows = (await rest.get("/absensi", params={"tanggal": tanggal, "id_anak": "A001"})).json()["data"]
        found.update((tanggal, (r["status"], r.get("keterangan"))) for r in rows)
    return found


async def izin_of_a001(rest: httpx2.AsyncClient) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = (await rest.get("/izin", params={"id_anak": "A001"})).json()["data"]
    return data


async def test_the_question_lists_each_day_that_changes_and_the_write_carries_those_records(
    service_app: FastAPI, era: str
) -> None:
    await record(service_app, DAYS[0], "hadir")
    await record(service_app, DAYS[1], "izin", "Sudah pamit")
    upstream, person = Upstream(service_app, path="/izin"), Person()
    async with writer(upstream, era, person) as client:
        body = await call_ok(client, "ajukan_izin", LEAVE)
    assert body["hasil"] == "ditulis"
    assert person.asked == [
        HEAD + "- 2026-10-20: hadir → izin\n- 2026-10-22: belum dicatat → izin\n"
        "Absensi 1 tanggal yang sudah tercatat izin tetap izin.\n" + TAIL
    ]
    [sent] = upstream.bodies
    assert json.loads(sent)["absensi_lama"] == [
        {"tanggal": DAYS[0], "status_lama": "hadir", "keterangan_lama": None},
        {"tanggal": DAYS[1], "status_lama": "izin", "keterangan_lama": "Sudah pamit"},
        {"tanggal": DAYS[2], "status_lama": "belum_dicatat", "keterangan_lama": None},
    ]


async def test_a_day_recorded_after_the_answer_writes_nothing_and_the_next_call_asks_again(
    service_app: FastAPI, era: str
) -> None:
    upstream, person = Upstream(service_app, path="/izin"), Person()
    upstream.before_write = lambda: record(service_app, DAYS[1], "hadir")
    async with writer(upstream, era, person) as client, service_client(service_app) as rest:
        assert await call_error(client, "ajukan_izin", LEAVE) == CHANGED
        assert await days(rest) == {DAYS[1]: ("hadir", None)}
        assert await izin_of_a001(rest) == []
        body = await call_ok(client, "ajukan_izin", LEAVE)
        assert await days(rest) == {d: ("izin", "Izin pulang") for d in DAYS}
        assert [i["id"] for i in await izin_of_a001(rest)] == [body["izin"]["id"]]
    assert len(person.asked) == 2
    assert "- 2026-10-21: belum dicatat → izin\n" in person.asked[0]
    assert "- 2026-10-21: hadir → izin\n" in person.asked[1]
    assert person.asked[1].count(": belum dicatat → izin\n") == 2


async def test_on_the_handshake_a_day_recorded_while_the_person_reads_is_not_overwritten(
    service_app: FastAPI,
) -> None:
    """Asked in the middle of the call, the plan is not built again: the old records it carries stop the write."""
    upstream, person = Upstream(service_app, path="/izin"), Person()
    person.before_answer = lambda: record(service_app, DAYS[2], "sakit", "Demam")
    async with writer(upstream, "legacy", person) as client, service_client(service_app) as rest:
        assert await call_error(client, "ajukan_izin", LEAVE) == CHANGED
        assert await days(rest) == {DAYS[2]: ("sakit", "Demam")}
        assert await izin_of_a001(rest) == []
        await call_ok(client, "ajukan_izin", LEAVE)
        assert await days(rest) == {d: ("izin", "Izin pulang") for d in DAYS}
    assert len(person.asked) == 2 and "- 2026-10-22: sakit → izin\n" in person.asked[1]


async def test_a_service_without_the_mark_gets_no_old_values_and_writes_as_before(
    service_app: FastAPI, era: str
) -> None:
    upstream = Upstream(service_app, marks_old_values=False, path="/izin")
    upstream.before_write = lambda: record(service_app, DAYS[1], "hadir")
    async with writer(upstream, era, Person()) as client, service_client(service_app) as rest:
        body = await call_ok(client, "ajukan_izin", LEAVE)
        assert await days(rest) == {d: ("izin", "Izin pulang") for d in DAYS}
    assert body["hasil"] == "ditulis"
    [sent] = upstream.bodies
    assert b"absensi_lama" not in sent
