"""The demo school: deterministic, plausible, consistent, and never written over existing data."""

import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from mcp_asrama.config import ServiceSettings
from mcp_asrama.service.app import create_app
from mcp_asrama.service.db import init_schema, make_engine, make_sessionmaker
from mcp_asrama.service.demo import DemoSchool, generate, seed_demo
from mcp_asrama.service.models import Absensi, Anak, Kamar
from mcp_asrama.service.schemas.anak import AnakIn
from mcp_asrama.service.schemas.kamar import KamarIn
from tests.conftest import TOKEN, TUTORIAL_ANAK, TUTORIAL_KAMAR, insert_rows, service_client

TODAY = date(2026, 10, 6)
ALL_CLASSES = {f"{grade}{group}" for grade in range(7, 13) for group in "ABC"}
TODAY_FOR_STATUS = {"aktif": {"hadir", "alpa"}, "izin": {"izin"}, "sakit": {"sakit"}, "pulang": {"izin"}}


@pytest.fixture(scope="module")
def school() -> DemoSchool:
    return generate(TODAY)


@pytest.fixture(scope="module")
def attendance(school: DemoSchool) -> list[dict[str, Any]]:
    return list(school.absensi())


def _digest(school: DemoSchool) -> str:
    rows = {"kamar": school.kamar, "anak": school.anak, "absensi": list(school.absensi())}
    return hashlib.sha256(json.dumps(rows, default=str, sort_keys=True).encode()).hexdigest()


# --- determinism ---------------------------------------------------------------------------------------


def test_same_seed_today_and_size_give_identical_rows() -> None:
    first, second = generate(TODAY, students=120, days=20), generate(TODAY, students=120, days=20)
    assert first.kamar == second.kamar
    assert first.anak == second.anak
    assert list(first.absensi()) == list(second.absensi())


def test_attendance_is_the_same_on_every_iteration(school: DemoSchool, attendance: list[dict[str, Any]]) -> None:
    assert list(school.absensi()) == attendance


def test_another_seed_gives_another_school() -> None:
    first, other = generate(TODAY, students=60, seed=1), generate(TODAY, students=60, seed=2)
    assert [a["nama"] for a in first.anak] != [a["nama"] for a in other.anak]
    assert [a["nik"] for a in first.anak] != [a["nik"] for a in other.anak]


def test_generation_does_not_depend_on_the_process_or_its_hash_seed() -> None:
    script = (
        "import sys; from datetime import date; from tests.service.test_demo import _digest; "
        "from mcp_asrama.service.demo import generate; "
        "print(_digest(generate(date(2026, 10, 6), students=90, days=15)))"
    )
    digests = set()
    for hash_seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-c", script],
            env=env,
            cwd=Path(__file__).resolve().parents[2],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        digests.add(done.stdout.strip())
    assert digests == {_digest(generate(TODAY, students=90, days=15))}


# --- students and rooms ----------------------------------------------------------------------------------


def test_three_hundred_students_spread_over_every_class_7a_to_12c(school: DemoSchool) -> None:
    assert len(school.anak) == 300
    per_class = Counter(a["kelas"] for a in school.anak)
    assert set(per_class) == ALL_CLASSES
    assert min(per_class.values()) >= 15
    assert max(per_class.values()) <= 18


def test_students_have_unique_valid_ids_and_pass_the_import_validation(school: DemoSchool) -> None:
    assert len({a["id"] for a in school.anak}) == len(school.anak)
    for anak in school.anak:
        assert AnakIn.model_validate(anak).model_dump() == anak
    for kamar in school.kamar:
        assert KamarIn.model_validate(kamar).model_dump() == kamar


def test_about_twenty_rooms_in_putra_and_putri_each_with_a_musyrif(school: DemoSchool) -> None:
    assert 18 <= len(school.kamar) <= 24
    assert len({k["nama"] for k in school.kamar}) == len(school.kamar)
    buildings = Counter(k["gedung"] for k in school.kamar)
    assert set(buildings) == {"Putra", "Putri"}
    assert buildings["Putra"] == buildings["Putri"]
    for kamar in school.kamar:
        title = "Ust." if kamar["gedung"] == "Putra" else "Ustz."
        assert re.fullmatch(rf"{re.escape(title)} \w+", kamar["musyrif"]), kamar


@pytest.mark.parametrize("students", [30, 300, 1_000])
def test_every_student_has_a_room_of_their_building_with_room_to_spare(students: int) -> None:
    school = generate(TODAY, students=students, days=1)
    building = {k["nama"]: k["gedung"] for k in school.kamar}
    capacity = {k["nama"]: k["kapasitas"] for k in school.kamar}
    for anak in school.anak:
        assert building[anak["kamar"]] == ("Putra" if anak["jenis_kelamin"] == "L" else "Putri"), anak
    occupancy = Counter(a["kamar"] for a in school.anak)
    assert all(occupancy[room] <= capacity[room] for room in capacity)
    assert set(ALL_CLASSES) == {a["kelas"] for a in school.anak}


