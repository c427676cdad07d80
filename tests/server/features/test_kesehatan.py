"""Health stays with the clinic: kesehatan_anak and catat_kunjungan_klinik only for `peran:kesehatan` (anyone else
is told who can see it, and the service is not even asked), rekap_kesehatan refused to anyone else in a school too
small to count (test_kesehatan_rekap has the rules), and audit lines of health disclosures marked. Against the
leaky upstream (health values in every visit it sends), then the real data service."""

import json
from datetime import date
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitResult

from mcp_asrama.client import AsramaClient, make_http_client
from mcp_asrama.server.features.kesehatan import rencana_kunjungan
from mcp_asrama.server.features.kesehatan_rekap import KATEGORI_KESEHATAN
from mcp_asrama.server.guard.access import Akses
from mcp_asrama.server.guard.scoped import CLINIC_ONLY, ScopedReader
from tests.conftest import service_client
from tests.server.conftest import connect, server_for
from tests.server.support import Recording, call_error, call_ok, leaky_upstream
from tests.server.support_records import CLINIC, HEALTH, SECRET, SECRET_VALUES, seed_kesehatan

pytestmark = pytest.mark.anyio

RANGE = {"dari": "2026-10-01", "sampai": "2026-10-31"}
NOT_CLINIC = [["kamar:Aisyah 2"], ["kelas:7A"], ["peran:bk"], ["all"], ["all", "peran:bk"]]


@pytest.mark.parametrize("scope", NOT_CLINIC)
async def test_kesehatan_anak_for_anyone_but_the_clinic_says_who_can_see_it(era: str, scope: list[str]) -> None:
    upstream = Recording(leaky_upstream())
    async with connect(server_for(upstream, stdio_scope=scope), era) as client:
        known = await call_error(client, "kesehatan_anak", {"id_anak": "A003"})
        unknown = await call_error(client, "kesehatan_anak", {"id_anak": "X999"})
    assert known == unknown and "petugas klinik" in known and "peran:kesehatan" in known
    assert "rekap_kesehatan" in known
    assert not any(path.startswith(b"/kesehatan") for path in upstream.paths)


async def test_the_clinic_reads_a_students_visits_with_their_details(era: str) -> None:
    async with connect(server_for(leaky_upstream(), stdio_scope=CLINIC), era) as client:
        body = await call_ok(client, "kesehatan_anak", {"id_anak": "A002", **RANGE})
    assert (body["id_anak"], body["jumlah_kunjungan"], body["per_kategori"]) == ("A002", 1, {"demam": 1})
    visit = body["kunjungan"][0]
    assert (visit["keluhan"], visit["obat"], visit["id_kunjungan"]) == (
        "keluhan-rahasia-A002",
        "obat-rahasia-A002",
        "k-A002",
    )
    assert "penguji" not in visit and "Keterangan-Rahasia" not in json.dumps(body)


async def test_a_clinic_limited_to_a_room_sees_only_its_students(era: str) -> None:
    async with connect(server_for(leaky_upstream(), stdio_scope=["kamar:Aisyah 2", "peran:kesehatan"]), era) as c:
        assert (await call_ok(c, "kesehatan_anak", {"id_anak": "A003"}))["jumlah_kunjungan"] == 1
        hidden = await call_error(c, "kesehatan_anak", {"id_anak": "A001"})
    assert "tidak ditemukan" in hidden


@pytest.mark.parametrize("scope", NOT_CLINIC)
async def test_rekap_kesehatan_of_a_small_school_is_refused_to_anyone_but_the_clinic(
    era: str, scope: list[str]
) -> None:
    async with connect(server_for(leaky_upstream(), stdio_scope=scope), era) as client:
        refused = await call_error(client, "rekap_kesehatan", RANGE)
    assert "Rekap kesehatan ditolak" in refused and not any(value in refused for value in HEALTH)


async def test_the_clinic_gets_exact_counts_and_nothing_the_service_leaked(era: str) -> None:
    async with connect(server_for(leaky_upstream(), stdio_scope=CLINIC), era) as client:
        body = await call_ok(client, "rekap_kesehatan", RANGE)
    text = json.dumps(body)
    assert not any(value in text for value in HEALTH) and "A00" not in text
    demam = body["per_kategori"][0]
    assert (body["kunjungan"], demam["kategori"], demam["kunjungan"]) == (3, "demam", 3)
    assert all(row["kunjungan"] == 0 for row in body["per_kategori"][1:])


