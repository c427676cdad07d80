"""`mcp-asrama pengurus` through the real console script on a database of its own: add, change, deactivate and list
staff; the password from stdin (Argon2id, verifiable), never from the command line; one-line errors and the exit
codes of `import` (2: asked wrongly, 1: the database says no); `import pengurus` beside them."""

import subprocess
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from sqlalchemy import select

from mcp_asrama.service.db import make_engine, make_sessionmaker
from mcp_asrama.service.models.pengurus import Pengurus
from tests.e2e.conftest import EXECUTABLE, clean_env


def run(*args: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXECUTABLE, *args], input=stdin, capture_output=True, text=True, env=clean_env(**env), timeout=60
    )


def stored(url: str) -> dict[str, Pengurus]:
    engine = make_engine(url)
    try:
        with make_sessionmaker(engine)() as session:
            return {p.email: p for p in session.scalars(select(Pengurus))}
    finally:
        engine.dispose()


def test_add_change_deactivate_and_list_staff(db_url: str, tmp_path: Path) -> None:
    db = ("--buat", "--db", db_url)
    rooms = tmp_path / "kamar.csv"
    rooms.write_text("nama,gedung,kapasitas\nAl-Fatih 1,Putra,10\nAl-Fatih 2,Putra,10\n", encoding="utf-8")
    assert run("import", "kamar", str(rooms), *db).returncode == 0
    unknown = run(
        "pengurus", "tambah", "a@pesantren.sch.id", "--nama", "A", "--peran", "musyrif", "--kamar", "X 9", *db
    )
    assert (unknown.returncode, unknown.stderr.strip()) == (2, "pengurus: kamar tidak ada di daftar kamar: X 9")
    added = run(
        "pengurus", "tambah", "Ridwan@Pesantren.sch.id", "--nama", "Ust. Ridwan", "--peran", "musyrif,wali_kelas",
        "--kamar", "Al-Fatih 1", "Al-Fatih 2", "--kelas", "7A", "--menulis", *db,
    )  # fmt: skip
    assert (added.returncode, added.stdout.strip()) == (0, "added ridwan@pesantren.sch.id"), added.stderr
    again = run("pengurus", "tambah", "ridwan@pesantren.sch.id", "--nama", "R", "--peran", "bk", *db)
    assert again.returncode == 1
    assert (
        again.stderr.strip()
        == "pengurus: ridwan@pesantren.sch.id is already on the list (change it with pengurus ubah)"
    )
    klinik = run("pengurus", "tambah", "siti@pesantren.sch.id", "--nama", "Siti", "--peran", "kesehatan", *db)
    assert klinik.returncode == 0
    moved = run("pengurus", "ubah", "ridwan@pesantren.sch.id", "--kamar", "Al-Fatih 9", *db)
    assert (moved.returncode, moved.stderr.strip()) == (2, "pengurus: kamar tidak ada di daftar kamar: Al-Fatih 9")
    changed = run("pengurus", "ubah", "RIDWAN@pesantren.sch.id", "--peran", "musyrif", "--no-menulis", *db)
    assert changed.returncode == 0, changed.stderr
    off = run("pengurus", "nonaktif", "siti@pesantren.sch.id", *db)
    assert off.returncode == 0
    listed = run("pengurus", "daftar", *db)
    assert listed.returncode == 0
    assert listed.stdout.splitlines() == [
        "ridwan@pesantren.sch.id  musyrif  kamar: Al-Fatih 1; Al-Fatih 2  kelas: 7A",
        "siti@pesantren.sch.id  kesehatan  nonaktif",
    ]
    ridwan = stored(db_url)["ridwan@pesantren.sch.id"]
    assert (ridwan.nama, ridwan.peran, ridwan.menulis, ridwan.aktif) == ("Ust. Ridwan", ["musyrif"], False, True)


def test_asked_wrongly_exits_2_and_unknown_exits_1_each_in_one_line(db_url: str) -> None:
    db = ("--buat", "--db", db_url)
    for args, code, said in [
        (("tambah", "x@pesantren.sch.id", "--nama", "X", "--peran", "guru"), 2, "pengurus: peran: one of kantor,"),
        (("tambah", "bukan-email", "--nama", "X", "--peran", "bk"), 2, "pengurus: email: an email address"),
        (("ubah", "siapa@pesantren.sch.id", "--nama", "X"), 1, "pengurus: siapa@pesantren.sch.id is not on the list"),
        (("nonaktif", "siapa@pesantren.sch.id"), 1, "pengurus: siapa@pesantren.sch.id is not on the list"),
        (("sandi", "siapa@pesantren.sch.id"), 1, "pengurus: siapa@pesantren.sch.id is not on the list"),
    ]:
        done = run("pengurus", *args, *db)
        assert done.returncode == code, (args, done.stderr)
        assert done.stderr.startswith(said) and len(done.stderr.splitlines()) == 1, done.stderr
    assert stored(db_url) == {}


