"""Secrets and files where they belong (issue 23 item 3), through the real console script in a tmp "project folder"
with HOME and the data folder in tmp: nothing the commands write lands in the folder they are typed in but the
database named there; each database's token is its own, 0600 in the data folder, and one an earlier version kept
beside the database is moved there once; the banner's lines, run as printed, reach the database it serves."""

import json
import logging
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from mcp_asrama import cli, config
from mcp_asrama.runtime.logs import configure_logging
from mcp_asrama.server.settings import ServerSettings
from tests.e2e.conftest import EXECUTABLE, clean_env, free_port, stop, wait_until_up

ROOT = Path(__file__).resolve().parents[2]
SISWA = ROOT / "examples" / "siswa.csv"


class Started:
    """A console-script process typed in `cwd`: its stdout (the banner) and stderr (notes, log lines) in files."""

    def __init__(self, process: subprocess.Popen[Any], port: int, out: Path, err: Path) -> None:
        self.process, self.port, self.out, self.err = process, port, out, err
        self.url = f"http://127.0.0.1:{port}"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A user's home without XDG_DATA_HOME: the data folder is ~/.local/share/mcp-asrama."""
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The folder the commands are typed in, as a school's IT person types them in the project folder."""
    (tmp_path / "repo").mkdir()
    return tmp_path / "repo"


def user_env(home: Path, **extra: str) -> dict[str, str]:
    env = clean_env(HOME=str(home), **extra)
    env.pop("XDG_DATA_HOME", None)
    return env


def data_folder(home: Path) -> Path:
    return home / ".local" / "share" / "mcp-asrama"


@pytest.fixture
def launch(tmp_path: Path, repo: Path, home: Path) -> Iterator[Any]:
    started: list[Started] = []

    def run(*args: str, mcp: int | None = None, **env: str) -> Started:
        port, n = free_port(), len(started)
        out, err = tmp_path / f"out-{n}.txt", tmp_path / f"err-{n}.txt"
        ports = ["--port", str(port)] + (["--mcp-port", str(mcp)] if mcp else [])
        with out.open("w") as stdout, err.open("w") as stderr:
            process = subprocess.Popen(
                [EXECUTABLE, *args, *ports], cwd=repo, env=user_env(home, **env), stdout=stdout, stderr=stderr
            )
        running = Started(process, port, out, err)
        started.append(running)
        for each in (port, mcp):
            if each:
                wait_until_up(each, process, err)
        return running

    yield run
    for running in started:
        stop(running.process)


