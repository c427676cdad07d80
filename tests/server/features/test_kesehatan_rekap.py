"""Health counts that cannot single out a child (issue 19, the review's high finding), against the real data service.

The school mirrors the demo's weakness: each girl of Khadijah 4 is the only one of her class in that room, so
`kelas=8A, kamar=Khadijah 4` is one child. The review's attacks are replayed as every non-clinic role (the
one-child group's zero against its masked count, day by day, nested ranges, the total minus the categories) and
must recover nothing; the clinic still gets exact counts.
"""

import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from mcp import Client
from mcp_types import ElicitResult

from mcp_asrama.server.features.kesehatan_rekap import HIDDEN, TOTAL, complementary, hidden_classes
from tests.conftest import TOKEN, insert_rows, service_client
from tests.server.conftest import connect, make_service, server_for
from tests.server.support import call_error, call_ok, text_of
from tests.server.support_records import CLINIC

pytestmark = pytest.mark.anyio

OCTOBER = {"dari": "2026-10-01", "sampai": "2026-10-31"}
LONE = "P8A24"  # the one girl of 8A in Khadijah 4: her single skin complaint is what the attacks look for
NOT_CLINIC = [["all"], ["all", "peran:bk"], ["kelas:8A"], ["kamar:Khadijah 4"], ["kamar:Khadijah 4", "kelas:8A"],
              ["peran:bk"]]  # fmt: skip


async def decline(_ctx: Any, _params: Any) -> ElicitResult:
    return ElicitResult(action="decline")


def _students() -> list[dict[str, Any]]:
    rows = []
    for kelas, room in (("8A", "Khadijah 1"), ("8B", "Khadijah 2")):
        for n in range(1, 25):
            kamar = "Khadijah 4" if n == 24 else room
            rows.append({"id": f"P{kelas}{n:02d}", "nama": f"Santri {kelas} {n}", "kelas": kelas, "kamar": kamar,
                         "status": "aktif", "jenis_kelamin": "P"})  # fmt: skip
    return rows


VISITS = [
    *[(f"P8A{n:02d}", "demam", f"2026-10-{n + 2:02d}") for n in range(1, 7)],
    *[(f"P8B{n:02d}", "batuk-pilek", f"2026-10-{n + 10:02d}") for n in range(1, 8)],
    (LONE, "kulit", "2026-10-14"),
    ("P8B24", "cedera", "2026-10-20"),
    (LONE, "kulit", "2026-11-03"),
]


async def seed_school(db_url: str, alone: bool = False) -> FastAPI:
    """48 girls in two classes; four rooms, Khadijah 4 holding one girl of each class; October's visits (`alone`:
    one more girl, alone in class 9Z). The data service on it, its visits made through its own route."""
    rooms = [{"nama": f"Khadijah {i}", "gedung": "Putri", "kapasitas": 30, "musyrif": f"Usth. {i}"} for i in (1, 2, 4)]
    lone_class = [{"id": "P9Z01", "nama": "Santri 9Z", "kelas": "9Z", "kamar": "Khadijah 4", "status": "aktif"}]
    insert_rows(db_url, kamar=rooms, anak=_students() + (lone_class if alone else []), absensi=[])
    app = make_service(db_url)
    async with service_client(app, TOKEN) as rest:
        for n, (id_anak, kategori, tanggal) in enumerate(VISITS):
            body = {"id_anak": id_anak, "tanggal": tanggal, "kategori": kategori, "keluhan": "keluhan-rahasia"}
            made = await rest.post(
                "/kesehatan", json=body, headers={"Idempotency-Key": f"seed-kesehatan-visit-{n:04d}"}
            )
            assert made.status_code == 201, made.text
    return app


@pytest.fixture(params=[False])
async def school(db_url: str, request: pytest.FixtureRequest) -> Any:
    """The school of `seed_school` (param True: with the girl alone in 9Z)."""
    app = await seed_school(db_url, alone=request.param)
    yield app
    app.state.engine.dispose()


