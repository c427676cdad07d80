"""Versioned migrations: a database of the release before Alembic upgrades in place on service start (data kept and
served, schema equal to a fresh one), a current one is left alone, a newer one is refused, processes starting at
once migrate once, and the models agree with the revisions."""

import re
import shutil
import sqlite3
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, event, insert, inspect, text
from sqlalchemy.engine import make_url

from mcp_asrama.config import ServiceSettings
from mcp_asrama.names import fold
from mcp_asrama.service import migrations, models
from mcp_asrama.service.app import create_app
from mcp_asrama.service.db import init_schema, make_engine
from mcp_asrama.service.migrations import SCRIPTS, SchemaTooNew, Upgrade, head, upgrade
from mcp_asrama.service.models import Anak, Base
from tests.conftest import fresh_database, serve_db
from tests.data.previous_schema import ROWS, fixture, load, rows, snapshot
from tests.e2e.conftest import EXECUTABLE, clean_env, free_port

pytestmark = pytest.mark.anyio
HEAD = head()


@pytest.fixture
def engines() -> Iterator[list[Engine]]:
    """Engines a test opens, disposed at its end."""
    opened: list[Engine] = []
    yield opened
    for engine in opened:
        engine.dispose()


def open_engine(url: str, engines: list[Engine]) -> Engine:
    engine = make_engine(url)
    engines.append(engine)
    return engine


def version(engine: Engine) -> list[str]:
    with engine.connect() as conn:
        return list(conn.scalars(text("SELECT version_num FROM alembic_version")))


def previous_release(db_url: str) -> str:
    """`db_url` (empty) holding the database the release before Alembic made: its DDL and its rows."""
    load(db_url, fixture(make_url(db_url).get_backend_name()))
    return db_url