def typed(line: str, repo: Path, home: Path) -> str:
    """Run a line of the banner as printed, in the project folder, in the user's environment."""
    done = subprocess.run(
        ["bash", "-c", line], cwd=repo, env=user_env(home), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"{line}\n{done.stderr[-2000:]}"
    assert "Traceback" not in done.stderr
    return done.stdout or ""


def banner_line(text: str, command: str) -> str:
    return next(line.strip() for line in text.splitlines() if f" {command} " in line)


def ask_block(block: str, repo: Path, home: Path) -> dict[str, Any]:
    """Start the server of a Claude Desktop block as the host would (its command, args and env) and call cari_anak."""
    server = json.loads(block)["mcpServers"]["asrama"]
    env = {**user_env(home), **server["env"]}
    command = [EXECUTABLE, "probe", "--compact", "--call", "cari_anak", '{"kelas": "7A"}', "--"]
    done = subprocess.run(
        [*command, server["command"], *server["args"]], cwd=repo, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    answers = [json.loads(line.removeprefix("<<< server ")) for line in done.stdout.splitlines() if "<<<" in line]
    result = next(a["result"] for a in answers if a.get("id") == 5)  # the call, after discover and the lists
    assert not result.get("isError"), result  # e.g. "the data service refused our token (HTTP 401)"
    return dict(result["structuredContent"])


def messages(err: Path) -> list[str]:
    """The start-up lines of stderr (notes as they are, log lines as logger: message), access lines left out."""
    said = []
    for line in err.read_text().splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            if record["logger"] != "mcp_asrama.access":
                said.append(f"{record['logger']}: {record['message']}")
        else:
            said.append(line)
    return said


@pytest.mark.e2e
def test_a_demo_on_a_database_in_the_project_folder_keeps_its_token_in_the_data_folder_and_its_banner_works(
    launch: Any, repo: Path, home: Path
) -> None:
    mcp = free_port()
    demo = launch("demo", "--db", "sekolah.db", "--buat", mcp=mcp)
    db = (repo / "sekolah.db").resolve()
    token_file = data_folder(home) / "tokens" / config.token_file(f"sqlite:///{db}").name
    assert token_file.name.startswith("sekolah-")
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700
    assert {p.name for p in repo.iterdir()} <= {"sekolah.db", "sekolah.db-wal", "sekolah.db-shm"}

    banner = demo.out.read_text()
    assert f"database     : {db}" in banner
    assert "writes       : off" in banner and "ASRAMA_WRITES=on" in banner
    claude = banner_line(banner, "claude-config")
    assert f"--db {db}" in claude
    block = typed(claude, repo, home)
    assert json.loads(block)["mcpServers"]["asrama"]["env"]["ASRAMA_API_TOKEN_FILE"] == str(token_file)
    assert token_file.read_text().strip() not in block  # the block names the file, not the secret
    assert ask_block(block, repo, home)["total"] > 0  # not 401: the server read the token of this database

    probe = banner_line(banner, "probe")
    assert '"isError":true' not in typed(probe, repo, home).replace(" ", "")
    shutil.copy(SISWA, repo / "siswa.csv")
    assert str(db) in typed(banner_line(banner, "import anak"), repo, home)  # into the database served, not the default
    assert not (data_folder(home) / "asrama.db").exists()

    said = messages(demo.err)
    assert said.count(f"uvicorn.error: Started server process [{demo.process.pid}]") == 1
    assert len(said) == len(set(said)), said  # no start-up line twice (two servers, two session managers)
    stop(demo.process)
    assert {p.name for p in repo.iterdir()} <= {"sekolah.db", "sekolah.db-wal", "sekolah.db-shm", "siswa.csv"}


@pytest.mark.e2e
def test_make_run_writes_nothing_in_the_project_folder_and_says_when_writes_are_on(
    launch: Any, repo: Path, home: Path
) -> None:
    demo = launch("demo", mcp=free_port(), ASRAMA_WRITES="on")
    data = data_folder(home)
    assert {p.name for p in data.iterdir()} >= {"asrama.db", "service-token"}
    banner = demo.out.read_text()
    assert "writes       : on (ASRAMA_WRITES=on)" in banner
    claude = banner_line(banner, "claude-config")
    assert claude.endswith("claude-config --api-url " + demo.url + " --writes")
    assert "--db" not in banner_line(banner, "import anak")
    env = json.loads(typed(claude, repo, home))["mcpServers"]["asrama"]["env"]
    assert env["ASRAMA_WRITES"] == "on" and "ASRAMA_API_TOKEN_FILE" not in env
    stop(demo.process)
    assert list(repo.iterdir()) == []


@pytest.mark.e2e
def test_each_database_has_its_own_token_and_one_kept_beside_it_before_is_moved_once(
    launch: Any, repo: Path, home: Path
) -> None:
    (repo / "lama").mkdir()
    (repo / "lama" / "service-token").write_text("token-lama-yang-masih-dipakai\n")
    old = launch("service", "--db", "lama/asrama.db", "--buat")
    new = launch("service", "--db", "baru.db", "--buat")
    lama = (repo / "lama" / "asrama.db").resolve()
    moved = config.token_file(f"sqlite:///{lama}").name
    assert f"service token: moved from {repo.resolve() / 'lama' / 'service-token'} to " in old.err.read_text()
    assert not (repo / "lama" / "service-token").exists()
    tokens = data_folder(home) / "tokens"
    assert (tokens / moved).read_text() == "token-lama-yang-masih-dipakai\n"
    assert len(list(tokens.iterdir())) == 2
    assert httpx2.get(f"{old.url}/kamar", headers={"Authorization": "Bearer token-lama-yang-masih-dipakai"}).is_success
    assert (
        httpx2.get(f"{new.url}/kamar", headers={"Authorization": "Bearer token-lama-yang-masih-dipakai"}).status_code
        == 401
    )

    note = next(line for line in new.err.read_text().splitlines() if line.startswith("service token: kept in"))
    claude = re.search(r"Claude Desktop: (.*)\)$", note)
    assert claude is not None
    env = json.loads(typed(claude.group(1), repo, home))["mcpServers"]["asrama"]["env"]
    token = Path(env["ASRAMA_API_TOKEN_FILE"]).read_text().strip()
    assert httpx2.get(f"{new.url}/kamar", headers={"Authorization": f"Bearer {token}"}).is_success
    assert {p.name for p in repo.iterdir()} <= {"lama", "baru.db", "baru.db-wal", "baru.db-shm"}


def test_claude_config_db_names_the_token_file_of_that_database(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["claude-config", "--api-url", "http://127.0.0.1:8000", "--db", "sekolah.db"]) == 0
    out, err = capsys.readouterr()
    expected = config.token_file(f"sqlite:///{Path('sekolah.db').resolve()}")
    assert json.loads(out)["mcpServers"]["asrama"]["env"]["ASRAMA_API_TOKEN_FILE"] == str(expected)
    assert f"no token in {expected} yet" in err
    assert cli.main(["claude-config", "--db", str(config.data_dir() / "asrama.db")]) == 0  # the default database's
    assert "ASRAMA_API_TOKEN_FILE" not in json.loads(capsys.readouterr().out)["mcpServers"]["asrama"]["env"]


@pytest.mark.parametrize(
    "flags", [["--db", "a.db", "--with-token"], ["--remote", "https://asrama.example/mcp", "--db", "a.db"]]
)
def test_claude_config_db_refuses_flags_that_give_the_token_otherwise(
    flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["claude-config", *flags]) == 2
    assert "--db" in capsys.readouterr().err


def test_the_mcp_server_reads_its_token_from_asrama_api_token_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "token").write_text("dari-berkas\n")
    monkeypatch.setenv("ASRAMA_API_TOKEN_FILE", str(tmp_path / "token"))
    assert ServerSettings().token == "dari-berkas"
    monkeypatch.setenv("ASRAMA_API_TOKEN", "dari-lingkungan")
    assert ServerSettings().token == "dari-lingkungan"
    monkeypatch.setenv("ASRAMA_API_TOKEN_FILE", str(tmp_path / "none"))
    monkeypatch.delenv("ASRAMA_API_TOKEN")
    assert ServerSettings().token is None


def test_a_start_up_line_of_two_servers_in_one_process_is_said_once(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("INFO")
    for _ in range(2):
        logging.getLogger("uvicorn.error").info("Started server process [%d]", os.getpid())
        logging.getLogger("mcp.server.streamable_http_manager").info("StreamableHTTP session manager started")
    logging.getLogger("uvicorn.error").warning("Invalid HTTP request received.")
    logging.getLogger("uvicorn.error").warning("Invalid HTTP request received.")
    lines = capsys.readouterr().err.splitlines()
    assert [json.loads(line)["message"] for line in lines] == [
        f"Started server process [{os.getpid()}]",
        "StreamableHTTP session manager started",
        "Invalid HTTP request received.",
        "Invalid HTTP request received.",  # a warning is every time
    ]


@pytest.mark.parametrize(
    "name",
    [
        "service-token",
        "service-token.bak",
        "keys/audit.key",
        "audit.jsonl",
        "audit-1.jsonl",
        "server.log",
        "sekolah.db",
        "sekolah.db-wal",
        "sekolah.db.sebelum-restore-20261203T170000Z",
        "backups/asrama.db",
    ],
)
def test_what_a_user_may_still_keep_in_the_project_folder_is_ignored_by_git(name: str) -> None:
    done = subprocess.run(["git", "check-ignore", "--no-index", "-q", name], cwd=ROOT, timeout=30, check=False)
    assert done.returncode == 0, f"{name} is not git-ignored"
