"""The `mcp-asrama` command and its settings: import exit codes, refusing unsafe binds, and real processes."""

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from importlib.metadata import version
from pathlib import Path
from typing import Any

import httpx2
import pytest
from pydantic import ValidationError
from sqlalchemy import select

from mcp_asrama import cli
from mcp_asrama.config import DatabaseSettings, ServiceSettings, is_loopback, token_file
from mcp_asrama.runtime.invocation import shown
from mcp_asrama.service.db import describe, make_engine, make_sessionmaker
from mcp_asrama.service.models import Anak, Kamar
from tests.conftest import TUTORIAL_ABSENSI, TUTORIAL_ANAK, TUTORIAL_KAMAR, insert_rows
from tests.e2e.conftest import free_port
from tests.http_rpc import reply

SISWA = "id;nama;kelas;nik\nA010;Dewi Anggraini;9C;3273014509120004\nA011;Eko Prasetyo;10A;\n"
BROKEN = "id,nama,kelas,nik\nA010,Dewi,9C,12\nA011,,10A,\nA001,Ahmad Fauzi,8A,\n"
CONSOLE_SCRIPT = Path(sys.executable).with_name("mcp-asrama")


def _stored(db_url: str) -> dict[str, tuple[Any, ...]]:
    engine = make_engine(db_url)
    try:
        with make_sessionmaker(engine)() as session:
            rows = session.execute(select(Anak.__table__)).all()
            rooms = session.execute(select(Kamar.nama, Kamar.gedung, Kamar.kapasitas, Kamar.musyrif)).all()
    finally:
        engine.dispose()
    return {"anak": tuple(sorted(tuple(r) for r in rows)), "kamar": tuple(sorted(tuple(r) for r in rooms))}


# --- import ----------------------------------------------------------------------------------------------