def test_a_hidden_category_hides_the_total_too() -> None:
    assert complementary({TOTAL: 12, "demam": 6, "batuk-pilek": 6, "kulit": 0}) == {"kulit", TOTAL}
    assert complementary({TOTAL: 12, "demam": 7, "kulit": 5}) == set()
    assert complementary({TOTAL: 3, "demam": 3, "kulit": 0}) == {"demam", "kulit", TOTAL}


def test_small_classes_are_hidden_with_the_smallest_others_until_their_difference_is_large() -> None:
    assert hidden_classes({"7a": 30, "7b": 25, "9z": 1}, 20) == {"9z", "7b"}
    assert hidden_classes({"7a": 30, "7b": 25}, 20) == set()
    assert hidden_classes({"7a": 30, "7b": 12, "7c": 9}, 20) == {"7b", "7c"}  # together 21: nothing more
    assert hidden_classes({"7a": 19}, 20) == {"7a"}


@pytest.mark.parametrize("school", [True], indirect=True)
async def test_the_school_minus_the_classes_shown_never_isolates_a_small_class(school: FastAPI, era: str) -> None:
    async with connect(server_for(school, stdio_scope=["all"]), era) as client:
        whole = await call_ok(client, "rekap_kesehatan", OCTOBER)
        small = await call_error(client, "rekap_kesehatan", {**OCTOBER, "kelas": "9Z"})
        hidden_too = await call_error(client, "rekap_kesehatan", {**OCTOBER, "kelas": "8A"})
        shown = await call_ok(client, "rekap_kesehatan", {**OCTOBER, "kelas": "8B"})
    assert whole["kelompok"] == "seluruh sekolah" and shown["kelompok"] == "kelas 8B"
    assert "kurang dari 20" in small and "selisih" in hidden_too  # the school minus 8B is 25 girls, not one


def nothing_recoverable(body: dict[str, Any]) -> None:
    """Every count shown is at least 5, and a hidden category leaves the total hidden (no total minus the rest)."""
    rows = body["per_kategori"]
    shown = [v for v in (body["kunjungan"], body["anak"], *[r[k] for r in rows for k in ("kunjungan", "anak")])
             if v != HIDDEN]  # fmt: skip
    assert all(isinstance(v, int) and v >= 5 for v in shown), body
    if any(r["kunjungan"] == HIDDEN for r in rows):
        assert body["kunjungan"] == HIDDEN and body["anak"] == HIDDEN, body


async def attacks(client: Client) -> list[dict[str, Any]]:
    """The review's attacks; returns every answer that was given (the refusals are checked here)."""
    answers = []
    one_child = [{**OCTOBER, "kelas": "8A", "kamar": "Khadijah 4"}, {**OCTOBER, "kamar": "Khadijah 4"}]
    one_child.append({**OCTOBER, "kamar": "Khadijah 1"})  # 8A minus the room of its 23 other girls is one child
    days = [{"dari": d, "sampai": d, "kelas": "8A"} for d in ("2026-10-13", "2026-10-14", "2026-10-15")]
    nested = [{"dari": "2026-10-01", "sampai": f"2026-10-{end}", "kelas": "8A"} for end in (13, 14, 30)]
    shifted = [{"dari": "2026-10-02", "sampai": "2026-11-01"}, {"dari": "2026-10-12", "sampai": "2026-10-18"}]
    for arguments in [*one_child, *days, *nested, *shifted]:
        message = await call_error(client, "rekap_kesehatan", arguments)
        assert "bulan kalender" in message and LONE not in message
    for arguments in (
        OCTOBER,
        {**OCTOBER, "kelas": "8A"},
        {**OCTOBER, "kelas": "8B"},
        {**OCTOBER, "kamar": "Khadijah 1"},
    ):
        result = await client.call_tool("rekap_kesehatan", arguments)
        if not result.is_error:
            assert isinstance(result.structured_content, dict)
            answers.append(result.structured_content)
    return answers