def test_the_password_comes_from_stdin_hashed_with_argon2id_never_from_an_argument(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'asrama.db'}"
    env = {"ASRAMA_DB_URL": url}  # found as import finds it
    assert (
        run(
            "pengurus", "tambah", "ridwan@pesantren.sch.id", "--nama", "R", "--peran", "musyrif", "--buat", **env
        ).returncode
        == 0
    )
    refused = run("pengurus", "sandi", "ridwan@pesantren.sch.id", "rahasia-sekali", **env)
    assert refused.returncode == 2
    assert "never given on the command line" in refused.stderr and "rahasia" not in refused.stderr
    assert stored(url)["ridwan@pesantren.sch.id"].sandi is None
    differ = run("pengurus", "sandi", "ridwan@pesantren.sch.id", stdin="rahasia-sekali\nrahasia-lain\n", **env)
    assert (differ.returncode, differ.stderr.strip()) == (
        1,
        "pengurus sandi: the two passwords differ; nothing was changed",
    )
    short = run("pengurus", "sandi", "ridwan@pesantren.sch.id", stdin="pendek\n", **env)
    assert short.returncode == 1 and stored(url)["ridwan@pesantren.sch.id"].sandi is None
    done = run("pengurus", "sandi", "RIDWAN@pesantren.sch.id", stdin="rahasia sekali\nrahasia sekali\n", **env)
    assert (done.returncode, done.stdout.strip()) == (0, "password set for ridwan@pesantren.sch.id"), done.stderr
    hashed = stored(url)["ridwan@pesantren.sch.id"].sandi
    assert hashed is not None and hashed.startswith("$argon2id$") and "rahasia" not in done.stdout + done.stderr
    assert PasswordHasher().verify(hashed, "rahasia sekali")
    once = run("pengurus", "sandi", "ridwan@pesantren.sch.id", stdin="satu baris saja\n", **env)
    assert once.returncode == 0
    assert PasswordHasher().verify(stored(url)["ridwan@pesantren.sch.id"].sandi or "", "satu baris saja")


def test_import_pengurus_then_list(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'asrama.db'}"
    csv = tmp_path / "pengurus.csv"
    csv.write_text(
        "email,nama,peran,kamar,kelas,menulis,aktif\nRidwan@Pesantren.sch.id,Ust. Ridwan,musyrif,Al-Fatih 1,,ya,ya\n"
        "x@pesantren.sch.id,X,guru,,,tidak,ya\n",
        encoding="utf-8",
    )
    refused = run("import", "pengurus", str(csv), "--buat", "--db", url)
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[:2] == [
        "row 2: kamar: kamar tidak ada di daftar kamar: Al-Fatih 1",  # the rooms come first
        "row 3: peran: one of kantor, musyrif, wali_kelas, kesehatan, bk, admin",
    ]
    rooms = tmp_path / "kamar.csv"
    rooms.write_text("nama,gedung,kapasitas\nAl-Fatih 1,Putra,10\n", encoding="utf-8")
    assert run("import", "kamar", str(rooms), "--db", url).returncode == 0
    csv.write_text(csv.read_text(encoding="utf-8").replace("guru", "kantor"), encoding="utf-8")
    done = run("import", "pengurus", str(csv), "--buat", "--db", url)
    assert done.returncode == 0 and "2 added, 0 updated (pengurus)" in done.stdout, done.stderr
    listed = run("pengurus", "daftar", "--buat", "--db", url).stdout.splitlines()
    assert listed == ["ridwan@pesantren.sch.id  musyrif  kamar: Al-Fatih 1  menulis", "x@pesantren.sch.id  kantor"]


@pytest.mark.parametrize("command", ["tambah", "ubah", "nonaktif", "daftar", "sandi"])
def test_every_command_says_a_database_it_cannot_open_in_one_line(command: str, tmp_path: Path) -> None:
    blocked = tmp_path / "berkas"
    blocked.write_text("", encoding="utf-8")
    args = {"tambah": ["a@b.id", "--nama", "A", "--peran", "bk"], "ubah": ["a@b.id"], "nonaktif": ["a@b.id"]}
    extra = args.get(command, ["a@b.id"] if command == "sandi" else [])
    done = run("pengurus", command, *extra, "--buat", "--db", f"sqlite:///{blocked}/asrama.db")
    assert done.returncode == 1, done.stderr
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
