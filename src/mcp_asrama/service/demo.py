"""Deterministic demo data: rooms, students with plausible (fake) personal data, daily attendance, and the
pesantren's violations, hafalan deposits and clinic visits (`demo_pesantren`), and a few records a month of every
other dated domain that gives examples of them (`Domain.contoh`).

The same `seed`, size and `today` always give the same data. `seed_demo` fills only an empty database.
"""

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from faker import Faker
from sqlalchemy import insert
from sqlalchemy.orm import Session, sessionmaker

from mcp_asrama.contract import BY_NAME, DOMAINS
from mcp_asrama.service import demo_pesantren
from mcp_asrama.service.crud import anak as crud_anak
from mcp_asrama.service.crud import common as crud_common
from mcp_asrama.service.crud import hafalan as crud_hafalan
from mcp_asrama.service.crud import izin as crud_izin
from mcp_asrama.service.crud import pelanggaran as crud_pelanggaran
from mcp_asrama.service.crud import perubahan
from mcp_asrama.service.db import refresh_statistics
from mcp_asrama.service.models import Absensi, Anak, Hafalan, Kamar, KunjunganKlinik, Pelanggaran, table_class

KELAS = [f"{tingkat}{rombel}" for tingkat in range(7, 13) for rombel in "ABC"]
_ASRAMA = {"L": ("Putra", ["Al-Fatih", "Umar"], "Ust."), "P": ("Putri", ["Aisyah", "Khadijah"], "Ustz.")}
_PROVINSI = ["11", "12", "13", "16", "18", "31", "32", "33", "34", "35", "36", "51", "63", "73"]
_OPERATOR = ["811", "812", "813", "821", "822", "852", "853", "857", "858", "877", "878", "895", "896"]
_KETERANGAN = {
    "izin": [
        "Acara keluarga",
        "Pulang, acara keluarga",
        "Menghadiri pernikahan saudara",
        "Dijemput orang tua",
        "Urusan administrasi sekolah",
    ],
    "sakit": ["Demam", "Flu dan batuk", "Sakit perut", "Sakit gigi", "Istirahat di UKS"],
}
# Chance per student-day that an absence starts, and how long it may last (days).
_ABSENCE = {"izin": (0.012, 3), "sakit": (0.008, 3), "alpa": (0.006, 1)}

DEMO_SEED = 2026


