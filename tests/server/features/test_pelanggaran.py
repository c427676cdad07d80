"""Discipline: one student's violations and the summary follow the scope (musyrif: his rooms, wali kelas: his class,
bk: every student, office: all), the note and who recorded it never leave, and a violation is recorded only after
the person confirms. Against the leaky upstream (every student has one `membawa_hp`, 25 points), then the real
service."""

import json
from typing import Any

import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitResult

from tests.conftest import service_client
from tests.server.conftest import connect, server_for
from tests.server.support import call_error, call_ok, leaky_upstream
from tests.server.support_records import CLINIC, RECORD_EXTRAS, seed_pelanggaran

pytestmark = pytest.mark.anyio

RANGE = {"dari": "2026-10-01", "sampai": "2026-10-31"}
# scope -> the students whose violations it sees
SEES = [
    (["kamar:Aisyah 2"], ["A003"]),
    (["kelas:7A"], ["A001", "A003"]),
    (["peran:bk"], ["A001", "A002", "A003"]),
    (["kamar:Aisyah 2", "peran:bk"], ["A001", "A002", "A003"]),
    (CLINIC, ["A001", "A002", "A003"]),
    (["all"], ["A001", "A002", "A003"]),
    ([], []),
]


@pytest.mark.parametrize(("scope", "seen"), SEES)
async def test_violations_follow_the_scope_and_bk_sees_everyone(era: str, scope: list[str], seen: list[str]) -> None:
    async with connect(server_for(leaky_upstream(), stdio_scope=scope), era) as client:
        rekap = await call_ok(client, "rekap_pelanggaran", RANGE)
        assert rekap["jumlah_anak"] == len(seen)
        assert sorted(r["id_anak"] for r in rekap["poin_terbanyak"]) == seen
        assert rekap["total"] == {
            "ringan": 0,
            "sedang": len(seen),
            "berat": 0,
            "jumlah": len(seen),
            "poin": 25 * len(seen),
        }
        for id_anak in ("A001", "A002", "A003"):
            if id_anak in seen:
                body = await call_ok(client, "pelanggaran_anak", {"id_anak": id_anak})
                assert (body["jumlah"], body["poin"], body["per_kategori"]) == (
                    1,
                    25,
                    {"ringan": 0, "sedang": 1, "berat": 0},
                )
                assert body["data"][0]["id_pelanggaran"] == f"p-{id_anak}"
                resource = await client.read_resource(f"asrama://anak/{id_anak}/pelanggaran")
                assert json.loads(resource.contents[0].text) == body
            else:
                hidden = await call_error(client, "pelanggaran_anak", {"id_anak": id_anak})
                unknown = await call_error(client, "pelanggaran_anak", {"id_anak": "X999"})
                assert hidden.replace(id_anak, "X") == unknown.replace("X999", "X")
                with pytest.raises(MCPError):
                    await client.read_resource(f"asrama://anak/{id_anak}/pelanggaran")


async def test_the_note_and_who_recorded_it_never_leave(era: str) -> None:
    async with connect(server_for(leaky_upstream()), era) as client:
        texts = [json.dumps(await call_ok(client, "pelanggaran_anak", {"id_anak": "A001"}))]
        texts.append(json.dumps(await call_ok(client, "rekap_pelanggaran", RANGE)))
    assert not any(value in text for value in RECORD_EXTRAS.values() for text in texts)


async def test_a_range_is_checked_before_asking_the_service(era: str) -> None:
    async with connect(server_for(leaky_upstream()), era) as client:
        backwards = await call_error(client, "rekap_pelanggaran", {"dari": "2026-10-31", "sampai": "2026-10-01"})
        too_long = await call_error(
            client, "pelanggaran_anak", {"id_anak": "A001", "dari": "2025-01-01", "sampai": "2026-10-31"}
        )
    assert "sampai" in backwards and "366" in too_long


def person(answers: list[str], action: str = "decline") -> Any:
    async def answer(_ctx: Any, params: Any) -> ElicitResult:
        answers.append(params.message)
        return ElicitResult(action=action, content={"setuju": True} if action == "accept" else None)  # type: ignore[arg-type]

    return answer


