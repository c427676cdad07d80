"""A `--db` (or ASRAMA_DB_URL) naming a SQLite file that does not exist is refused in one line, exit 2, nothing
created, unless `--buat` (and then only in a folder that exists); the default database is still created on first
use; PostgreSQL is not checked. Through the real console script."""

import subprocess
from pathlib import Path

import pytest

from mcp_asrama.ops.database import require_database
from tests.e2e.conftest import EXECUTABLE, clean_env, free_port

KAMAR = "nama,gedung,kapasitas,musyrif\nUmar 1,Putra,8,Ust. Salman\n"


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([EXECUTABLE, *args], capture_output=True, text=True, env=clean_env(**env), timeout=60)


def missing(path: Path) -> str:
    return f"no database at {path}: check the path, or add --buat to create a new empty one"


@pytest.fixture
def kamar_csv(tmp_path: Path) -> Path:
    path = tmp_path / "kamar.csv"
    path.write_text(KAMAR, encoding="utf-8")
    return path


def commands(csv: Path) -> list[list[str]]:
    """Every command that opens the database of `--db`, as far as the point where it would."""
    return [
        ["import", "kamar", str(csv)],
        ["service", "--port", str(free_port())],
        ["service", "--upgrade"],
        ["demo", "--port", str(free_port()), "--mcp-port", str(free_port())],
        ["pengurus", "daftar"],
        ["backup", str(csv.with_name("salinan.db"))],
    ]


@pytest.mark.parametrize("index", range(6))
@pytest.mark.parametrize("form", ["path", "url"])
def test_a_typo_in_db_is_refused_in_one_line(tmp_path: Path, kamar_csv: Path, index: int, form: str) -> None:
    db = tmp_path / "sekolah.db"
    done = run(*commands(kamar_csv)[index], "--db", str(db) if form == "path" else f"sqlite:///{db}")
    assert (done.returncode, done.stderr.splitlines()) == (2, [missing(db)])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kamar.csv"]  # no database, no token file


@pytest.mark.parametrize("command", [["import", "kamar"], ["service", "--upgrade"]])
def test_asrama_db_url_naming_a_missing_file_is_refused_too(
    tmp_path: Path, kamar_csv: Path, command: list[str]
) -> None:
    db = tmp_path / "sekolah.db"
    argv = [*command, str(kamar_csv)] if command[0] == "import" else command
    done = run(*argv, ASRAMA_DB_URL=str(db), XDG_DATA_HOME=str(tmp_path / "data"))
    assert (done.returncode, done.stderr.splitlines()) == (2, [missing(db)])
    assert not db.exists()


def test_buat_creates_a_new_database_then_it_is_used_without(tmp_path: Path, kamar_csv: Path) -> None:
    db = tmp_path / "sekolah.db"
    created = run("import", "kamar", str(kamar_csv), "--db", str(db), "--buat")
    assert created.returncode == 0, created.stderr
    assert db.is_file()
    again = run("import", "kamar", str(kamar_csv), "--db", str(db))
    assert again.returncode == 0, again.stderr
    assert "0 added, 1 updated (kamar)" in again.stdout  # the same database: the room was there


def test_buat_never_creates_a_folder(tmp_path: Path, kamar_csv: Path) -> None:
    db = tmp_path / "tidak-ada" / "sub" / "x.db"
    for argv in (["import", "kamar", str(kamar_csv)], ["service", "--upgrade"], ["pengurus", "daftar"]):
        done = run(*argv, "--db", str(db), "--buat")
        expected = [f"no folder {db.parent} for a new database: check the path (folders are not created)"]
        assert (done.returncode, done.stderr.splitlines()) == (2, expected)
    assert not (tmp_path / "tidak-ada").exists()


def test_service_upgrade_with_buat_creates_the_database(tmp_path: Path) -> None:
    db = tmp_path / "baru.db"
    done = run("service", "--upgrade", "--db", f"sqlite:///{db}", "--buat")
    assert done.returncode == 0, done.stderr
    assert db.is_file()


def test_the_default_database_is_still_created_on_first_use(tmp_path: Path, kamar_csv: Path) -> None:
    data_home = tmp_path / "data"
    done = run("import", "kamar", str(kamar_csv), XDG_DATA_HOME=str(data_home))
    assert done.returncode == 0, done.stderr
    assert (data_home / "mcp-asrama" / "asrama.db").is_file()


def test_postgresql_is_not_checked(tmp_path: Path) -> None:
    url = f"postgresql+psycopg://asrama:rahasia@127.0.0.1:{free_port()}/asrama"
    done = run("service", "--upgrade", "--db", url, XDG_DATA_HOME=str(tmp_path))
    assert done.returncode == 1  # the server does not answer: not a missing file
    assert "no database at" not in done.stderr and "rahasia" not in done.stderr


@pytest.mark.parametrize("db_url", ["sqlite://", "sqlite:///:memory:"])
def test_an_in_memory_database_is_not_a_file(db_url: str) -> None:
    require_database(db_url, buat=False)  # nothing to refuse: no exception