def test_boys_and_girls_are_about_half_each(school: DemoSchool) -> None:
    genders = Counter(a["jenis_kelamin"] for a in school.anak)
    assert set(genders) == {"L", "P"}
    assert abs(genders["L"] - genders["P"]) <= 2


def test_most_students_are_aktif_and_every_other_status_occurs(school: DemoSchool) -> None:
    statuses = Counter(a["status"] for a in school.anak)
    assert set(statuses) == {"aktif", "izin", "sakit", "pulang"}
    assert statuses["aktif"] / len(school.anak) >= 0.85


def test_nik_has_sixteen_digits_and_encodes_the_birth_date_day_plus_40_for_girls(school: DemoSchool) -> None:
    niks = [a["nik"] for a in school.anak]
    assert len(set(niks)) == len(niks)
    for anak in school.anak:
        nik, lahir = anak["nik"], anak["tanggal_lahir"]
        assert re.fullmatch(r"\d{16}", nik), nik
        day = lahir.day + (40 if anak["jenis_kelamin"] == "P" else 0)
        assert nik[6:12] == f"{day:02d}{lahir.month:02d}{lahir.year % 100:02d}", anak
        assert nik[:2] != "00"
        assert nik[12:] != "0000"


def test_birth_dates_fit_the_class(school: DemoSchool) -> None:
    for anak in school.anak:
        age = (TODAY - anak["tanggal_lahir"]).days // 365
        grade = int(anak["kelas"][:-1])
        assert grade + 4 <= age <= grade + 7, anak


def test_guardian_phones_are_plausible_indonesian_mobile_numbers(school: DemoSchool) -> None:
    phones = [a["no_hp_wali"] for a in school.anak]
    assert all(re.fullmatch(r"08[1-9]\d{8,10}", p) for p in phones), phones
    assert len(set(phones)) > 0.95 * len(phones)


def test_names_guardians_and_addresses_look_indonesian(school: DemoSchool) -> None:
    for anak in school.anak:
        assert len(anak["nama"].split()) >= 2
        assert re.fullmatch(r"(Bapak|Ibu) \S.*", anak["nama_wali"]), anak
        assert ", " in anak["alamat"]
    assert len({a["nama"] for a in school.anak}) > 0.9 * len(school.anak)


# --- attendance ------------------------------------------------------------------------------------------


def test_attendance_covers_exactly_the_60_days_up_to_today_for_every_student(
    school: DemoSchool, attendance: list[dict[str, Any]]
) -> None:
    days = {TODAY - timedelta(days=n) for n in range(60)}
    per_student: dict[str, set[date]] = defaultdict(set)
    for row in attendance:
        per_student[row["id_anak"]].add(row["tanggal"])
    assert len(attendance) == 60 * len(school.anak)
    assert set(per_student) == {a["id"] for a in school.anak}
    assert all(dates == days for dates in per_student.values())


def test_absence_rates_are_realistic(school: DemoSchool, attendance: list[dict[str, Any]]) -> None:
    counts = Counter(r["status"] for r in attendance)
    absent = counts["izin"] + counts["sakit"] + counts["alpa"]
    assert set(counts) == {"hadir", "izin", "sakit", "alpa"}
    assert 0.02 <= absent / len(attendance) <= 0.10
    assert counts["alpa"] < counts["izin"]
    per_student = Counter(r["id_anak"] for r in attendance if r["status"] != "hadir")
    assert max(per_student.values()) <= 20
    assert len(per_student) < len(school.anak)


def test_izin_and_sakit_carry_a_reason_and_hadir_none(attendance: list[dict[str, Any]]) -> None:
    for row in attendance:
        if row["status"] in {"izin", "sakit"}:
            assert row["keterangan"], row
        if row["status"] == "hadir":
            assert row["keterangan"] is None, row


def test_todays_attendance_matches_each_students_status(school: DemoSchool, attendance: list[dict[str, Any]]) -> None:
    today = {r["id_anak"]: r for r in attendance if r["tanggal"] == TODAY}
    assert len(today) == len(school.anak)
    for anak in school.anak:
        assert today[anak["id"]]["status"] in TODAY_FOR_STATUS[anak["status"]], (anak, today[anak["id"]])
    pulang = [a["id"] for a in school.anak if a["status"] == "pulang"]
    assert pulang
    assert all(today[i]["keterangan"] == "Pulang ke rumah" for i in pulang)


# --- seeding a database ----------------------------------------------------------------------------------


@pytest.fixture
def sessions(db_url: str) -> Iterator[sessionmaker[Session]]:
    engine = make_engine(db_url)
    init_schema(engine)
    yield make_sessionmaker(engine)
    engine.dispose()


def _counts(sessions: sessionmaker[Session]) -> dict[str, int]:
    with sessions() as session:
        return {
            table.__tablename__: session.scalar(select(func.count()).select_from(table)) or 0
            for table in (Anak, Kamar, Absensi)
        }


