"""Databases of the release before Alembic, as SQL scripts (`previous-schema/<dialect>.sql`), and a snapshot of a
database's schema to compare two of them.

Each script is the DDL that `init_schema` ran on an empty database at commit 9838c17 (its schema is unchanged up to
10a8d1d, the last commit whose `init_schema` created the tables itself: create_all, the name index, its triggers),
recorded statement by statement as the driver received it, then a few rows as that release's writes left them
(students, rooms, a roll call with its history, a running and an ended izin, a stored idempotent answer). Serial keys
(`anak.no`, `riwayat_absensi.id`) are left to the database, so its sequences stand where that release left them.

To record the schema of the code checked out now (e.g. a release to upgrade from, once it is superseded), with
ASRAMA_TEST_PG_URL set: `.venv/bin/python -m tests.data.previous_schema [folder]`.
"""

import sys
import warnings
from datetime import date, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SAWarning

from mcp_asrama.private_files import create_private

HERE = Path(__file__).resolve().parent / "previous-schema"
DIALECTS = ("sqlite", "postgresql")
# The data the scripts hold, in insertion order (parents first); serial columns are left out.
ROWS: dict[str, list[dict[str, Any]]] = {
    "kamar": [
        {"nama": "Al-Fatih 1", "gedung": "Putra", "kapasitas": 6, "musyrif": "Ust. Ridwan"},
        {"nama": "Aisyah 2", "gedung": "Putri", "kapasitas": 6, "musyrif": "Ustz. Halimah"},
    ],
    "anak": [
        {
            "id": "A001",
            "nama": "Ahmad Fauzi",
            "kelas": "7A",
            "kamar": "Al-Fatih 1",
            "status": "aktif",
            "jenis_kelamin": "L",
            "nama_wali": "Bapak Hasan",
            "nik": "3171000000000001",
            "no_hp_wali": "081200000001",
            "alamat": "Jl. Melati No. 1, Bogor",
            "tanggal_lahir": date(2013, 1, 5),
        },
        {
            "id": "A002",
            "nama": "Budi Santoso",
            "kelas": "8B",
            "kamar": "Al-Fatih 1",
            "status": "aktif",
            "jenis_kelamin": "L",
            "nama_wali": "Ibu Sari",
            "nik": "3171000000000002",
            "no_hp_wali": "081200000002",
            "alamat": "Jl. Mawar No. 2, Depok",
            "tanggal_lahir": date(2012, 2, 6),
        },
        {
            "id": "A003",
            "nama": "Citra Lestari",
            "kelas": "7A",
            "kamar": "Aisyah 2",
            "status": "izin",
            "jenis_kelamin": "P",
            "nama_wali": "Bapak Joko",
            "nik": "3171000000000003",
            "no_hp_wali": "081200000003",
            "alamat": "Jl. Kenanga No. 3, Bekasi",
            "tanggal_lahir": date(2013, 3, 7),
        },
        {
            "id": "A004",
            "nama": "Dewi Anggraini",
            "kelas": "9C",
            "kamar": None,
            "status": "aktif",
            "jenis_kelamin": None,
            "nama_wali": None,
            "nik": None,
            "no_hp_wali": None,
            "alamat": None,
            "tanggal_lahir": None,
        },
    ],
    "absensi": [
        {"tanggal": date(2026, 10, 1), "id_anak": "A002", "status": "izin", "keterangan": "Izin sakit"},
        {"tanggal": date(2026, 10, 2), "id_anak": "A002", "status": "izin", "keterangan": "Izin sakit"},
        {"tanggal": date(2026, 10, 5), "id_anak": "A001", "status": "hadir", "keterangan": None},
        {"tanggal": date(2026, 10, 5), "id_anak": "A002", "status": "sakit", "keterangan": "Demam"},
        {"tanggal": date(2026, 10, 5), "id_anak": "A003", "status": "hadir", "keterangan": None},
        {"tanggal": date(2026, 10, 6), "id_anak": "A001", "status": "hadir", "keterangan": None},
        {"tanggal": date(2026, 10, 6), "id_anak": "A002", "status": "hadir", "keterangan": None},
        {"tanggal": date(2026, 10, 6), "id_anak": "A003", "status": "izin", "keterangan": "Izin pulang"},
        {"tanggal": date(2026, 10, 7), "id_anak": "A003", "status": "izin", "keterangan": "Izin pulang"},
        {"tanggal": date(2026, 10, 8), "id_anak": "A003", "status": "izin", "keterangan": "Izin pulang"},
    ],
    "izin": [
        {
            "id": "ab3Kq9ZfT0xYw1Lm",
            "id_anak": "A003",
            "dari": date(2026, 10, 6),
            "sampai": date(2026, 10, 8),
            "jenis": "pulang",
            "alasan": "Acara keluarga",
            "tanggal_kembali": None,
            "dibuat_oleh": "Kantor",
            "dibuat": datetime.fromisoformat("2026-10-05T09:30:00+00:00"),
            "selesai_oleh": None,
        },
        {
            "id": "Qw7pR2sTu4vXy6Za",
            "id_anak": "A002",
            "dari": date(2026, 10, 1),
            "sampai": date(2026, 10, 3),
            "jenis": "sakit",
            "alasan": None,
            "tanggal_kembali": date(2026, 10, 3),
            "dibuat_oleh": "Kantor",
            "dibuat": datetime.fromisoformat("2026-09-30T16:00:00+00:00"),
            "selesai_oleh": "Ust. Ridwan",
        },
    ],
    "riwayat_absensi": [
        *(
            {
                "tanggal": date(2026, 10, day),
                "id_anak": "A002",
                "status_lama": None,
                "status_baru": "izin",
                "keterangan_lama": None,
                "keterangan_baru": "Izin sakit",
                "oleh": "Kantor",
                "waktu": datetime.fromisoformat("2026-09-30T16:00:00+00:00"),
                "kunci": "izin-A002-2026-10-01-kantor",
            }
            for day in (1, 2, 3)
        ),
        {
            "tanggal": date(2026, 10, 3),
            "id_anak": "A002",
            "status_lama": "izin",
            "status_baru": None,
            "keterangan_lama": "Izin sakit",
            "keterangan_baru": None,
            "oleh": "Ust. Ridwan",
            "waktu": datetime.fromisoformat("2026-10-03T07:45:00+00:00"),
            "kunci": "izin-A002-selesai-ridwan",
        },
        *(
            {
                "tanggal": date(2026, 10, 5),
                "id_anak": id_anak,
                "status_lama": None,
                "status_baru": status,
                "keterangan_lama": None,
                "keterangan_baru": keterangan,
                "oleh": "Ust. Ridwan",
                "waktu": datetime.fromisoformat("2026-10-05T06:10:00+00:00"),
                "kunci": "absen-2026-10-05-ridwan-01",
            }
            for id_anak, status, keterangan in [
                ("A001", "hadir", None),
                ("A002", "sakit", "Demam"),
                ("A003", "hadir", None),
            ]
        ),
        *(
            {
                "tanggal": date(2026, 10, day),
                "id_anak": "A003",
                "status_lama": None,
                "status_baru": "izin",
                "keterangan_lama": None,
                "keterangan_baru": "Izin pulang",
                "oleh": "Kantor",
                "waktu": datetime.fromisoformat("2026-10-05T09:30:00+00:00"),
                "kunci": "izin-A003-2026-10-06-kantor",
            }
            for day in (6, 7, 8)
        ),
    ],
    "idempotensi": [
        {
            "kunci": "izin-A003-2026-10-06-kantor",
            "rute": "POST /izin",
            "sidik": "5f0c6d1e8a9b4c2d7e3f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d",
            "status_code": 201,
            "respons": '{"id":"ab3Kq9ZfT0xYw1Lm","id_anak":"A003","dari":"2026-10-06","sampai":"2026-10-08"}',
            "waktu": datetime.fromisoformat("2026-10-05T09:30:00+00:00"),
        }
    ],
}