def test_import_anak_exits_0_and_reports_added_then_updated(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "siswa.csv"
    path.write_text(SISWA, encoding="utf-8")
    assert cli.main(["import", "anak", str(path), "--buat", "--db", db_url]) == 0
    assert "2 added, 0 updated (anak)" in capsys.readouterr().out
    assert cli.main(["import", "anak", str(path), "--buat", "--db", db_url]) == 0
    assert "0 added, 2 updated (anak)" in capsys.readouterr().out
    assert {r[1] for r in _stored(db_url)["anak"]} == {"A010", "A011"}


def test_import_rejected_exits_1_with_each_error_on_stderr_and_changes_nothing(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    insert_rows(db_url, kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK, absensi=TUTORIAL_ABSENSI)
    before = _stored(db_url)
    path = tmp_path / "rusak.csv"
    path.write_text(BROKEN, encoding="utf-8")
    assert cli.main(["import", "anak", str(path), "--buat", "--db", db_url]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert lines[0].startswith("row 2: nik: 16 digits")
    assert lines[1] == "row 3: nama: required"
    assert lines[2] == f"{path}: 2 error(s); nothing was imported into {describe(db_url)}"
    assert _stored(db_url) == before


def test_import_kamar_exits_0(db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "kamar.csv"
    path.write_text("nama,gedung,kapasitas,musyrif\nUmar 1,Putra,8,Ust. Salman\n", encoding="utf-8")
    assert cli.main(["import", "kamar", str(path), "--buat", "--db", db_url]) == 0
    assert "1 added, 0 updated (kamar)" in capsys.readouterr().out
    assert _stored(db_url)["kamar"] == (("Umar 1", "Putra", 8, "Ust. Salman"),)


def test_import_of_a_missing_file_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path / 'a.db'}"
    assert cli.main(["import", "anak", str(tmp_path / "tidak-ada.csv"), "--buat", "--db", db]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_import_uses_asrama_db_url_without_db_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db_url = f"sqlite:///{tmp_path / 'dari-env.db'}"
    monkeypatch.setenv("ASRAMA_DB_URL", db_url)
    path = tmp_path / "siswa.csv"
    path.write_text(SISWA, encoding="utf-8")
    assert cli.main(["import", "anak", str(path), "--buat"]) == 0
    assert str(tmp_path / "dari-env.db") in capsys.readouterr().out
    assert len(_stored(db_url)["anak"]) == 2


def test_import_does_not_need_service_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ASRAMA_SERVICE_HOST", "0.0.0.0")  # noqa: S104 - what a server's environment may hold
    path = tmp_path / "siswa.csv"
    path.write_text(SISWA, encoding="utf-8")
    assert cli.main(["import", "anak", str(path)]) == 0
    assert (tmp_path / "data" / "mcp-asrama" / "asrama.db").is_file()


def test_import_into_an_unreachable_database_exits_1_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    path = tmp_path / "siswa.csv"
    path.write_text(SISWA, encoding="utf-8")
    url = f"postgresql+psycopg://asrama:rahasia@127.0.0.1:{port}/asrama"
    assert cli.main(["import", "anak", str(path), "--buat", "--db", url]) == 1
    err = capsys.readouterr().err
    assert "nothing was imported" in err
    assert "rahasia" not in err
    assert "Traceback" not in err


def test_import_of_a_student_in_a_missing_room_exits_1_unless_buat_kamar_creates_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'a.db'}"
    path = tmp_path / "siswa.csv"
    path.write_text("id,nama,kelas,kamar,jenis_kelamin\nA010,Dewi,9C,Aisyah 7,P\n", encoding="utf-8")
    assert cli.main(["import", "anak", str(path), "--buat", "--db", db]) == 1
    assert capsys.readouterr().err.startswith("row 2: kamar: no such room")
    assert _stored(db) == {"anak": (), "kamar": ()}
    assert cli.main(["import", "anak", str(path), "--buat", "--db", db, "--buat-kamar"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("created 1 room(s) the file names: Aisyah 7 (")
    assert _stored(db)["kamar"] == (("Aisyah 7", "Putri", 1, None),)


def test_buat_kamar_with_import_kamar_is_refused_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "kamar.csv"
    path.write_text("nama,gedung,kapasitas\nUmar 1,Putra,8\n", encoding="utf-8")
    assert cli.main(["import", "kamar", str(path), "--buat", "--db", str(tmp_path / "a.db"), "--buat-kamar"]) == 2
    assert "use it with import anak" in capsys.readouterr().err
    assert not (tmp_path / "a.db").exists()


def test_import_help_lists_the_importers_columns_and_the_shipped_example_files(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from mcp_asrama.service.importer import columns_help

    with pytest.raises(SystemExit) as exited:
        cli.main(["import", "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: mcp-asrama import")
    assert columns_help() in out
    assert "--buat-kamar" in out
    examples = out.split("Example files: ")[1].split()
    assert [Path(examples[0]).name, Path(examples[2]).name] == ["kamar.csv", "siswa.csv"]
    assert Path(examples[0]).is_file() and Path(examples[2]).is_file()


# --- --db and ASRAMA_DB_URL: a file path or a URL --------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "where"),
    [
        ("siswa.db", "work/siswa.db"),
        ("./data/asrama.db", "work/data/asrama.db"),
        ("~/asrama.db", "home/asrama.db"),
        ("{tmp}/srv/asrama.db", "srv/asrama.db"),
    ],
)
def test_db_flag_takes_a_plain_file_path_for_every_command(
    given: str, where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    path = tmp_path / "siswa.csv"
    path.write_text(SISWA, encoding="utf-8")
    db = tmp_path / where
    db.parent.mkdir(parents=True, exist_ok=True)  # --buat creates the file, never a folder
    assert cli.main(["import", "anak", str(path), "--buat", "--db", given.format(tmp=tmp_path)]) == 0
    assert capsys.readouterr().out.rstrip().endswith(f"(anak) in {db}")
    assert len(_stored(f"sqlite:///{db}")["anak"]) == 2
    assert ServiceSettings(db_url=given.format(tmp=tmp_path)).db_url == f"sqlite:///{db}"


def test_asrama_db_url_takes_a_plain_file_path_and_blank_means_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASRAMA_DB_URL", "sekolah.db")
    assert DatabaseSettings().db_url == ServiceSettings().db_url == f"sqlite:///{tmp_path / 'sekolah.db'}"
    monkeypatch.setenv("ASRAMA_DB_URL", " ")
    assert DatabaseSettings().db_url == f"sqlite:///{tmp_path / 'data' / 'mcp-asrama' / 'asrama.db'}"


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("postgres://asrama:rahasia@db.sekolah/asrama", "'postgres' is not a database we support"),
        ("mysql://asrama:rahasia@db.sekolah/asrama", "'mysql' is not a database we support"),
        ("postgresql+pg8000://asrama:rahasia@db.sekolah/asrama", "the driver 'pg8000' of 'postgresql+pg8000' is not"),
        ("postgresql+nosuch://asrama:rahasia@db.sekolah/asrama", "'postgresql+nosuch' names an unknown driver"),
        ("postgresql+psycopg://asrama:rahasia@db.sekolah:port/asrama", "'postgresql+psycopg://…' is not a database"),
        ("asrama:rahasia@db.sekolah/asrama", "'asrama:…' is neither a file path nor a URL"),
    ],
)
@pytest.mark.parametrize("command", [["import", "anak", "siswa.csv"], ["service"], ["demo"]])
def test_unusable_database_url_is_one_line_without_the_password_and_exit_2(
    url: str,
    says: str,
    command: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main([*command, "--buat", "--db", url]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"configuration error: db_url: {says}")
    assert err.count("\n") == 1
    assert "rahasia" not in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.e2e
def test_postgresql_without_the_postgres_extra_is_one_line_naming_the_extra(tmp_path: Path) -> None:
    without_psycopg = (
        "import sys; sys.modules['psycopg'] = None; from mcp_asrama.cli import main; "
        "sys.exit(main(['import', 'anak', 'siswa.csv', '--db', 'postgresql+psycopg://asrama:rahasia@127.0.0.1/a']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", without_psycopg], capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "configuration error: db_url: PostgreSQL needs the postgres extra: pip install 'mcp-asrama[postgres]' "
        "(in the project folder: .venv/bin/pip install -e '.[postgres]')"
    ]


def test_service_on_a_database_folder_that_cannot_be_made_exits_1_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "berkas").write_text("not a folder")
    assert (
        cli.main(["service", "--port", str(_free_port()), "--buat", "--db", str(tmp_path / "berkas" / "asrama.db")])
        == 1
    )
    assert capsys.readouterr().err.splitlines() == [f"cannot use {tmp_path / 'berkas'}: File exists"]


def test_service_on_an_unreachable_database_exits_1_with_one_line_without_the_password(
    capsys: pytest.CaptureFixture[str],
) -> None:
    closed = _free_port()
    url = f"postgresql+psycopg://asrama:rahasia@127.0.0.1:{closed}/asrama"
    assert cli.main(["service", "--port", str(_free_port()), "--buat", "--db", url]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"database postgresql+psycopg://asrama:***@127.0.0.1:{closed}/asrama: cannot open it (OperationalError); "
        "check --db or ASRAMA_DB_URL"
    ]


def test_messages_name_an_in_memory_database_as_such() -> None:
    assert describe("sqlite://") == describe("sqlite:///:memory:") == "SQLite in memory (gone when the process stops)"


# --- service settings and refusal ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["service", "--host", "0.0.0.0"],  # noqa: S104
        ["service", "--host", "::", "--demo"],
        ["service", "--host", "192.168.1.10"],
        ["demo", "--host", "0.0.0.0"],  # noqa: S104
    ],
)
def test_public_host_without_token_refuses_before_serving_with_exit_2(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "tidak-dibuat.db"
    assert (
        cli.main([*argv, "--port", str(free_port()), "--buat", "--db", f"sqlite:///{db}"]) == 2
    )  # refused before binding
    err = capsys.readouterr().err
    assert "refusing to serve student data" in err
    assert "ASRAMA_SERVICE_TOKEN" in err
    assert not db.exists()


def test_public_host_from_environment_without_token_refuses_with_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ASRAMA_SERVICE_HOST", "0.0.0.0")  # noqa: S104
    monkeypatch.setenv("ASRAMA_SERVICE_TOKEN", "   ")
    assert cli.main(["service", "--buat", "--db", f"sqlite:///{tmp_path / 'x.db'}"]) == 2
    assert "ASRAMA_SERVICE_TOKEN" in capsys.readouterr().err
    assert not (tmp_path / "x.db").exists()


def test_invalid_port_is_a_configuration_error_naming_the_setting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["service", "--port", "70000", "--buat", "--db", f"sqlite:///{tmp_path / 'x.db'}"]) == 2
    assert "configuration error: port:" in capsys.readouterr().err


def test_service_settings_read_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASRAMA_DB_URL", "postgresql+psycopg://u:p@db.sekolah/asrama")
    monkeypatch.setenv("ASRAMA_SERVICE_TOKEN", "rahasia-sekolah")
    monkeypatch.setenv("ASRAMA_SERVICE_HOST", "0.0.0.0")  # noqa: S104
    monkeypatch.setenv("ASRAMA_SERVICE_PORT", "8080")
    settings = ServiceSettings()
    assert settings.db_url == "postgresql+psycopg://u:p@db.sekolah/asrama"
    assert settings.token == "rahasia-sekolah"
    assert (settings.host, settings.port) == ("0.0.0.0", 8080)  # noqa: S104
    assert "rahasia-sekolah" not in repr(settings)
    assert DatabaseSettings().db_url == settings.db_url


def test_explicit_values_override_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASRAMA_DB_URL", "sqlite:///env.db")
    monkeypatch.setenv("ASRAMA_SERVICE_PORT", "8080")
    settings = ServiceSettings(db_url="sqlite:///flag.db", port=9000)
    assert (settings.db_url, settings.port) == ("sqlite:///flag.db", 9000)


def test_defaults_are_loopback_port_8000_no_token_and_a_file_in_the_data_folder(tmp_path: Path) -> None:
    settings = ServiceSettings()
    assert (settings.host, settings.port, settings.token) == ("127.0.0.1", 8000, None)
    assert settings.db_url == f"sqlite:///{tmp_path / 'data' / 'mcp-asrama' / 'asrama.db'}"


@pytest.mark.parametrize("token", [None, "", "  \n"])
def test_public_bind_needs_a_real_token(token: str | None) -> None:
    with pytest.raises(ValidationError, match="ASRAMA_SERVICE_TOKEN"):
        ServiceSettings(host="0.0.0.0", service_token=token)  # noqa: S104


def test_public_bind_with_a_token_is_allowed_and_the_token_is_trimmed() -> None:
    settings = ServiceSettings(host="0.0.0.0", service_token=" rahasia\n")  # noqa: S104
    assert settings.token == "rahasia"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),  # noqa: S104
        ("::", False),
        ("10.0.0.5", False),
        ("sekolah.example", False),
        ("", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


# --- arguments -------------------------------------------------------------------------------------------


def test_version_flag_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"mcp-asrama {version('mcp-asrama')}"


@pytest.mark.parametrize(
    "argv",
    [[], ["import", "guru", "x.csv"], ["import", "anak"], ["--log-level", "LOUD", "import", "anak", "x.csv"]],
)
def test_bad_arguments_are_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    assert exited.value.code == 2
    assert "usage: mcp-asrama" in capsys.readouterr().err


# --- real processes --------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Service:
    """A running `mcp-asrama` process, its port and its stderr log."""

    def __init__(self, process: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.process, self.port, self.log = process, port, log
        self.url = f"http://127.0.0.1:{port}"

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"service exited with {self.process.returncode}:\n{self.log.read_text()}")
            try:
                if httpx2.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx2.TransportError:
                pass
            time.sleep(0.1)
        pytest.fail(f"service not ready after {timeout} s:\n{self.log.read_text()}")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)
        return self.process.returncode


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[..., Service]]:
    """Start `mcp-asrama ARGS --port <free>` on 127.0.0.1; every process is stopped at the end of the test."""
    started: list[Service] = []

    def run(*args: str, env: dict[str, str] | None = None) -> Service:
        port = _free_port()
        log = tmp_path / f"service-{len(started)}.log"
        with log.open("wb") as stderr:
            process = subprocess.Popen(
                [str(CONSOLE_SCRIPT), *args, "--port", str(port)],
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                env={**os.environ, **(env or {})},
            )
        service = Service(process, port, log)
        started.append(service)
        service.wait_ready()
        return service

    yield run
    for service in started:
        service.stop()