def ddl_statements(engine: Engine) -> list[str]:
    """Statements that change the schema or the data, as `engine` sends them from now on."""
    seen: list[str] = []

    def keep(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if statement.lstrip().upper().startswith(("CREATE", "ALTER", "DROP", "INSERT", "UPDATE", "DELETE")):
            seen.append(statement)

    event.listen(engine, "before_cursor_execute", keep)
    return seen


# --- the release before Alembic upgrades in place, on service start --------------------------------------------------


async def test_a_database_of_the_previous_release_upgrades_in_place_when_the_service_starts(
    db_url: str, tmp_path: Path, engines: list[Engine]
) -> None:
    url = previous_release(db_url)
    backend = make_url(url).get_backend_name()
    before = rows(open_engine(url, engines))
    assert not inspect(engines[-1]).has_table("alembic_version")
    async for client in serve_db(url):  # create_app: the service as it starts
        students = (await client.get("/anak", params={"limit": 100})).json()
        assert students["total"] == 4
        assert [(a["id"], a["nama"], a["kamar"], a["status"]) for a in students["data"]] == [
            ("A001", "Ahmad Fauzi", "Al-Fatih 1", "aktif"),
            ("A002", "Budi Santoso", "Al-Fatih 1", "aktif"),
            ("A003", "Citra Lestari", "Aisyah 2", "izin"),
            ("A004", "Dewi Anggraini", None, "aktif"),
        ]
        citra = (await client.get("/anak/A003")).json()
        assert (citra["nik"], citra["tanggal_lahir"], citra["alamat"]) == (
            "3171000000000003",
            "2013-03-07",
            "Jl. Kenanga No. 3, Bekasi",
        )
        found = (await client.get("/anak", params={"nama": "lestar"})).json()  # the name index, kept
        assert [a["id"] for a in found["data"]] == ["A003"]
        day = (await client.get("/absensi", params={"tanggal": "2026-10-06"})).json()["data"]
        assert {(r["id_anak"], r["status"], r.get("keterangan")) for r in day} == {
            ("A001", "hadir", None),
            ("A002", "hadir", None),
            ("A003", "izin", "Izin pulang"),
        }
        izin = (await client.get("/izin")).json()
        assert izin["total"] == 2
        assert [(i["id"], i["id_anak"], i["dari"], i["sampai"], i.get("tanggal_kembali")) for i in izin["data"]] == [
            ("ab3Kq9ZfT0xYw1Lm", "A003", "2026-10-06", "2026-10-08", None),
            ("Qw7pR2sTu4vXy6Za", "A002", "2026-10-01", "2026-10-03", "2026-10-03"),
        ]
        assert (await client.get("/izin/ab3Kq9ZfT0xYw1Lm")).json()["alasan"] == "Acara keluarga"
        history = (await client.get("/absensi/2026-10-03/A002/riwayat")).json()["data"]
        assert [(h.get("status_lama"), h.get("status_baru"), h["oleh"]) for h in history] == [
            (None, "izin", "Kantor"),
            ("izin", None, "Ust. Ridwan"),
        ]
        # The serial keys go on from the rows there: a roll call after the upgrade adds history rows 11 and 12.
        written = await client.post(
            "/absensi/2026-10-09",
            json={"entri": [{"id_anak": "A001", "status": "hadir"}, {"id_anak": "A004", "status": "alpa"}]},
            headers={"Idempotency-Key": "setelah-upgrade-0001"},
        )
        assert written.status_code == 200, written.text
    engine = open_engine(url, engines)
    assert version(engine) == [HEAD]
    after = rows(engine)
    changed = ("absensi", "riwayat_absensi", "idempotensi")
    widths = {k: len(v[0]) for k, v in before.items() if v}  # revision 0005 appends the names' keys to the rows
    assert {k: [r[: widths.get(k)] for r in v] for k, v in after.items() if k not in changed} == {
        k: v for k, v in before.items() if k not in changed
    }
    assert [r[-1] for r in after["kamar"]] == [fold(r[0]) for r in after["kamar"]]
    assert set(before["absensi"]) < set(after["absensi"]) and before["riwayat_absensi"] == after["riwayat_absensi"][:10]
    assert [r[0] for r in after["riwayat_absensi"][10:]] == [11, 12]
    with fresh_database(backend, tmp_path / "fresh") as fresh_url:
        fresh = open_engine(fresh_url, engines)
        init_schema(fresh)
        assert snapshot(engine) == snapshot(fresh)
        assert version(fresh) == [HEAD]
        fresh.dispose()


def test_the_fixtures_hold_what_the_previous_release_wrote(db_url: str, engines: list[Engine]) -> None:
    engine = open_engine(previous_release(db_url), engines)
    stored = rows(engine)
    assert {name: len(stored[name]) for name in ROWS} == {name: len(r) for name, r in ROWS.items()}
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            objects = set(conn.scalars(text("SELECT name FROM sqlite_master")))
            assert {"anak_nama_fts", "anak_fts_insert", "anak_fts_update", "anak_fts_delete"} <= objects
        else:
            assert conn.scalar(text("SELECT count(*) FROM pg_indexes WHERE indexname = 'ix_anak_nama_trgm'")) == 1
        assert not engine.dialect.has_table(conn, "alembic_version")


def only_revisions(folder: Path, *keep: str) -> Path:
    """A copy of the packaged migrations in `folder` with only the revisions `keep`."""
    shutil.copytree(SCRIPTS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    for path in (folder / "versions").glob("*.py"):
        if path.name.split("_")[0] not in keep:
            path.unlink()
    return folder


def test_an_unversioned_database_is_stamped_at_the_baseline_then_upgraded(
    db_url: str, tmp_path: Path, engines: list[Engine]
) -> None:
    engine = open_engine(previous_release(db_url), engines)
    before = snapshot(engine)
    baseline_only = only_revisions(tmp_path / "baseline", migrations.BASELINE)
    assert upgrade(engine, baseline_only) == Upgrade(None, migrations.BASELINE, adopted=True)
    assert snapshot(engine) == before  # the baseline added nothing to a database of the last release: a stamp
    assert version(engine) == [migrations.BASELINE]
    assert upgrade(engine) == Upgrade(migrations.BASELINE, HEAD)
    assert version(engine) == [HEAD]


def test_a_database_at_head_is_left_alone(db_url: str, engines: list[Engine]) -> None:
    engine = open_engine(db_url, engines)
    assert upgrade(engine) == Upgrade(None, HEAD)
    changes = ddl_statements(engine)
    assert upgrade(engine) == Upgrade(HEAD, HEAD)
    init_schema(engine)
    assert changes == []
    assert version(engine) == [HEAD]


def test_a_database_of_a_release_before_izin_gains_the_tables_and_its_students_are_found_by_name(
    tmp_path: Path, engines: list[Engine]
) -> None:
    # Only rooms and students, without the name index: the tables and rows of the fixture's script.
    lines = fixture("sqlite").read_text(encoding="utf-8").splitlines(keepends=True)
    statements = "".join(line for line in lines if not line.startswith("--")).split(";\n")
    older = [
        s
        for s in statements
        if s.strip().startswith(("CREATE TABLE kamar", "CREATE TABLE anak", "INSERT INTO kamar", "INSERT INTO anak"))
    ]
    script = tmp_path / "lama.sql"
    script.write_text(";\n".join(older) + ";\n", encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'lama.db'}"
    load(url, script)
    engine = open_engine(url, engines)
    assert upgrade(engine) == Upgrade(None, HEAD, adopted=True)
    with engine.connect() as conn:
        assert {"izin", "riwayat_absensi", "idempotensi", "absensi"} <= set(
            conn.scalars(text("SELECT name FROM sqlite_master WHERE type = 'table'"))
        )
        found = conn.scalars(text("SELECT rowid FROM anak_nama_fts WHERE anak_nama_fts MATCH '\"santoso\"'")).all()
        assert conn.scalar(text("SELECT count(*) FROM kamar")) == 2
    assert found == [2]  # the index was rebuilt over the students already there


# --- the models agree with the revisions --------------------------------------------------------------------------


def test_the_models_agree_with_the_revisions(db_url: str, engines: list[Engine]) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    engine = open_engine(db_url, engines)
    init_schema(engine)
    with engine.connect() as conn, warnings.catch_warnings():
        migrations.ignore_unreflected_expression_indexes()
        context = MigrationContext.configure(
            conn, opts={"include_object": migrations.include_object, "compare_type": True}
        )
        differences = compare_metadata(context, Base.metadata)
    assert differences == [], "a change of the models without its revision (python -m mcp_asrama.service.migrations)"


def test_importing_the_models_registers_the_table_of_every_module_of_the_package() -> None:
    folder = Path(models.__file__).parent
    declared = {
        m.group(1)
        for path in folder.glob("*.py")
        for m in re.finditer(r"__tablename__ = \"(\w+)\"", path.read_text(encoding="utf-8"))
    }
    assert {"anak", "pelanggaran", "perubahan", "idempotensi"} < declared
    code = "import mcp_asrama.service.models as m; print(' '.join(sorted(m.Base.metadata.tables)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert set(done.stdout.split()) == declared  # a fresh interpreter: nothing else imported a module before
    assert all(models.table_class(name).__tablename__ == name for name in declared)  # type: ignore[union-attr]
    assert models.table_class("pelanggaran") is models.Pelanggaran
    assert models.table_class("tidak_ada") is None


def test_the_revisions_are_one_numbered_line_shipped_in_the_package() -> None:
    script = migrations.scripts()
    assert script.get_heads() == [HEAD]
    chain = [s.revision for s in reversed(list(script.walk_revisions()))]
    assert chain[0] == migrations.BASELINE
    assert chain == [f"{n:04d}" for n in range(1, len(chain) + 1)]
    assert all((SCRIPTS / name).is_file() for name in ("env.py", "script.py.mako", "versions/0001_baseline.py"))
    assert SCRIPTS.is_relative_to(Path(migrations.__file__).parent)


# --- a database newer than the code ----------------------------------------------------------------------------------


def newer(engine: Engine) -> None:
    init_schema(engine)
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = 'f00dface'"))


def test_create_app_refuses_a_database_a_newer_release_upgraded(db_url: str, engines: list[Engine]) -> None:
    engine = open_engine(db_url, engines)
    newer(engine)
    with pytest.raises(SchemaTooNew, match="revision f00dface, newer than this version"):
        create_app(ServiceSettings(db_url=db_url, service_token="rahasia123"))
    assert version(engine) == ["f00dface"]


def run_service(command: list[str], tmp_path: Path) -> tuple[int, list[str]]:
    env = clean_env(XDG_DATA_HOME=str(tmp_path / "data"))
    done = subprocess.run([EXECUTABLE, *command], env=env, capture_output=True, timeout=60)
    return done.returncode, done.stderr.decode().splitlines()


def assert_refused(returncode: int, lines: list[str]) -> None:
    assert returncode == 1
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    assert "its schema is at revision f00dface, newer than this version of mcp-asrama knows" in lines[0]
    assert lines[0].endswith("nothing was changed")


@pytest.mark.e2e
def test_the_service_on_a_newer_database_exits_1_with_one_line(
    db_url: str, tmp_path: Path, engines: list[Engine]
) -> None:
    newer(open_engine(db_url, engines))
    assert_refused(*run_service(["service", "--buat", "--db", db_url, "--port", str(free_port())], tmp_path))
    assert version(engines[0]) == ["f00dface"]


@pytest.mark.e2e
def test_service_upgrade_on_a_newer_database_exits_1_with_one_line(tmp_path: Path, engines: list[Engine]) -> None:
    db_url = f"sqlite:///{tmp_path / 'asrama.db'}"
    newer(open_engine(db_url, engines))
    assert_refused(*run_service(["service", "--upgrade", "--buat", "--db", db_url], tmp_path))
    assert version(engines[0]) == ["f00dface"]


# --- processes starting at once migrate once ------------------------------------------------------------------------


class HeldLock:
    """The lock `upgrade` takes, held by the test from another connection."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.sqlite: sqlite3.Connection | None = None
        self.pg: Any = None

    def __enter__(self) -> "HeldLock":
        parsed = make_url(self.url)
        if parsed.get_backend_name() == "sqlite":
            self.sqlite = sqlite3.connect(str(parsed.database), isolation_level=None)
            self.sqlite.execute("BEGIN IMMEDIATE")
        else:
            self.engine = create_engine(self.url)
            self.pg = self.engine.connect()
            self.pg.execute(text("SELECT pg_advisory_lock(:key)"), {"key": migrations.LOCK_KEY})
        return self

    def __exit__(self, *_: object) -> None:
        if self.sqlite is not None:
            self.sqlite.execute("ROLLBACK")
            self.sqlite.close()
        else:
            self.pg.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": migrations.LOCK_KEY})
            self.pg.close()
            self.engine.dispose()


def wait_until_all_wait(url: str, started: list[subprocess.Popen[bytes]]) -> None:
    """Until every process waits for the lock: PostgreSQL shows each request in pg_locks; SQLite shows nothing, so
    give them time to start and reach it."""
    if make_url(url).get_backend_name() == "sqlite":
        time.sleep(3)
    else:
        engine = create_engine(url)
        deadline = time.monotonic() + 30
        try:
            with engine.connect() as conn:
                waiting = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                while conn.scalar(text(waiting)) < len(started) and time.monotonic() < deadline:
                    conn.rollback()
                    time.sleep(0.1)
                assert conn.scalar(text(waiting)) == len(started)
        finally:
            engine.dispose()
    assert [p.poll() for p in started] == [None] * len(started)  # none has finished: all wait


@pytest.mark.e2e
def test_services_starting_at_once_on_one_database_migrate_it_once(
    db_url: str, tmp_path: Path, engines: list[Engine]
) -> None:
    url = previous_release(db_url)
    with open_engine(url, engines).connect():
        pass  # a SQLite file of the previous release is in WAL mode, as its service left it
    env = clean_env(XDG_DATA_HOME=str(tmp_path / "data"))
    command = [EXECUTABLE, "service", "--upgrade", "--buat", "--db", url]
    started: list[subprocess.Popen[bytes]] = []
    try:
        with HeldLock(url):
            for _ in range(3):
                started.append(subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
            wait_until_all_wait(url, started)
            assert not inspect(open_engine(url, engines)).has_table("alembic_version")
        outputs = []
        for process in started:
            out, err = process.communicate(timeout=60)
            assert process.returncode == 0, err.decode()
            outputs.append(out.decode().strip())
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
            process.communicate()
    adopted = [o for o in outputs if "adopted and upgraded" in o]
    assert len(adopted) == 1, outputs
    assert sum(o.endswith(f"schema at revision {HEAD}, left as it is") for o in outputs) == 2, outputs
    assert version(open_engine(url, engines)) == [HEAD]


# --- SQLite: a batch ALTER of anak keeps the rows that refer to it -------------------------------------------------

BATCH_REVISION = '''"""A later revision copying anak, as a batch ALTER on SQLite does."""

import sqlalchemy as sa
from alembic import op

revision = "{revision}"
down_revision = "{down}"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("anak", recreate="always") as batch:
        batch.add_column(sa.Column("catatan", sa.String(50)))


def downgrade() -> None:
    pass
'''


def test_a_later_revision_copying_anak_on_sqlite_keeps_what_refers_to_it(tmp_path: Path, engines: list[Engine]) -> None:
    location, later = later_revision(tmp_path, BATCH_REVISION)
    engine = open_engine(previous_release(f"sqlite:///{tmp_path / 'asrama.db'}"), engines)
    before = rows(engine)
    assert upgrade(engine, location) == Upgrade(None, later, adopted=True)
    after = rows(engine)
    # With foreign keys on, dropping the old anak would have deleted every absensi, izin and history row.
    assert {k: len(v) for k, v in after.items()} == {k: len(v) for k, v in before.items()}
    assert after["izin"] == before["izin"] and after["riwayat_absensi"] == before["riwayat_absensi"]
    with engine.connect() as conn:
        assert conn.scalar(text("PRAGMA foreign_keys")) == 1  # back on for the service
        assert "catatan" in {c[1] for c in conn.execute(text("PRAGMA table_info(anak)"))}


ORPHANING_REVISION = '''"""A broken later revision: it deletes a student whose attendance stays."""

from alembic import op

revision = "{revision}"
down_revision = "{down}"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("DELETE FROM anak WHERE id = 'A001'")


def downgrade() -> None:
    pass
'''


def later_revision(tmp_path: Path, source: str) -> tuple[Path, str]:
    """The packaged migrations plus one revision after the last, written from `source`."""
    location = only_revisions(tmp_path / "migrations", *(s.revision for s in migrations.scripts().walk_revisions()))
    later = f"{int(HEAD) + 1:04d}"
    (location / "versions" / f"{later}_later.py").write_text(source.format(revision=later, down=HEAD))
    return location, later


def test_a_revision_leaving_rows_without_their_student_is_rolled_back(tmp_path: Path, engines: list[Engine]) -> None:
    location, _ = later_revision(tmp_path, ORPHANING_REVISION)
    engine = open_engine(f"sqlite:///{tmp_path / 'asrama.db'}", engines)
    assert upgrade(engine) == Upgrade(None, HEAD)
    with engine.begin() as conn:
        conn.execute(insert(Anak), ROWS["anak"][:1])
        conn.execute(text("INSERT INTO absensi VALUES ('2026-10-05', 'A001', 'hadir', NULL)"))
    with pytest.raises(RuntimeError, match="left 1 row"):
        upgrade(engine, location)
    assert version(engine) == [HEAD]
    with engine.connect() as conn:
        assert conn.scalar(text("SELECT count(*) FROM anak")) == 1
        assert conn.scalar(text("PRAGMA foreign_keys")) == 1


def test_rows_without_their_student_from_before_do_not_stop_an_upgrade(tmp_path: Path, engines: list[Engine]) -> None:
    url = previous_release(f"sqlite:///{tmp_path / 'asrama.db'}")
    conn = sqlite3.connect(str(tmp_path / "asrama.db"))  # as the sqlite3 shell writes: foreign keys off
    try:
        conn.execute("INSERT INTO absensi VALUES ('2026-10-05', 'A999', 'hadir', NULL)")
        conn.commit()
    finally:
        conn.close()
    assert upgrade(open_engine(url, engines)) == Upgrade(None, HEAD, adopted=True)
