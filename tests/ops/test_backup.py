"""`mcp-asrama backup` and `restore` through the real console script, beside a real data service process: a backup
taken while the service and another writer write is one consistent moment (integrity_check, whole transactions
only), 0600; a restore into the stopped database brings the data back and the change feed continues from it, the
replaced database kept 0600; a restore while the service runs, of a file not ours or newer than us, is refused in
one line; PostgreSQL through pg_dump and pg_restore, or the command to run by hand when they are missing."""

import json
import shutil
import sqlite3
import stat
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from sqlalchemy import create_engine, insert, text

from mcp_asrama.ops.backup import backup, restore
from mcp_asrama.ops.pengurus import Stop
from mcp_asrama.service.db import make_engine
from mcp_asrama.service.models import Kamar
from tests.conftest import PG_URL, TOKEN, TUTORIAL_ABSENSI, TUTORIAL_ANAK, TUTORIAL_KAMAR, fresh_database, insert_rows
from tests.e2e.conftest import EXECUTABLE, clean_env, free_port, start, stop, wait_until_up

BATCH = 25  # rooms the direct writer adds per transaction: a consistent copy holds whole batches only
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([EXECUTABLE, *args], capture_output=True, text=True, env=clean_env(**env), timeout=120)


@contextmanager
def service(db_url: str, folder: Path) -> Iterator[httpx.Client]:
    """The data service as a real process on the database; a client of its API."""
    port = free_port()
    log = folder / f"service-{port}.log"
    env = clean_env(ASRAMA_SERVICE_TOKEN=TOKEN, XDG_DATA_HOME=str(folder))
    process = start([EXECUTABLE, "service", "--port", str(port), "--db", db_url], env, log)
    try:
        wait_until_up(port, process, log)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=AUTH, timeout=30) as client:
            yield client
    finally:
        stop(process)


def record(api: httpx.Client, day: int, id_anak: str = "A001") -> None:
    """One attendance record through the service: one event on its change feed."""
    answer = api.put(f"/absensi/2026-11-{day:02d}/{id_anak}", json={"status": "hadir"})
    assert answer.status_code in (200, 201), answer.text


