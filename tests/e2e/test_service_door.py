"""The data service as a real process: never without a token (one is generated, kept 0600 in the data folder),
the MCP server's Host/Origin door, private database files whatever the umask, and the demo still zero set-up."""

import stat
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from mcp_asrama import config
from tests.conftest import TOKEN, TUTORIAL_ABSENSI, TUTORIAL_ANAK, TUTORIAL_KAMAR, insert_rows
from tests.e2e.conftest import EXECUTABLE, clean_env, free_port, stop, wait_until_up

pytestmark = pytest.mark.e2e


class Running:
    def __init__(self, process: subprocess.Popen[Any], port: int, log: Path) -> None:
        self.process, self.port, self.log = process, port, log
        self.url = f"http://127.0.0.1:{port}"


@pytest.fixture
def launch(tmp_path: Path) -> Iterator[Callable[..., Running]]:
    """Start `mcp-asrama ARGS --port <free>` with the data folder in tmp (and an optional umask)."""
    started: list[Running] = []

    def run(*args: str, umask: int = 0o022, **env: str) -> Running:
        port = free_port()
        log = tmp_path / f"process-{len(started)}.log"
        with log.open("w") as stderr:
            process = subprocess.Popen(
                [EXECUTABLE, *args, "--port", str(port)],
                env=clean_env(XDG_DATA_HOME=str(tmp_path / "data"), **env),
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                umask=umask,
            )
        running = Running(process, port, log)
        started.append(running)
        wait_until_up(port, process, log)
        return running

    yield run
    for running in started:
        stop(running.process)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_service_without_a_configured_token_generates_one_and_requires_it(
    tmp_path: Path, launch: Callable[..., Running]
) -> None:
    db = tmp_path / "sekolah" / "asrama.db"
    db.parent.mkdir()  # --buat creates the file, never a folder
    service = launch("service", "--buat", "--db", f"sqlite:///{db}", umask=0)
    token_file = config.token_file(f"sqlite:///{db}")  # the data folder in tmp, as the process's
    assert token_file.is_relative_to(tmp_path / "data" / "mcp-asrama" / "tokens")
    assert not (db.parent / "service-token").exists()
    token = token_file.read_text().strip()
    assert len(token) >= 32
    assert _mode(token_file) == 0o600 and _mode(token_file.parent) == 0o700
    log = service.log.read_text()
    assert str(token_file) in log and token not in log
    assert httpx2.get(f"{service.url}/anak", timeout=10).status_code == 401
    assert httpx2.get(f"{service.url}/anak/A001", timeout=10).status_code == 401
    assert httpx2.put(f"{service.url}/absensi/2026-10-06/A001", json={"status": "alpa"}, timeout=10).status_code == 401
    for path in ("/docs", "/openapi.json"):
        assert httpx2.get(f"{service.url}{path}", timeout=10).status_code == 401
    authorised = httpx2.get(f"{service.url}/anak", headers={"Authorization": f"Bearer {token}"}, timeout=10)
    assert authorised.json() == {"total": 0, "data": []}
    stop(service.process)

    again = launch("service", "--buat", "--db", f"sqlite:///{db}")
    assert token_file.read_text().strip() == token
    assert httpx2.get(f"{again.url}/kamar", headers={"Authorization": f"Bearer {token}"}, timeout=10).status_code == 200


@pytest.fixture
def door(tmp_path: Path, launch: Callable[..., Running]) -> Running:
    db_url = f"sqlite:///{tmp_path / 'asrama.db'}"
    insert_rows(db_url, kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK, absensi=TUTORIAL_ABSENSI)
    return launch(
        "service",
        "--buat",
        "--db",
        db_url,
        ASRAMA_SERVICE_TOKEN=TOKEN,
        ASRAMA_SERVICE_ALLOWED_HOSTS="data.sekolah.example",
        ASRAMA_SERVICE_ALLOWED_ORIGINS="https://tata-usaha.sekolah.example",
    )


def _get(service: Running, path: str, **headers: str) -> httpx2.Response:
    return httpx2.get(f"{service.url}{path}", headers={"Authorization": f"Bearer {TOKEN}", **headers}, timeout=10)