@dataclass
class DemoSchool:
    """A generated school: rows ready for insertion, and attendance produced lazily day by day.

    `absensi()` draws from its own generator seeded with `seed`, so every iteration yields the same rows.
    """

    today: date
    days: int
    kamar: list[dict[str, Any]] = field(default_factory=list)
    anak: list[dict[str, Any]] = field(default_factory=list)
    seed: int = DEMO_SEED

    def absensi(self) -> Iterator[dict[str, Any]]:
        """Attendance for `days` days up to `today`, with multi-day absences; `today` matches each status.

        Today a student who is `aktif` is present (or `alpa`: absent without leave, which does not change
        the status); one who is `izin`, `sakit` or `pulang` is recorded as such.
        """
        rng = random.Random(self.seed)
        streak: dict[str, tuple[str, str | None, int]] = {}
        start = self.today - timedelta(days=self.days - 1)
        for offset in range(self.days):
            tanggal = start + timedelta(days=offset)
            for anak in self.anak:
                status, keterangan = self._day(rng, anak["id"], streak)
                if tanggal == self.today and anak["status"] != "aktif":
                    status, keterangan = self._today_for(rng, anak["status"])
                elif tanggal == self.today and status in _KETERANGAN:
                    status, keterangan = "hadir", None
                yield {"tanggal": tanggal, "id_anak": anak["id"], "status": status, "keterangan": keterangan}

    def pelanggaran(self) -> Iterator[dict[str, Any]]:
        """Violations over the `days` days: about 10% of students a month, mostly ringan."""
        return demo_pesantren.pelanggaran(self.anak, self.kamar, self.today, self.days, self.seed)

    def hafalan(self) -> Iterator[dict[str, Any]]:
        """Hafalan deposits: 0.5-2 pages a week per student over the `days` days, and what came before them."""
        return demo_pesantren.hafalan(self.anak, self.kamar, self.today, self.days, self.seed)

    def kesehatan(self) -> Iterator[dict[str, Any]]:
        """Clinic visits over the `days` days: 2-5% of students a week."""
        return demo_pesantren.kesehatan(self.anak, self.today, self.days, self.seed)

    def examples(self, name: str) -> Iterator[dict[str, Any]]:
        """Records of the dated domain `name` built from its examples: 2-4 per 100 students a month."""
        return demo_pesantren.examples(name, BY_NAME[name].contoh, self.anak, self.today, self.days, self.seed)

    @staticmethod
    def _day(
        rng: random.Random, id_anak: str, streak: dict[str, tuple[str, str | None, int]]
    ) -> tuple[str, str | None]:
        if id_anak in streak:
            status, keterangan, left = streak.pop(id_anak)
            if left > 1:
                streak[id_anak] = (status, keterangan, left - 1)
            return status, keterangan
        roll = rng.random()
        for status, (chance, longest) in _ABSENCE.items():
            if roll < chance:
                keterangan = rng.choice(_KETERANGAN[status]) if status in _KETERANGAN else None
                length = rng.randint(1, longest)
                if length > 1:
                    streak[id_anak] = (status, keterangan, length - 1)
                return status, keterangan
            roll -= chance
        return "hadir", None

    @staticmethod
    def _today_for(rng: random.Random, status_anak: str) -> tuple[str, str | None]:
        if status_anak == "pulang":
            return "izin", "Pulang ke rumah"
        return status_anak, rng.choice(_KETERANGAN[status_anak])


def _nik(rng: random.Random, lahir: date, jenis_kelamin: str) -> str:
    hari = lahir.day + (40 if jenis_kelamin == "P" else 0)
    wilayah = f"{rng.choice(_PROVINSI)}{rng.randint(1, 20):02d}{rng.randint(1, 30):02d}"
    return f"{wilayah}{hari:02d}{lahir.month:02d}{lahir.year % 100:02d}{rng.randint(1, 999):04d}"


def _no_hp(rng: random.Random) -> str:
    return f"0{rng.choice(_OPERATOR)}{rng.randint(0, 99_999_999):08d}"