def _token(db: Path) -> dict[str, str]:
    """The header with the token a service generated for its database `db` (kept in the data folder)."""
    return {"Authorization": f"Bearer {token_file(f'sqlite:///{db}').read_text().strip()}"}


def _counts(url: str, headers: dict[str, str]) -> dict[str, int]:
    today = date.today()
    with httpx2.Client(base_url=url, timeout=30, headers=headers) as client:
        rekap = client.get(
            "/absensi/rekap",
            params={"dari": (today - timedelta(days=365)).isoformat(), "sampai": today.isoformat()},
        ).json()
        return {
            "anak": client.get("/anak", params={"limit": 1}).json()["total"],
            "kamar": len(client.get("/kamar").json()["data"]),
            "absensi": sum(rekap["total"].values()),
        }


@pytest.mark.e2e
def test_service_demo_restarted_keeps_its_data_and_does_not_add_the_demo_again(
    tmp_path: Path, start: Callable[..., Service]
) -> None:
    db = f"sqlite:///{tmp_path / 'asrama.db'}"
    today = date.today().isoformat()
    first = start("service", "--demo", "--buat", "--db", db)
    auth = _token(tmp_path / "asrama.db")
    assert _counts(first.url, auth) == {"anak": 300, "kamar": 20, "absensi": 300 * 60}
    recorded = httpx2.put(
        f"{first.url}/absensi/{today}/A001",
        json={"status": "sakit", "keterangan": "Demam tinggi"},
        headers=auth,
        timeout=10,
    )
    assert recorded.status_code == 200
    assert first.stop() == 0
    assert "demo data: created" in first.log.read_text()

    second = start("service", "--demo", "--buat", "--db", db)
    assert _counts(second.url, auth) == {"anak": 300, "kamar": 20, "absensi": 300 * 60}
    day = httpx2.get(f"{second.url}/absensi", params={"tanggal": today}, headers=auth, timeout=10).json()["data"]
    a001 = next(r for r in day if r["id_anak"] == "A001")
    assert (a001["status"], a001["keterangan"]) == ("sakit", "Demam tinggi")
    assert second.stop() == 0
    assert "database already has data, left as it is" in second.log.read_text()


