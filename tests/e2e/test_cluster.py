"""The replica topology of scripts/cluster.sh (PostgreSQL, Redis, 2 data service + 2 MCP replicas, nginx running
deploy/nginx/asrama.conf): tools answer through nginx, a replica killed with SIGKILL is stepped around, a listener
on one MCP replica hears a roll call made through the other, and a one-minute soak with faults keeps its
invariants and leaves no process behind. Skipped where nginx, PostgreSQL or Redis are not installed (CI installs
them: .ci/run)."""

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.shared.subscriptions import ResourceUpdated
from mcp_types import ElicitResult

from tests.auth.support import MODERN
from tests.e2e.conftest import EXECUTABLE, clean_env

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = ROOT / "scripts" / "cluster.sh"
SOAK = ROOT / "bench" / "soak.py"


def missing() -> str | None:
    """What the topology needs and this machine lacks, if anything."""
    if not shutil.which("nginx"):
        return "nginx (bash scripts/nginx-for-tests.sh)"
    if not list(Path("/usr/lib/postgresql").glob("*/bin/initdb")):
        return "PostgreSQL (bash scripts/postgres-for-tests.sh)"
    if not shutil.which("redis-server"):
        return "redis-server (bash scripts/redis-for-tests.sh)"
    return None


needs_topology = pytest.mark.skipif(missing() is not None, reason=f"not installed: {missing()}")


@dataclass
class Topology:
    state: Path
    values: dict[str, str]

    def run(self, *args: str) -> dict[str, str]:
        env = clean_env(ASRAMA_CLUSTER_DIR=str(self.state), MCP_ASRAMA=EXECUTABLE)
        done = subprocess.run([str(CLUSTER), *args], env=env, capture_output=True, text=True, timeout=180, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        return dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)

    def replica_url(self, n: int) -> str:
        ports = dict(line.split("=", 1) for line in (self.state / "ports.env").read_text().splitlines())
        return f"http://127.0.0.1:{ports[f'MCP_{n}_PORT']}/mcp"


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, ended but not yet reaped by its adoptive parent, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


@pytest.fixture(scope="module")
def topology(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Topology]:
    cluster = Topology(tmp_path_factory.mktemp("cluster"), {})
    try:
        cluster.values = cluster.run("up")
        yield cluster
    finally:
        cluster.run("down")


async def accept(ctx: object, params: object) -> ElicitResult:
    return ElicitResult(action="accept", content={"setuju": True})


@needs_topology
@pytest.mark.anyio
async def test_tools_answer_through_nginx_from_the_demo_school(topology: Topology) -> None:
    async with Client(topology.values["MCP_URL"], mode=MODERN, cache=None) as client:
        for _ in range(4):  # nginx sends them to both replicas in turn
            kamar = await client.call_tool("daftar_kamar", {})
            assert not kamar.is_error
            assert kamar.structured_content is not None and kamar.structured_content["jumlah"] == 20


@needs_topology
@pytest.mark.anyio
@pytest.mark.parametrize("name", ["mcp-1", "service-1"])
async def test_calls_go_on_through_the_other_replica_while_one_is_killed(topology: Topology, name: str) -> None:
    killed = int(topology.values[f"PID_{name.upper().replace('-', '_')}"])
    topology.run("kill", name)
    assert not alive(killed)
    try:
        async with Client(topology.values["MCP_URL"], mode=MODERN, cache=None) as client:
            for _ in range(8):
                found = await client.call_tool("cari_anak", {"kelas": "7A", "limit": 5})
                assert not found.is_error, found.content
                assert found.structured_content is not None and found.structured_content["total"] > 0
    finally:
        started = topology.run("start", name)
        topology.values |= started


@needs_topology
@pytest.mark.anyio
async def test_a_listener_on_one_replica_hears_a_roll_call_made_through_the_other(topology: Topology) -> None:
    headers = {"Authorization": f"Bearer {topology.values['SERVICE_TOKEN']}"}
    async with httpx2.AsyncClient(base_url=topology.values["SERVICE_URL"], headers=headers, timeout=10) as http:
        student = (await http.get("/anak", params={"limit": 1})).json()["data"][0]["id"]
    uri = "asrama://absensi/2001-02-03"
    async with (
        Client(topology.replica_url(1), mode=MODERN, cache=None) as listening,
        listening.listen(resource_subscriptions=[uri]) as subscription,
        Client(topology.replica_url(2), mode=MODERN, cache=None, elicitation_callback=accept) as writing,
    ):
        entri = [{"id_anak": student, "status": "sakit", "keterangan": "uji pendengar"}]
        written = await writing.call_tool("catat_absensi", {"tanggal": "2001-02-03", "entri": entri})
        assert written.structured_content is not None and written.structured_content["hasil"] == "ditulis"
        with anyio.fail_after(10):
            async for event in subscription:
                if isinstance(event, ResourceUpdated) and event.uri == uri:
                    break


@needs_topology
def test_a_minute_of_soak_with_faults_keeps_every_invariant_and_leaves_no_process(tmp_path: Path) -> None:
    report = tmp_path / "soak.json"
    env = clean_env(MCP_ASRAMA=EXECUTABLE)
    command = [
        sys.executable,
        str(SOAK),
        "--duration",
        "60",
        "--state",
        str(tmp_path / "cluster"),
        "--json",
        str(report),
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert report.exists(), done.stderr[-3000:]
    result = json.loads(report.read_text())
    assert done.returncode == 0, done.stdout
    assert [k for k, holds in result["invariants"].items() if holds is False] == [], result["violations"]
    assert len(result["faults"]) == 3
    assert result["writes"] and result["calls"] > 100
    assert [pid for pid in result["pids"] if alive(pid)] == []