async def test_recording_a_violation_asks_first_and_a_decline_writes_nothing(era: str) -> None:
    asked: list[str] = []
    server = server_for(leaky_upstream(), writes=True, stdio_scope=["kamar:Aisyah 2"])
    async with Client(server, mode=era, cache=None, elicitation_callback=person(asked)) as client:
        body = await call_ok(
            client,
            "catat_pelanggaran",
            {"id_anak": "A003", "tanggal": "2026-10-06", "jenis": "membawa_hp", "keterangan": "di kelas"},
        )
        outside = await call_error(
            client, "catat_pelanggaran", {"id_anak": "A001", "tanggal": "2026-10-06", "jenis": "membawa_hp"}
        )
        unknown_kind = await call_error(
            client, "catat_pelanggaran", {"id_anak": "A003", "tanggal": "2026-10-06", "jenis": "terbang"}
        )
        future = await call_error(
            client, "catat_pelanggaran", {"id_anak": "A003", "tanggal": "2999-01-01", "jenis": "membawa_hp"}
        )
    assert body["hasil"] == "ditolak"
    assert asked == [
        "Catat pelanggaran sedang untuk Citra Lestari (A003) pada 2026-10-06: Membawa HP, 25 poin.\n"
        "Keterangan: di kelas\nSetujui untuk mencatat?"
    ]
    assert "tidak ditemukan" in outside and "membawa_hp" in unknown_kind and "hari ini" in future


# --- against the real data service -------------------------------------------------------------------------------

REAL = [(["kamar:Aisyah 2"], {"A003"}), (["kelas:7A"], {"A001", "A003"}), (["peran:bk"], {"A001", "A002", "A003"}),
        (CLINIC, {"A001", "A002", "A003"}), (["all"], {"A001", "A002", "A003"})]  # fmt: skip


@pytest.mark.parametrize(("scope", "seen"), REAL)
async def test_real_violations_follow_the_scope(
    service_app: FastAPI, era: str, scope: list[str], seen: set[str]
) -> None:
    await seed_pelanggaran(service_app)
    async with connect(server_for(service_app, stdio_scope=scope), era) as client:
        rekap = await call_ok(client, "rekap_pelanggaran", RANGE)
        assert {r["id_anak"] for r in rekap["poin_terbanyak"]} == seen and rekap["jumlah_anak"] == len(seen)
        outputs = [json.dumps(rekap)]
        for id_anak in ("A001", "A002", "A003"):
            if id_anak in seen:
                body = await call_ok(client, "pelanggaran_anak", {"id_anak": id_anak, **RANGE})
                assert body["jumlah"] == 1 and body["poin"] > 0
                resource = await client.read_resource(f"asrama://anak/{id_anak}/pelanggaran")
                outputs.append(resource.contents[0].text)
            else:
                await call_error(client, "pelanggaran_anak", {"id_anak": id_anak})
    assert "catatan-rahasia" not in "".join(outputs) and "seed" not in "".join(outputs)


@pytest.mark.parametrize("action", ["accept", "decline", "cancel"])
async def test_a_musyrif_records_a_violation_only_when_confirmed(service_app: FastAPI, era: str, action: str) -> None:
    asked: list[str] = []

    async def answer(_ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action=action, content={"setuju": True} if action == "accept" else None)  # type: ignore[arg-type]

    arguments = {"id_anak": "A003", "tanggal": "2026-10-06", "jenis": "membawa_hp", "keterangan": "di kelas"}
    server = server_for(service_app, writes=True, stdio_scope=["kamar:Aisyah 2"])
    async with Client(server, mode=era, cache=None, elicitation_callback=answer) as client:
        body = await call_ok(client, "catat_pelanggaran", arguments)
        outside = await call_error(client, "catat_pelanggaran", {**arguments, "id_anak": "A001"})
    async with service_client(service_app) as rest:
        stored = (await rest.get("/pelanggaran", params={"id_anak": "A003"})).json()["data"]
    assert len(asked) == 1 and "Citra Lestari (A003)" in asked[0] and "tidak ditemukan" in outside
    if action == "accept":
        assert body["hasil"] == "ditulis" and body["pelanggaran"]["jenis"] == "membawa_hp"
        assert [(r["jenis"], r["poin"], r["id"]) for r in stored] == [
            ("membawa_hp", body["pelanggaran"]["poin"], body["pelanggaran"]["id_pelanggaran"])
        ]
    else:
        assert body["hasil"] in ("ditolak", "dibatalkan") and stored == []