@pytest.mark.e2e
def test_demo_command_uses_the_configured_database_and_leaves_an_old_demo_file_alone(
    tmp_path: Path, start: Callable[..., Service]
) -> None:
    school_db = tmp_path / "sekolah.db"
    data = tmp_path / "data" / "mcp-asrama"
    old_demo = data / "demo.db"
    insert_rows(f"sqlite:///{old_demo}", kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK, absensi=[])
    old_content = old_demo.read_bytes()
    mcp_port = _free_port()
    service = start(
        "demo",
        "--buat",
        "--mcp-port",
        str(mcp_port),
        env={"ASRAMA_DB_URL": str(school_db), "XDG_DATA_HOME": str(tmp_path / "data")},
    )
    assert _counts(service.url, _token(school_db))["anak"] == 300
    # The MCP server beside it got the generated token: the demo needs no set-up.
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "cari_anak", "arguments": {}}}
    answer = reply(
        httpx2.post(
            f"http://127.0.0.1:{mcp_port}/mcp",
            json=call,
            headers={"Accept": "application/json, text/event-stream"},
            timeout=30,
        )
    )["result"]
    assert answer["structuredContent"]["total"] == 300
    assert service.stop() == 0
    log = service.log.read_text()
    assert f"database: {school_db}\n" in log
    assert f"note: {old_demo} is the demo database of an earlier version and is no longer used" in log
    assert f"to open it again: {shown()} demo --db {old_demo}\n" in log  # as typed from here, like the banner
    assert old_demo.read_bytes() == old_content
    assert len(_stored(f"sqlite:///{school_db}")["anak"]) == 300