def rows(path: Path, query: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        return conn.execute(query).fetchall()
    finally:
        conn.close()


def private(path: Path) -> bool:
    return stat.S_IMODE(path.stat().st_mode) == 0o600


FEED = "SELECT id, jenis, tanggal, id_anak FROM perubahan ORDER BY id"


@pytest.fixture
def database(tmp_path: Path) -> tuple[str, Path]:
    path = tmp_path / "asrama.db"
    insert_rows(f"sqlite:///{path}", kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK, absensi=TUTORIAL_ABSENSI)
    return f"sqlite:///{path}", path


def test_a_backup_while_the_service_and_a_writer_write_is_one_consistent_moment(
    database: tuple[str, Path], tmp_path: Path
) -> None:
    url, path = database
    done = threading.Event()
    counts = {"batches": 0, "records": 0}

    def add_rooms() -> None:
        engine = make_engine(url)
        try:
            while not done.is_set():
                n = counts["batches"]
                with engine.begin() as conn:
                    rooms = [{"nama": f"B{n}-{i}", "gedung": "Putra", "kapasitas": 1} for i in range(BATCH)]
                    conn.execute(insert(Kamar), rooms)
                counts["batches"] += 1
        finally:
            engine.dispose()

    failed: list[BaseException] = []

    def take_roll_calls(api: httpx.Client) -> None:
        try:
            while not done.is_set():
                counts["records"] += 1
                record(api, 1 + counts["records"] // 3 % 28, f"A00{1 + counts['records'] % 3}")
        except BaseException as exc:  # seen by the test, not lost in the thread
            failed.append(exc)

    copies = [tmp_path / f"cadangan-{k}.db" for k in range(3)]
    with service(url, tmp_path) as api:
        writers = [threading.Thread(target=add_rooms), threading.Thread(target=take_roll_calls, args=(api,))]
        for writer in writers:
            writer.start()
        try:
            for copy in copies:
                taken = run("backup", str(copy), "--db", url)
                assert taken.returncode == 0, taken.stderr
                assert taken.stdout.startswith(f"backed up {path} to {copy}: revision "), taken.stdout
        finally:
            done.set()
            for writer in writers:
                writer.join(timeout=60)
    assert not failed and counts["batches"] > 0 and counts["records"] > 0
    for copy in copies:
        assert private(copy) and not Path(f"{copy}-wal").exists() and not Path(f"{copy}-journal").exists()
        assert rows(copy, "PRAGMA integrity_check") == [("ok",)]
        rooms = rows(copy, "SELECT count(*) FROM kamar")[0][0]
        assert (rooms - len(TUTORIAL_KAMAR)) % BATCH == 0, rooms
        # the service writes a record and its event in one transaction: no record without its event, ids gapless
        records = rows(copy, "SELECT count(*) FROM absensi")[0][0]
        events = rows(copy, "SELECT count(*), coalesce(max(id), 0) FROM perubahan")[0]
        assert records - len(TUTORIAL_ABSENSI) <= events[0] == events[1]
        assert rows(copy, "SELECT count(*) FROM anak") == [(len(TUTORIAL_ANAK),)]
    assert not list(tmp_path.glob("*.partial"))


def read_feed(api: httpx.Client, count: int) -> list[dict[str, object]]:
    """The first `count` events of `GET /perubahan?sejak=0`, as the service streams them."""
    events: list[dict[str, object]] = []
    with api.stream("GET", "/perubahan", params={"sejak": "0"}, timeout=httpx.Timeout(30, read=15)) as stream:
        kind = None
        for line in stream.iter_lines():
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: ") and kind == "perubahan":
                events.append(json.loads(line.removeprefix("data: ")))
                if len(events) == count:
                    break
    return events


def test_restore_into_the_stopped_database_brings_the_data_back_and_the_feed_continues(
    database: tuple[str, Path], tmp_path: Path
) -> None:
    url, path = database
    backup_file = tmp_path / "cadangan.db"
    with service(url, tmp_path) as api:
        for day in (1, 2, 3):
            record(api, day)
        assert run("backup", str(backup_file), "--db", url).returncode == 0
        record(api, 4)  # after the backup: the database restored over it loses it, the kept copy has it
        refused = run("restore", str(backup_file), "--db", url)  # the service still runs on it
        assert refused.returncode == 1 and len(refused.stderr.splitlines()) == 1, refused.stderr
        assert "in use" in refused.stderr and "stop it" in refused.stderr
        assert api.get("/absensi", params={"tanggal": "2026-11-04"}).status_code == 200
    assert not list(tmp_path.glob("asrama.db.sebelum-restore-*"))
    assert len(rows(path, FEED)) == 4
    at_backup = rows(backup_file, FEED)
    assert [event[0] for event in at_backup] == [1, 2, 3]

    restored = run("restore", str(backup_file), "--db", url)
    assert restored.returncode == 0, restored.stderr
    kept = list(tmp_path.glob("asrama.db.sebelum-restore-*"))
    assert len(kept) == 1 and f"kept as {kept[0]}" in restored.stdout
    assert private(kept[0]) and private(path)
    assert rows(kept[0], FEED)[-1][:3] == (4, "absensi", "2026-11-04")
    assert rows(path, FEED) == at_backup
    assert rows(path, "SELECT count(*) FROM absensi WHERE tanggal = '2026-11-04'") == [(0,)]
    assert rows(path, "SELECT id, nik FROM anak ORDER BY id") == [(a["id"], a["nik"]) for a in TUTORIAL_ANAK]

    with service(url, tmp_path) as api:
        record(api, 5)
        feed = read_feed(api, 4)
    assert [(event["id"], event["tanggal"]) for event in feed] == [
        (1, "2026-11-01"),
        (2, "2026-11-02"),
        (3, "2026-11-03"),
        (4, "2026-11-05"),
    ]


def test_what_is_not_a_backup_of_ours_is_refused_in_one_line(database: tuple[str, Path], tmp_path: Path) -> None:
    url, path = database
    backup_file = tmp_path / "cadangan.db"
    backup(url, backup_file)
    newer = tmp_path / "baru.db"
    shutil.copyfile(backup_file, newer)
    with sqlite3.connect(newer) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999'")
    other = tmp_path / "lain.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE catatan (x)")
    text_file = tmp_path / "catatan.txt"
    text_file.write_text("bukan basis data\n", encoding="utf-8")
    before = path.read_bytes()
    for action, file, code, said in [
        (restore, text_file, 1, "not a SQLite database"),
        (restore, other, 1, "not a database of mcp-asrama (no table alembic_version, anak, kamar)"),
        (restore, newer, 1, "newer than this version of mcp-asrama knows"),
        (restore, tmp_path / "tidak-ada.db", 1, "no such file"),
        (restore, path, 2, "is the database itself"),
        (backup, backup_file, 1, "already exists"),
        (backup, path, 2, "is the database itself"),
        (backup, tmp_path / "salah-ketik" / "x.db", 1, "no such folder"),
    ]:
        with pytest.raises(Stop) as refused:
            action(url, file)
        assert refused.value.code == code and said in str(refused.value) and "\n" not in str(refused.value)
    for args, code in [(("restore", str(newer)), 1), (("backup", str(path)), 2)]:  # the same through the command
        done = run(*args, "--db", url)
        assert done.returncode == code and len(done.stderr.splitlines()) == 1, (args, done.stderr)
    assert not (tmp_path / "salah-ketik").exists()
    assert path.read_bytes() == before and not list(tmp_path.glob("asrama.db.sebelum-restore-*"))
    missing = tmp_path / "salah-ketik.db"
    with pytest.raises(Stop, match="no such file"):
        backup(f"sqlite:///{missing}", tmp_path / "x.db")
    with pytest.raises(Stop, match="in memory") as memory:
        backup("sqlite://", tmp_path / "x.db")
    assert memory.value.code == 2 and not missing.exists()
    assert not (tmp_path / "x.db").exists()


def test_the_default_database_is_the_one_backed_up_and_restored(tmp_path: Path) -> None:
    home = tmp_path / "data"
    path = home / "mcp-asrama" / "asrama.db"
    path.parent.mkdir(parents=True)
    insert_rows(f"sqlite:///{path}", kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK, absensi=[])
    backup_file = tmp_path / "cadangan.db"
    taken = run("backup", str(backup_file), XDG_DATA_HOME=str(home))
    assert taken.returncode == 0 and f"backed up {path} to {backup_file}" in taken.stdout, taken.stderr
    elsewhere = tmp_path / "baru" / "asrama.db"
    into = run("restore", str(backup_file), ASRAMA_DB_URL=f"sqlite:///{elsewhere}")  # a new machine: nothing to keep
    assert into.returncode == 0 and "kept" not in into.stdout, into.stderr
    assert private(elsewhere) and rows(elsewhere, "SELECT count(*) FROM anak") == [(len(TUTORIAL_ANAK),)]


def test_postgresql_without_its_tools_names_the_command_to_run_by_hand(tmp_path: Path) -> None:
    url = "postgresql+psycopg://asrama:rahasia-pg@db.sekolah.example:5432/asrama"
    bare = {"PATH": str(Path(EXECUTABLE).parent)}
    dump = run("backup", str(tmp_path / "asrama.dump"), "--db", url, **bare)
    assert dump.returncode == 1 and len(dump.stderr.splitlines()) == 1, dump.stderr
    assert (
        f"run by hand: pg_dump --format=custom --file {tmp_path / 'asrama.dump'} --dbname "
        "postgresql://asrama@db.sekolah.example:5432/asrama" in dump.stderr
    )
    back = run("restore", str(tmp_path / "asrama.dump"), "--db", url, **bare)
    assert back.returncode == 1 and "no such file" in back.stderr
    (tmp_path / "asrama.dump").write_bytes(b"PGDMP")
    back = run("restore", str(tmp_path / "asrama.dump"), "--db", url, **bare)
    assert back.returncode == 1 and "run by hand: pg_restore --clean --if-exists" in back.stderr, back.stderr
    assert "rahasia" not in dump.stderr + back.stderr and not list(tmp_path.glob("*.sebelum-restore-*"))


@pytest.mark.skipif(not PG_URL or not shutil.which("pg_dump"), reason="ASRAMA_TEST_PG_URL or pg_dump missing")
def test_postgresql_backup_and_restore_through_pg_dump(tmp_path: Path) -> None:
    with fresh_database("postgresql", tmp_path) as url:
        insert_rows(url, kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK, absensi=TUTORIAL_ABSENSI)
        dump = tmp_path / "asrama.dump"
        taken = run("backup", str(dump), "--db", url)
        assert taken.returncode == 0, taken.stderr
        assert private(dump) and dump.read_bytes().startswith(b"PGDMP")
        engine = create_engine(url)
        try:
            with engine.begin() as conn:
                conn.execute(text("DELETE FROM absensi"))
            with engine.connect():  # another session on the database: refused
                busy = run("restore", str(dump), "--db", url)
            assert busy.returncode == 1 and "in use" in busy.stderr, busy.stderr
            engine.dispose()
            done = run("restore", str(dump), "--db", url)
            assert done.returncode == 0, done.stderr
            kept = list(tmp_path.glob("*.sebelum-restore-*.dump"))
            assert len(kept) == 1 and private(kept[0]) and f"kept as {kept[0]}" in done.stdout
            with engine.connect() as conn:
                assert conn.execute(text("SELECT count(*) FROM absensi")).scalar_one() == len(TUTORIAL_ABSENSI)
                assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one() in done.stdout
        finally:
            engine.dispose()
