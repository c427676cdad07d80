"""Your own data into the running demo: `import` writes to the database the demo serves, as real processes."""

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.e2e.conftest import EXECUTABLE, clean_env, free_port, start, stop
from tests.http_rpc import reply

pytestmark = pytest.mark.e2e

PROJECT = Path(__file__).resolve().parents[2]  # where the documented commands are typed (examples/ is here)
DEMO_START = 90.0  # seconds: the first start writes the demo school (300 students, 60 days) on 2 shared cores


class Demo:
    """A running `mcp-asrama demo`: its data folder, MCP endpoint and start-up log."""

    def __init__(self, data_home: Path, mcp_url: str, log: Path) -> None:
        self.data_home, self.mcp_url, self.log = data_home, mcp_url, log

    def cari_anak(self, **arguments: Any) -> dict[str, Any]:
        """The structured result of `cari_anak`, as any MCP host would call it (raw JSON-RPC over HTTP)."""
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "cari_anak", "arguments": arguments},
        }
        headers = {"Accept": "application/json, text/event-stream"}
        result = reply(httpx2.post(self.mcp_url, json=call, headers=headers, timeout=30))["result"]
        assert result["isError"] is False, result
        return dict(result["structuredContent"])


def _wait_for(ports: list[int], process: subprocess.Popen[Any], log: Path) -> None:
    deadline = time.monotonic() + DEMO_START
    pending = list(ports)
    while pending:
        if process.poll() is not None:
            pytest.fail(f"demo exited with {process.returncode}:\n{log.read_text()}")
        if time.monotonic() > deadline:
            pytest.fail(f"demo not listening on {pending} after {DEMO_START} s:\n{log.read_text()}")
        try:
            httpx2.get(f"http://127.0.0.1:{pending[0]}/healthz", timeout=1)
            pending.pop(0)
        except httpx2.TransportError:
            time.sleep(0.2)


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    """`mcp-asrama demo` on free ports, with no --db and its data folder in tmp (XDG_DATA_HOME)."""
    data_home = tmp_path / "data"
    port, mcp_port = free_port(), free_port()
    log = tmp_path / "demo.log"
    env = clean_env(XDG_DATA_HOME=str(data_home))
    process = start([EXECUTABLE, "demo", "--port", str(port), "--mcp-port", str(mcp_port)], env, log)
    try:
        _wait_for([port, mcp_port], process, log)
        yield Demo(data_home, f"http://127.0.0.1:{mcp_port}/mcp", log)
    finally:
        stop(process)


def mcp_asrama(*args: str, data_home: Path, cwd: Path = PROJECT) -> subprocess.CompletedProcess[str]:
    """One `mcp-asrama` command run as the school's IT person types it."""
    env = clean_env(XDG_DATA_HOME=str(data_home))
    return subprocess.run(
        [EXECUTABLE, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def test_students_imported_while_the_demo_runs_are_found_by_its_cari_anak_at_once(demo: Demo) -> None:
    demo_school = demo.cari_anak()["total"]
    assert demo.cari_anak(nama="Salsabila Azzahra")["total"] == 0
    done = mcp_asrama("import", "anak", "examples/siswa.csv", data_home=demo.data_home)
    assert done.returncode == 0, done.stderr
    database = demo.data_home / "mcp-asrama" / "asrama.db"
    assert done.stdout.splitlines() == [f"examples/siswa.csv: 6 added, 0 updated (anak) in {database}"]
    assert f"database: {database}\n" in demo.log.read_text(), "the demo names the database it serves"
    found = demo.cari_anak(nama="Salsabila Azzahra")
    assert [(a["id"], a["kamar"]) for a in found["data"]] == [("S24004", "Khadijah 1")]
    assert demo.cari_anak()["total"] == demo_school + 6


def test_import_takes_a_bare_file_path_for_db_and_refuses_a_bad_url_in_one_line(tmp_path: Path) -> None:
    siswa = str(PROJECT / "examples" / "siswa.csv")
    done = mcp_asrama(
        "import", "anak", siswa, "--buat", "--db", "sekolah.db", "--buat-kamar", data_home=tmp_path, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == f"{siswa}: 6 added, 0 updated (anak) in {tmp_path / 'sekolah.db'}"
    assert (tmp_path / "sekolah.db").is_file()

    bad = mcp_asrama(
        "service", "--buat", "--db", "postgres://asrama:rahasia@db/asrama", data_home=tmp_path, cwd=tmp_path
    )
    assert bad.returncode == 2
    assert bad.stderr.splitlines() == [
        "configuration error: db_url: 'postgres' is not a database we support (SQLite or PostgreSQL): give a file "
        "path (SQLite) or a URL such as postgresql+psycopg://USER:PASSWORD@HOST/DBNAME"
    ]