@pytest.mark.e2e
def test_service_with_token_rejects_requests_without_it(tmp_path: Path, start: Callable[..., Service]) -> None:
    service = start(
        "service", "--buat", "--db", f"sqlite:///{tmp_path / 'a.db'}", env={"ASRAMA_SERVICE_TOKEN": "rahasia"}
    )
    assert httpx2.get(f"{service.url}/anak", timeout=10).status_code == 401
    authorised = httpx2.get(f"{service.url}/anak", headers={"Authorization": "Bearer rahasia"}, timeout=10)
    assert authorised.json() == {"total": 0, "data": []}


@pytest.mark.e2e
def test_console_script_refuses_a_public_bind_without_token(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(CONSOLE_SCRIPT), "service", "--host", "0.0.0.0", "--buat", "--db", f"sqlite:///{tmp_path / 'a.db'}"],  # noqa: S104
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "ASRAMA_SERVICE_TOKEN" in done.stderr
    assert not (tmp_path / "a.db").exists()


@pytest.mark.e2e
def test_python_m_mcp_asrama_is_the_same_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcp_asrama", "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0
    assert done.stdout.strip() == f"mcp-asrama {version('mcp-asrama')}"


def test_a_database_that_cannot_be_opened_leaves_no_token_file_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "sekolah"
    (folder / "asrama.db").mkdir(parents=True)  # a folder where the database file should be
    assert cli.main(["service", "--buat", "--db", str(folder / "asrama.db")]) == 1
    assert "Traceback" not in capsys.readouterr().err
    assert not (folder / "service-token").exists()
    assert not token_file(f"sqlite:///{folder / 'asrama.db'}").exists()