def _snapshot(sessions: sessionmaker[Session]) -> dict[str, list[tuple[Any, ...]]]:
    with sessions() as session:
        return {
            "anak": [tuple(r) for r in session.execute(select(Anak.__table__).order_by(Anak.id))],
            "kamar": [tuple(r) for r in session.execute(select(Kamar.__table__).order_by(Kamar.nama))],
            "absensi": [
                tuple(r) for r in session.execute(select(Absensi.__table__).order_by(Absensi.tanggal, Absensi.id_anak))
            ],
        }


def test_seed_demo_fills_an_empty_database(sessions: sessionmaker[Session]) -> None:
    assert seed_demo(sessions, TODAY) is True
    assert _counts(sessions) == {"anak": 300, "kamar": 20, "absensi": 300 * 60}
    with sessions() as session:
        stored = session.get(Anak, 1)
        assert stored is not None
        assert stored.id == "A001"
        assert stored.tanggal_lahir == generate(TODAY).anak[0]["tanggal_lahir"]


def test_seed_demo_twice_changes_nothing(sessions: sessionmaker[Session]) -> None:
    assert seed_demo(sessions, TODAY, students=40, days=5) is True
    before = _snapshot(sessions)
    assert seed_demo(sessions, TODAY, students=40, days=5) is False
    assert seed_demo(sessions, TODAY + timedelta(days=1)) is False
    assert _snapshot(sessions) == before


@pytest.mark.parametrize(
    "existing",
    [
        {"kamar": TUTORIAL_KAMAR, "anak": TUTORIAL_ANAK},
        {"kamar": TUTORIAL_KAMAR, "anak": []},
        {"kamar": [], "anak": TUTORIAL_ANAK[:1]},
    ],
    ids=["school", "rooms-only", "one-student-only"],
)
def test_seed_demo_leaves_a_database_with_any_data_untouched(
    db_url: str, sessions: sessionmaker[Session], existing: dict[str, list[dict[str, Any]]]
) -> None:
    insert_rows(db_url, kamar=existing["kamar"], anak=existing["anak"], absensi=[])
    before = _snapshot(sessions)
    assert seed_demo(sessions, TODAY) is False
    assert _snapshot(sessions) == before


@pytest.mark.anyio
async def test_seeded_service_answers_consistently_about_rooms_and_today(db_url: str) -> None:
    app = create_app(ServiceSettings(db_url=db_url, service_token=TOKEN))
    assert seed_demo(app.state.sessions, TODAY)
    try:
        async with service_client(app) as client:
            rooms = (await client.get("/kamar")).json()["data"]
            assert sum(r["terisi"] for r in rooms) == 300
            assert all(0 < r["terisi"] <= r["kapasitas"] for r in rooms)
            today = (await client.get("/absensi", params={"tanggal": TODAY.isoformat()})).json()["data"]
            assert len(today) == 300
            for status, recorded in (("sakit", "sakit"), ("izin", "izin")):
                students = await client.get("/anak", params={"status": status, "limit": 100})
                absent = await client.get("/absensi", params={"tanggal": TODAY.isoformat(), "status": recorded})
                ids = {a["id"] for a in students.json()["data"]}
                assert ids
                assert ids <= {r["id_anak"] for r in absent.json()["data"]}
            rekap = await client.get(
                "/absensi/rekap",
                params={"dari": (TODAY - timedelta(days=59)).isoformat(), "sampai": TODAY.isoformat()},
            )
            total = rekap.json()["total"]
            assert sum(total.values()) == 300 * 60
    finally:
        app.state.engine.dispose()


@pytest.mark.anyio
async def test_restarting_with_demo_keeps_changes_and_does_not_add_demo_again(db_url: str) -> None:
    first = create_app(ServiceSettings(db_url=db_url, service_token=TOKEN))
    assert seed_demo(first.state.sessions, TODAY) is True
    async with service_client(first) as client:
        changed = await client.put(
            f"/absensi/{TODAY.isoformat()}/A001", json={"status": "sakit", "keterangan": "Demam tinggi"}
        )
        assert changed.status_code == 200
    before = _counts(first.state.sessions)
    first.state.engine.dispose()

    second = create_app(ServiceSettings(db_url=db_url, service_token=TOKEN))
    try:
        assert seed_demo(second.state.sessions, TODAY) is False
        assert _counts(second.state.sessions) == before == {"anak": 300, "kamar": 20, "absensi": 18_000}
        async with service_client(second) as client:
            day = (await client.get("/absensi", params={"tanggal": TODAY.isoformat()})).json()["data"]
            a001 = next(r for r in day if r["id_anak"] == "A001")
            assert (a001["status"], a001["keterangan"]) == ("sakit", "Demam tinggi")
            assert (await client.get("/anak")).json()["total"] == 300
    finally:
        second.state.engine.dispose()