def fixture(dialect: str) -> Path:
    """The script of `dialect` ("sqlite" or "postgresql")."""
    return HERE / f"{dialect}.sql"


def load(url: str, script: Path) -> None:
    """Run `script` on the (empty) database `url` through its driver, as one batch."""
    sql = script.read_text(encoding="utf-8")
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        import sqlite3

        create_private(Path(str(parsed.database)))  # personal data: 0600, as the service makes its files
        conn = sqlite3.connect(str(parsed.database))
        try:
            conn.executescript(sql)
        finally:
            conn.close()
        return
    engine = create_engine(url)
    try:
        raw = engine.raw_connection()
        try:
            with raw.cursor() as cursor:
                cursor.execute(sql)
            raw.commit()
        finally:
            raw.close()
    finally:
        engine.dispose()


def snapshot(engine: Engine) -> dict[str, Any]:
    """What a database's schema is, comparable between two databases: per table its columns (type, nullability,
    default), keys, foreign keys, unique constraints and indexes as SQLAlchemy reflects them, plus what reflection
    does not show: SQLite's stored DDL (virtual tables, triggers), PostgreSQL's index definitions, constraints,
    sequences and extensions. `alembic_version` is left out (compare it on its own)."""
    with warnings.catch_warnings():
        # SQLite's expression indexes (lower(kelas)) are not reflected: sqlite_master below holds them.
        warnings.filterwarnings("ignore", "Skipped unsupported reflection of expression-based index", SAWarning)
        tables = _reflected(engine)
    return {"tables": tables, **_snapshot_extras(engine)}