def _rooms(fake: Faker, count: int, capacity: int) -> list[dict[str, Any]]:
    rooms = []
    for jenis_kelamin, (gedung, names, gelar) in _ASRAMA.items():
        for i in range(max(1, count // 2)):
            musyrif = fake.first_name_male() if jenis_kelamin == "L" else fake.first_name_female()
            rooms.append(
                {
                    "nama": f"{names[i % len(names)]} {i // len(names) + 1}",
                    "gedung": gedung,
                    "kapasitas": capacity,
                    "musyrif": f"{gelar} {musyrif}",
                }
            )
    return rooms


def generate(today: date, *, students: int = 300, days: int = 60, seed: int = DEMO_SEED) -> DemoSchool:
    """A school of `students` students in classes 7A–12C, ~15 per room, with attendance for `days` days."""
    rng = random.Random(seed)
    fake = Faker("id_ID")
    fake.seed_instance(seed)
    room_count = max(20, round(students / 15))
    capacity = -(-students // room_count) + 2
    kamar = _rooms(fake, room_count, capacity)
    rooms_by_gender = {g: [r for r in kamar if r["gedung"] == _ASRAMA[g][0]] for g in _ASRAMA}
    width = max(3, len(str(students)))
    anak = []
    for n in range(1, students + 1):
        jenis_kelamin = "L" if n % 2 else "P"
        kelas = KELAS[(n - 1) * len(KELAS) // students]
        lahir = date(today.year - int(kelas[:-1]) - 6 + rng.randint(0, 1), rng.randint(1, 12), rng.randint(1, 28))
        first = fake.first_name_male() if jenis_kelamin == "L" else fake.first_name_female()
        rooms = rooms_by_gender[jenis_kelamin]
        wali_ayah = rng.random() < 0.7
        anak.append(
            {
                "id": f"A{n:0{width}d}",
                "nama": f"{first} {fake.last_name()}",
                "kelas": kelas,
                "kamar": rooms[(n // 2) % len(rooms)]["nama"],
                "status": rng.choices(["aktif", "izin", "sakit", "pulang"], weights=[94, 3, 2, 1])[0],
                "jenis_kelamin": jenis_kelamin,
                "nama_wali": f"Bapak {fake.first_name_male()}" if wali_ayah else f"Ibu {fake.first_name_female()}",
                "nik": _nik(rng, lahir, jenis_kelamin),
                "no_hp_wali": _no_hp(rng),
                "alamat": f"{fake.street_address()}, {fake.city()}",
                "tanggal_lahir": lahir,
            }
        )
    return DemoSchool(today=today, days=days, kamar=kamar, anak=anak, seed=rng.getrandbits(64))


def example_tables() -> dict[str, Any]:
    """The table of each dated domain that gives examples of its records (`Domain.contoh`), by its name."""
    tables = {d.name: table_class(d.name) for d in DOMAINS if d.dated and d.contoh}
    return {name: table for name, table in tables.items() if table is not None}


def insert_school(session: Session, school: DemoSchool, chunk: int = 10_000) -> int:
    """Insert a generated school in one transaction (with the default kinds of violation, when there are none),
    then refresh the planner's statistics; returns the number of attendance rows."""
    session.execute(insert(Kamar), school.kamar)
    session.execute(insert(Anak), school.anak)
    count = _insert_all(session, Absensi, school.absensi(), chunk)
    _running_izin(session, school)
    crud_pelanggaran.ensure_default_jenis(session)
    _insert_all(session, Pelanggaran, school.pelanggaran(), chunk)
    _insert_all(session, Hafalan, school.hafalan(), chunk)
    crud_hafalan.rebuild(session)
    _insert_all(session, KunjunganKlinik, school.kesehatan(), chunk)
    for name, table in example_tables().items():
        _insert_all(session, table, school.examples(name), chunk)
    for jenis in perubahan.JENIS:  # every kind, any record of it: one change-feed event each
        perubahan.catat(session, jenis)
    session.commit()
    refresh_statistics(session)
    return count


def _insert_all(session: Session, table: Any, rows: Iterator[dict[str, Any]], chunk: int) -> int:
    batch: list[dict[str, Any]] = []
    count = 0
    for row in rows:
        batch.append(row)
        if len(batch) == chunk:
            session.execute(insert(table), batch)
            count += len(batch)
            batch.clear()
    if batch:
        session.execute(insert(table), batch)
        count += len(batch)
    return count


DEMO_IZIN = 2


def _running_izin(session: Session, school: DemoSchool) -> None:
    """Give the first students who are `izin` today a running izin record (yesterday to today), so `/izin` shows
    some; it rewrites only their existing attendance of those days."""
    away = [a["id"] for a in school.anak if a["status"] == "izin"][:DEMO_IZIN]
    for id_anak in away:
        anak = crud_anak.get_anak(session, id_anak)
        if anak is None:
            continue
        dari = max(school.today - timedelta(days=1), school.today - timedelta(days=school.days - 1))
        crud_izin.create(
            session,
            anak,
            dari=dari,
            sampai=school.today,
            jenis="pulang",
            alasan="Acara keluarga",
            actor="demo",
            key=None,
            today=school.today,
        )


def seed_demo(sessions: sessionmaker[Session], today: date, **size: int) -> bool:
    """Fill an empty database with the demo school; leave one that has any data untouched (returns False)."""
    with sessions() as session:
        if not crud_common.is_empty(session):
            return False
        insert_school(session, generate(today, **size))
    return True