async def test_health_disclosures_are_marked_in_the_audit_log(tmp_path: Path, era: str) -> None:
    path = tmp_path / "audit.jsonl"
    async with connect(server_for(leaky_upstream(), stdio_scope=CLINIC, audit_log=path), era) as client:
        await call_ok(client, "kesehatan_anak", {"id_anak": "A001"})
        await call_ok(client, "rekap_kesehatan", RANGE)
        await call_ok(client, "detail_anak", {"id_anak": "A001"})
    lines = [json.loads(line) for line in path.read_bytes().splitlines()]
    marked = {(e["target"], e.get("kesehatan")) for e in lines if e["method"] == "tools/call"}
    assert marked == {("kesehatan_anak", True), ("rekap_kesehatan", True), ("detail_anak", None)}
    assert not any(value in path.read_text() for value in HEALTH)


def clinic_writer(scope: list[str], era: str, answers: list[str]) -> Client:
    async def person(_ctx: Any, params: Any) -> ElicitResult:
        answers.append(params.message)
        return ElicitResult(action="decline")

    server = server_for(leaky_upstream(), stdio_scope=scope, writes=True)
    return Client(server, mode=era, cache=None, elicitation_callback=person)


@pytest.mark.parametrize("scope", NOT_CLINIC)
async def test_catat_kunjungan_klinik_does_not_exist_for_anyone_but_the_clinic(era: str, scope: list[str]) -> None:
    async with clinic_writer(scope, era, []) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert "catat_pelanggaran" in names and "catat_setoran_hafalan" in names
        assert "catat_kunjungan_klinik" not in names
        with pytest.raises(MCPError) as refused:
            await client.call_tool(
                "catat_kunjungan_klinik",
                {"id_anak": "A001", "tanggal": "2026-10-06", "keluhan": "pusing", "kategori": "lainnya"},
            )
    assert refused.value.error.code == -32602


async def test_the_clinics_question_names_the_visit_and_a_decline_writes_nothing(era: str, tmp_path: Path) -> None:
    asked: list[str] = []
    arguments = {"id_anak": "A001", "tanggal": "2026-10-06", "keluhan": "pusing sejak pagi", "kategori": "lainnya",
                 "obat": "parasetamol"}  # fmt: skip
    async with clinic_writer(CLINIC, era, asked) as client:
        assert "catat_kunjungan_klinik" in [t.name for t in (await client.list_tools()).tools]
        body = await call_ok(client, "catat_kunjungan_klinik", arguments)
    assert body["hasil"] == "ditolak"
    assert asked == [
        "Catat kunjungan klinik Ahmad Fauzi (A001) pada 2026-10-06, kategori lainnya.\n"
        "Keluhan: pusing sejak pagi\nObat: parasetamol\nSetujui untuk mencatat?"
    ]


# --- against the real data service -------------------------------------------------------------------------------

REAL = [(["kamar:Aisyah 2"], set()), (["kelas:7A"], {"A001"}), (["peran:bk"], set()), (["all"], {"A001", "A002"}),
        (CLINIC, {"A001", "A002"})]  # fmt: skip


@pytest.mark.parametrize(("scope", "visited"), REAL)
async def test_real_visits_and_a_small_schools_counts_reach_only_the_clinic(
    service_app: FastAPI, era: str, scope: list[str], visited: set[str]
) -> None:
    await seed_kesehatan(service_app)
    async with connect(server_for(service_app, stdio_scope=scope), era) as client:
        rekap = await client.call_tool("rekap_kesehatan", RANGE)
        outputs = [rekap.model_dump_json()]
        for id_anak in ("A001", "A002", "A003"):
            outcome = await client.call_tool("kesehatan_anak", {"id_anak": id_anak})
            outputs.append(outcome.model_dump_json())
            assert outcome.is_error == (scope != CLINIC)
    assert rekap.is_error == (scope != CLINIC)  # a school of a few students: counts for the clinic only
    if scope == CLINIC:
        body = rekap.structured_content or {}
        assert (body["kunjungan"], body["anak"]) == (len(visited), len(visited))
        assert [r["kategori"] for r in body["per_kategori"]] == list(KATEGORI_KESEHATAN)
    text = "\n".join(outputs)
    assert ("A00" in outputs[0], SECRET["obat"] in text) == (False, scope == CLINIC)
    if scope != CLINIC:
        assert not any(value in text for value in SECRET_VALUES)