@pytest.mark.parametrize("host", ["rebind.evil.example:{port}", "rebind.evil.example", "127.0.0.1.evil.example", ""])
def test_a_foreign_host_gets_421_and_no_data(door: Running, host: str) -> None:
    refused = _get(door, "/anak/A001", Host=host.format(port=door.port))
    assert refused.status_code == 421
    assert "3171" not in refused.text and "Ahmad" not in refused.text


@pytest.mark.parametrize(
    "host", ["127.0.0.1:{port}", "localhost:{port}", "data.sekolah.example", "DATA.sekolah.example:443"]
)
def test_loopback_and_configured_hosts_are_served(door: Running, host: str) -> None:
    assert _get(door, "/anak/A001", Host=host.format(port=door.port)).json()["nama"] == "Ahmad Fauzi"


@pytest.mark.parametrize("origin", ["http://rebind.evil.example:8000", "http://127.0.0.1:8000", "null"])
def test_a_browser_page_of_another_origin_is_refused(door: Running, origin: str) -> None:
    read = _get(door, "/anak", Origin=origin)
    assert read.status_code == 403
    write = httpx2.put(
        f"{door.url}/absensi/2026-10-06/A001",
        json={"status": "alpa"},
        headers={"Authorization": f"Bearer {TOKEN}", "Origin": origin},
        timeout=10,
    )
    assert write.status_code == 403
    preflight = httpx2.request(
        "OPTIONS",
        f"{door.url}/anak",
        headers={"Origin": origin, "Access-Control-Request-Method": "GET"},
        timeout=10,
    )
    assert preflight.status_code == 403
    assert "access-control-allow-origin" not in preflight.headers
    day = _get(door, "/absensi?tanggal=2026-10-06").json()["data"]
    assert next(r for r in day if r["id_anak"] == "A001")["status"] == "hadir"


def test_a_listed_origin_may_call_but_is_not_sent_cors_headers(door: Running) -> None:
    allowed = _get(door, "/kamar", Origin="https://tata-usaha.sekolah.example")
    assert allowed.status_code == 200
    assert "access-control-allow-origin" not in allowed.headers


def test_healthz_answers_any_host_for_probes(door: Running) -> None:
    assert httpx2.get(f"{door.url}/healthz", headers={"Host": "10.0.0.5:8000"}, timeout=10).status_code == 200


def test_database_files_are_private_whatever_the_umask(tmp_path: Path, launch: Callable[..., Running]) -> None:
    data = tmp_path / "data" / "mcp-asrama"
    service = launch("service", "--demo", umask=0)
    db = data / "asrama.db"
    token = (data / "service-token").read_text().strip()
    assert _get_with(service, "/anak?limit=1", token).json()["total"] == 300
    assert _mode(data) == 0o700
    for path in (db, db.with_name("asrama.db-wal"), db.with_name("asrama.db-shm"), data / "service-token"):
        assert path.exists(), path
        assert _mode(path) == 0o600, path


def test_an_existing_database_open_to_others_is_warned_about(tmp_path: Path, launch: Callable[..., Running]) -> None:
    db = tmp_path / "lama.db"
    insert_rows(f"sqlite:///{db}", kamar=TUTORIAL_KAMAR, anak=[], absensi=[])
    db.chmod(0o644)
    service = launch("service", "--buat", "--db", f"sqlite:///{db}", ASRAMA_SERVICE_TOKEN=TOKEN)
    assert "can be read by other users" in service.log.read_text()
    assert _mode(db) == 0o644  # a warning, not a silent change of the school's own file


def _get_with(service: Running, path: str, token: str) -> httpx2.Response:
    return httpx2.get(f"{service.url}{path}", headers={"Authorization": f"Bearer {token}"}, timeout=10)


def test_a_stdio_server_on_the_same_machine_uses_the_generated_token(
    tmp_path: Path, launch: Callable[..., Running]
) -> None:
    service = launch("service", "--demo")
    env = clean_env(XDG_DATA_HOME=str(tmp_path / "data"), ASRAMA_API_URL=service.url)
    done = subprocess.run(
        [EXECUTABLE, "probe", "--compact", "--call", "cari_anak", '{"limit": 1}', "--", EXECUTABLE, "serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert '\\"total\\":300' in done.stdout or '"total":300' in done.stdout
