"""Who may write for whom: every role × every write tool, against the real data service, every answer accepted.
Writes follow the room/class scope only: a role alone writes nothing; `peran:bk` widens what may be *read*
(violations), never what may be written; the clinic records visits only for the students in its scope; no one but
the clinic records a visit. What was written is read back from the service itself."""

from datetime import date
from typing import Any

import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitResult

from mcp_asrama.server.features.pelanggaran import BK_READS
from tests.conftest import service_client
from tests.server.conftest import server_for
from tests.server.support import text_of

# The six tools that plan a write (the view's decision is tested apart); the server derives the list itself.
WRITE_TOOLS = {"catat_absensi", "ajukan_izin", "akhiri_izin", "catat_pelanggaran", "catat_setoran_hafalan",
               "catat_kunjungan_klinik"}  # fmt: skip
CLINIC_TOOLS = {"catat_kunjungan_klinik"}
pytestmark = pytest.mark.anyio

STUDENTS = ("A001", "A002", "A003")  # 7A Al-Fatih 1, 8B Al-Fatih 1, 7A Aisyah 2
ROLL_CALL_DAY = "2026-10-20"
OLD_IZIN_DAY = "2026-10-01"  # an izin of each student, to be ended
TODAY = date.today().isoformat()

# scope -> the students it may write for (the room/class scope, whatever the roles)
SCOPES: list[tuple[list[str], set[str]]] = [
    (["peran:bk"], set()),
    (["peran:kesehatan"], set()),
    (["peran:bk", "peran:kesehatan"], set()),
    ([], set()),
    (["kamar:Aisyah 2", "peran:bk"], {"A003"}),
    (["kelas:8B", "peran:bk"], {"A002"}),
    (["kamar:Aisyah 2"], {"A003"}),
    (["kelas:7A"], {"A001", "A003"}),
    (["kamar:Al-Fatih 1", "peran:kesehatan"], {"A001", "A002"}),
    (["all", "peran:bk"], set(STUDENTS)),
    (["all", "peran:kesehatan"], set(STUDENTS)),
]


def arguments(tool: str, id_anak: str, izin: dict[str, str]) -> dict[str, Any]:
    """One valid call of `tool` for `id_anak`."""
    return {
        "catat_absensi": {"tanggal": ROLL_CALL_DAY, "entri": [{"id_anak": id_anak, "status": "hadir"}]},
        "ajukan_izin": {"id_anak": id_anak, "dari": TODAY, "sampai": TODAY, "jenis": "pulang", "alasan": "Acara"},
        "akhiri_izin": {"id_izin": izin[id_anak], "tanggal_kembali": OLD_IZIN_DAY},
        "catat_pelanggaran": {"id_anak": id_anak, "tanggal": ROLL_CALL_DAY, "jenis": "membawa_hp"},
        "catat_setoran_hafalan": {
            "id_anak": id_anak,
            "tanggal": ROLL_CALL_DAY,
            "jenis": "ziyadah",
            "surah": 67,
            "ayat_mulai": 1,
            "ayat_selesai": 5,
        },
        "catat_kunjungan_klinik": {
            "id_anak": id_anak,
            "tanggal": ROLL_CALL_DAY,
            "keluhan": "demam",
            "kategori": "demam",
        },
    }[tool]


async def old_izin(app: FastAPI) -> dict[str, str]:
    """A one-day izin of each student on OLD_IZIN_DAY, made at the service: id_anak -> its id."""
    made: dict[str, str] = {}
    async with service_client(app) as rest:
        for n, id_anak in enumerate(STUDENTS):
            body = {"id_anak": id_anak, "dari": OLD_IZIN_DAY, "sampai": OLD_IZIN_DAY, "jenis": "sakit", "alasan": "x"}
            answer = await rest.post("/izin", json=body, headers={"Idempotency-Key": f"seed-izin-0000-{n:04d}"})
            assert answer.status_code == 201, answer.text
            made[id_anak] = answer.json()["id"]
    return made


async def written(app: FastAPI) -> dict[str, set[str]]:
    """Write tool -> the students the service holds its record for."""
    async with service_client(app) as rest:

        async def rows(path: str, **params: str) -> list[dict[str, Any]]:
            answer = await rest.get(path, params=params)
            assert answer.status_code == 200, answer.text
            data = answer.json()["data"]
            assert isinstance(data, list)
            return data

        izin = await rows("/izin")
        return {
            "catat_absensi": {r["id_anak"] for r in await rows("/absensi", tanggal=ROLL_CALL_DAY)},
            "ajukan_izin": {r["id_anak"] for r in izin if r["dari"] == TODAY},
            "akhiri_izin": {r["id_anak"] for r in izin if r["dari"] == OLD_IZIN_DAY and r.get("tanggal_kembali")},
            "catat_pelanggaran": {r["id_anak"] for r in await rows("/pelanggaran")},
            "catat_setoran_hafalan": {r["id_anak"] for r in await rows("/hafalan")},
            "catat_kunjungan_klinik": {r["id_anak"] for r in await rows("/kesehatan")},
        }


async def accept(_ctx: Any, _params: Any) -> ElicitResult:
    return ElicitResult(action="accept", content={"setuju": True})


@pytest.mark.parametrize(("scope", "in_scope"), SCOPES)
async def test_every_write_follows_the_room_and_class_scope_whatever_the_roles(
    service_app: FastAPI, era: str, scope: list[str], in_scope: set[str]
) -> None:
    izin = await old_izin(service_app)
    assert await written(service_app) == {tool: set() for tool in WRITE_TOOLS}
    clinic = "peran:kesehatan" in scope
    refusals: dict[tuple[str, str], str] = {}
    server = server_for(service_app, writes=True, stdio_scope=scope)
    async with Client(server, mode=era, cache=None, elicitation_callback=accept) as client:
        for tool in sorted(WRITE_TOOLS):
            for id_anak in STUDENTS:
                try:
                    result = await client.call_tool(tool, arguments(tool, id_anak, izin))
                except MCPError as exc:  # a tool this caller is not offered (the clinic's)
                    assert tool in CLINIC_TOOLS and not clinic and exc.error.code == -32602, exc.error
                    continue
                if result.is_error:
                    refusals[tool, id_anak] = text_of(result)
                else:
                    assert result.structured_content is not None
                    assert result.structured_content["hasil"] == "ditulis", (tool, id_anak, result)
    expected = {tool: set(in_scope) if tool not in CLINIC_TOOLS or clinic else set() for tool in WRITE_TOOLS}
    assert await written(service_app) == expected
    for (tool, id_anak), text in refusals.items():  # each refusal is a short, clear tool error
        assert id_anak not in expected[tool] and "Traceback" not in text and len(text) < 300, (tool, text)
    if "peran:bk" in scope:  # the counsellor is told why a student he may read is not his to record for
        for id_anak in set(STUDENTS) - in_scope:
            assert refusals["catat_pelanggaran", id_anak] == BK_READS