@pytest.mark.parametrize("action", ["accept", "decline"])
async def test_the_clinic_records_a_visit_when_confirmed_and_the_audit_marks_it(
    service_app: FastAPI, era: str, tmp_path: Path, action: str
) -> None:
    asked: list[str] = []

    async def person(_ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action=action, content={"setuju": True} if action == "accept" else None)  # type: ignore[arg-type]

    log = tmp_path / "audit.jsonl"
    server = server_for(service_app, writes=True, stdio_scope=CLINIC, audit_log=log)
    arguments = {"id_anak": "A003", "tanggal": "2026-10-06", "kategori": "cedera", **SECRET}
    async with Client(server, mode=era, cache=None, elicitation_callback=person) as client:
        body = await call_ok(client, "catat_kunjungan_klinik", arguments)
        visits = await call_ok(client, "kesehatan_anak", {"id_anak": "A003"})
    async with service_client(service_app) as rest:
        stored = (await rest.get("/kesehatan", params={"id_anak": "A003"})).json()["data"]
    assert len(asked) == 1 and SECRET["obat"] in asked[0]
    if action == "accept":
        assert body["hasil"] == "ditulis" and body["kunjungan"]["obat"] == SECRET["obat"]
        assert visits["per_kategori"] == {"cedera": 1} and visits["kunjungan"][0]["rujukan"] == SECRET["rujukan"]
        assert [(v["kategori"], v["keluhan"], v["id"]) for v in stored] == [
            ("cedera", SECRET["keluhan"], body["kunjungan"]["id_kunjungan"])
        ]
    else:
        assert body["hasil"] == "ditolak" and stored == [] and visits["jumlah_kunjungan"] == 0
    calls = [e for e in (json.loads(line) for line in log.read_bytes().splitlines()) if e["method"] == "tools/call"]
    rounds = [e for e in calls if e["target"] == "catat_kunjungan_klinik"]  # 2026-07-28: asked, then answered
    assert rounds and all(e.get("kesehatan") is True and e["disclosed"] == ["A003"] for e in rounds)
    assert rounds[-1]["write"]["confirmation"] == ("accepted" if action == "accept" else "declined")
    assert not any(value in log.read_text() for value in SECRET.values())


@pytest.mark.parametrize("scope", NOT_CLINIC)
async def test_a_visit_planned_again_for_anyone_but_the_clinic_is_refused_before_the_service_is_asked(
    scope: list[str],
) -> None:
    # An usulan decided later builds its plan again outside tools/call: the guard's policy refuses it there too.
    upstream = Recording(leaky_upstream())
    http = make_http_client(
        "http://127.0.0.1:8000", token=None, timeout=5, transport=httpx2.ASGITransport(app=upstream)
    )
    async with http:
        reader = ScopedReader(AsramaClient(http), Akses.parse(scope))
        with pytest.raises(ToolError) as refused:
            await rencana_kunjungan(reader, "A001", date(2026, 10, 6), "pusing", "lainnya")
    assert str(refused.value) == CLINIC_ONLY and upstream.paths == []


@pytest.mark.parametrize("scope", NOT_CLINIC)
async def test_kesehatan_anak_is_listed_to_everyone_and_answered_only_to_the_clinic(era: str, scope: list[str]) -> None:
    upstream = Recording(leaky_upstream())
    async with connect(server_for(upstream, stdio_scope=scope), era) as client:
        assert "kesehatan_anak" in [t.name for t in (await client.list_tools()).tools]
        refused = await call_error(client, "kesehatan_anak", {"id_anak": "A001"})
    assert refused == CLINIC_ONLY and upstream.paths == []