@pytest.mark.parametrize("scope", NOT_CLINIC)
async def test_the_reviews_attacks_recover_nothing_for_any_non_clinic_role(
    school: FastAPI, era: str, scope: list[str]
) -> None:
    async with connect(server_for(school, stdio_scope=scope), era) as client:
        answers = await attacks(client)
    for body in answers:
        nothing_recoverable(body)
        assert LONE not in json.dumps(body) and "keluhan-rahasia" not in json.dumps(body)
    by_group = {body["kelompok"]: body for body in answers}
    if "kelas 8A" in by_group:  # six fevers are shown; the lone girl's skin visit is hidden among the zeros
        eight_a = by_group["kelas 8A"]
        rows = {r["kategori"]: r for r in eight_a["per_kategori"]}
        assert (rows["demam"]["kunjungan"], rows["demam"]["anak"]) == (6, 6)
        assert rows["kulit"]["kunjungan"] == rows["cedera"]["kunjungan"] == HIDDEN
    everything = {"seluruh sekolah", "kelas 8A", "kelas 8B"}
    expected = everything if "all" in scope else {"kelas 8A"} if "kelas:8A" in scope else set()
    assert set(by_group) == expected


async def test_the_clinic_gets_exact_counts_for_any_range_and_group(school: FastAPI, era: str) -> None:
    async with connect(server_for(school, stdio_scope=CLINIC), era) as client:
        lone = await call_ok(client, "rekap_kesehatan", {**OCTOBER, "kelas": "8A", "kamar": "Khadijah 4"})
        day = await call_ok(client, "rekap_kesehatan", {"dari": "2026-10-14", "sampai": "2026-10-14"})
    rows = {r["kategori"]: r["kunjungan"] for r in lone["per_kategori"]}
    assert (lone["kunjungan"], lone["anak"], rows["kulit"], rows["demam"]) == (1, 1, 1, 0)
    assert day["kunjungan"] == 2  # the lone girl's and a cough in 8B


async def test_a_month_not_yet_ended_and_a_group_under_the_minimum_are_refused(school: FastAPI, era: str) -> None:
    first = date.today().replace(day=1)
    last = (first + timedelta(days=32)).replace(day=1) - timedelta(days=1)
    async with connect(server_for(school, stdio_scope=["all"], kesehatan_min_anak=25), era) as client:
        running = await call_error(client, "rekap_kesehatan", {"dari": str(first), "sampai": str(last)})
        small = await call_error(client, "rekap_kesehatan", {**OCTOBER, "kelas": "8A"})
        school_wide = await call_ok(client, "rekap_kesehatan", OCTOBER)
    assert "belum selesai" in running
    assert "kurang dari 25 anak" in small
    assert school_wide["kelompok"] == "seluruh sekolah"


async def test_health_counts_are_audited_as_health_aggregates_with_their_group(
    school: FastAPI, era: str, tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    async with connect(server_for(school, stdio_scope=["all"], audit_log=path), era) as client:
        result = await client.call_tool("rekap_kesehatan", {**OCTOBER, "kelas": "8A"})
        refused = await client.call_tool("rekap_kesehatan", {**OCTOBER, "kamar": "Khadijah 4"})
        await client.call_tool("rekap_kesehatan", OCTOBER)
    assert not result.is_error and refused.is_error, text_of(refused)
    lines = [json.loads(line) for line in path.read_bytes().splitlines()]
    calls = [(e["outcome"], e.get("kesehatan"), e.get("kelompok")) for e in lines if e["method"] == "tools/call"]
    assert calls == [("ok", True, {"kelas": "8A"}), ("tool_error", None, None), ("ok", True, {"sekolah": True})]


async def test_a_clinic_visits_category_is_not_kept_in_the_audit(school: FastAPI, era: str, tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    arguments = {"id_anak": "P8A01", "tanggal": "2026-10-20", "keluhan": "gatal-rahasia", "kategori": "kulit"}
    server = server_for(school, stdio_scope=CLINIC, writes=True, audit_log=path)
    async with Client(server, mode=era, cache=None, elicitation_callback=decline) as client:
        assert (await call_ok(client, "catat_kunjungan_klinik", arguments))["hasil"] == "ditolak"
    text = path.read_text()
    assert "catat_kunjungan_klinik" in text and "kulit" not in text and "gatal-rahasia" not in text