def _reflected(engine: Engine) -> dict[str, Any]:
    inspector = inspect(engine)
    tables: dict[str, Any] = {}
    for name in sorted(set(inspector.get_table_names()) - {"alembic_version"}):
        tables[name] = {
            "columns": [
                (c["name"], str(c["type"]), c["nullable"], str(c.get("default")), c.get("autoincrement"))
                for c in inspector.get_columns(name)
            ],
            "primary_key": inspector.get_pk_constraint(name),
            "foreign_keys": sorted(inspector.get_foreign_keys(name), key=repr),
            "unique": sorted(inspector.get_unique_constraints(name), key=repr),
            "indexes": sorted(inspector.get_indexes(name), key=lambda i: str(i["name"])),
            "checks": sorted(inspector.get_check_constraints(name), key=repr),
        }
    return tables


def rows(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the tables of ROWS, in key order, as the driver returns them."""
    with engine.connect() as conn:
        return {name: [tuple(r) for r in conn.execute(text(f"SELECT * FROM {name} ORDER BY 1, 2"))] for name in ROWS}


def _snapshot_extras(engine: Engine) -> dict[str, Any]:
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            stored = conn.execute(
                text(
                    # sqlite_stat1: the planner's statistics (the service keeps them), data rather than schema
                    "SELECT type, name, tbl_name, sql FROM sqlite_master "
                    "WHERE tbl_name != 'alembic_version' AND name NOT LIKE 'sqlite_stat%' ORDER BY name"
                )
            )
            extras: dict[str, Any] = {"sqlite_master": [tuple(row) for row in stored]}
        else:
            extras = {
                "indexes": conn.execute(
                    text(
                        "SELECT indexname, indexdef FROM pg_indexes "
                        "WHERE schemaname = 'public' AND tablename != 'alembic_version' ORDER BY indexname"
                    )
                ).all(),
                "constraints": conn.execute(
                    text(
                        "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint "
                        "WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text != 'alembic_version' "
                        "ORDER BY 1, 2"
                    )
                ).all(),
                "sequences": conn.execute(
                    text("SELECT sequence_name, data_type FROM information_schema.sequences ORDER BY 1")
                ).all(),
                "extensions": conn.execute(text("SELECT extname FROM pg_extension ORDER BY 1")).all(),
            }
    return {k: [tuple(r) for r in v] for k, v in extras.items()}


def _literal(value: Any, dialect: str) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, datetime):
        # SQLite: the text SQLAlchemy's DateTime stores (no offset); PostgreSQL: a timestamptz literal.
        value = value.strftime("%Y-%m-%d %H:%M:%S.%f") if dialect == "sqlite" else value.isoformat(sep=" ")
    if isinstance(value, date):
        value = value.isoformat()
    return "'" + str(value).replace("'", "''") + "'"


def _record(url: str, dialect: str) -> str:
    """Run this checkout's `init_schema` and insert ROWS through the ORM's tables; the script that does the same."""
    from sqlalchemy import insert

    from mcp_asrama.service.db import init_schema, make_engine
    from mcp_asrama.service.models import Base

    engine = make_engine(url)
    ddl: list[str] = []

    def keep(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if statement.lstrip().upper().startswith(("CREATE", "DROP", "ALTER")):
            ddl.append(statement.strip())

    event.listen(engine, "before_cursor_execute", keep)
    init_schema(engine)
    event.remove(engine, "before_cursor_execute", keep)
    tables = Base.metadata.tables
    with engine.begin() as conn:
        for name, rows in ROWS.items():
            conn.execute(insert(tables[name]), rows)
    lines = [
        f"-- A database of mcp-asrama before Alembic ({dialect}): the DDL its init_schema ran on an empty database,",
        "-- then a few rows. Made by tests/data/previous_schema.py; do not edit (it stands for databases in use).",
        "",
    ]
    lines += [f"{statement};\n" for statement in ddl]
    for name, rows in ROWS.items():
        for row in rows:
            columns = ", ".join(row)
            values = ", ".join(_literal(v, dialect) for v in row.values())
            lines.append(f"INSERT INTO {name} ({columns}) VALUES ({values});")
        lines.append("")
    engine.dispose()
    return "\n".join(lines)


def main(folder: Path) -> None:
    """Write both scripts into `folder` and check that each, loaded into an empty database, gives the schema that
    `init_schema` gave."""
    import os
    import tempfile
    import uuid

    from mcp_asrama.service.db import make_engine

    folder.mkdir(parents=True, exist_ok=True)
    pg = os.environ.get("ASRAMA_TEST_PG_URL")
    if not pg:
        sys.exit("set ASRAMA_TEST_PG_URL (bash scripts/postgres-for-tests.sh)")
    admin = create_engine(pg, isolation_level="AUTOCOMMIT")
    with tempfile.TemporaryDirectory() as tmp:
        for dialect in DIALECTS:
            urls = []
            for n in range(2):
                if dialect == "sqlite":
                    urls.append(f"sqlite:///{tmp}/{n}.db")
                    continue
                name = f"asrama_fixture_{uuid.uuid4().hex[:12]}"
                with admin.connect() as conn:
                    conn.execute(text(f'CREATE DATABASE "{name}"'))
                urls.append(make_url(pg).set(database=name).render_as_string(hide_password=False))
            made, loaded = urls
            script = folder / f"{dialect}.sql"
            script.write_text(_record(made, dialect), encoding="utf-8")
            load(loaded, script)
            engines = [make_engine(u) for u in urls]
            same = snapshot(engines[0]) == snapshot(engines[1]) and rows(engines[0]) == rows(engines[1])
            for engine in engines:
                engine.dispose()
            if dialect == "postgresql":
                with admin.connect() as conn:
                    for url in urls:
                        conn.execute(text(f'DROP DATABASE "{make_url(url).database}" WITH (FORCE)'))
            if not same:
                sys.exit(f"{script}: loaded, it does not give the schema and rows init_schema and the ORM made")
            print(f"{script}: written; loaded, it gives the schema and rows that init_schema and the ORM made")
    admin.dispose()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
