"""The deploy page's numbered steps, typed in order as printed: every block fenced ```sh deploy in docs/deploying.md
runs in its own `bash -euo pipefail` (so no step may lean on a shell variable of another), as root, in a copy of
this checkout's files, with the program really installed from it into a fresh venv of Debian's /usr/bin/python3.

What a test machine cannot be, the test stands in for, by these rules and no others:
- `/opt/mcp-asrama`, `/etc/mcp-asrama` and `/var/lib/mcp-asrama` are under a temp folder (in the page's lines and in
  the checkout's deploy/ files alike);
- lines run by apt, useradd, systemctl, chown, nginx or certbot, and lines naming /etc/nginx/, /etc/systemd/ or
  YOUR.HOST.NAME (TLS and the school's host name) are not run; `editor` changes nothing;
- PostgreSQL is a cluster of the test's own (scripts/postgres-for-tests.sh, reached through PGHOST/PGPORT) and Redis a
  redis-server of its own: 127.0.0.1:5432 and :6379 (`redis-cli`'s default) become their ports;
- `systemctl enable --now mcp-asrama-service@N …` starts each unit's ExecStart with its Environment= lines and its
  EnvironmentFile (as systemd would, but as root), on a free port for 810N / 820N; there is no nginx, so
  127.0.0.1:8000 is data service replica 1;
- the school's kamar.csv and siswa.csv are examples/kamar.csv and examples/siswa.csv.
"""

import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from tests.e2e.conftest import EXECUTABLE, free_port, stop

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "deploying.md"
STEP = re.compile(r"^#### (\d+)\. (.+?)\n(.*?)(?=^#### |\Z)", re.MULTILINE | re.DOTALL)
BLOCK = re.compile(r"^```sh deploy\n(.*?)^```", re.MULTILINE | re.DOTALL)
NOT_RUN_COMMANDS = {"apt-get", "useradd", "systemctl", "chown", "nginx", "certbot"}
NOT_RUN_NAMES = ("/etc/nginx/", "/etc/systemd/", "YOUR.HOST.NAME")
UNIT = re.compile(r"mcp-asrama-(service|mcp)@(\d)")
PLACES = re.compile(r"(?<![\w./~-])/(?:opt|etc|var/lib)/mcp-asrama\b")
PG_BIN = sorted(Path("/usr/lib/postgresql").glob("*/bin"))


def steps(text: str) -> list[tuple[int, str, str]]:
    """(number, title, commands) of every numbered step with a deploy block, in the page's order."""
    found = []
    for number, title, body in STEP.findall(text):
        blocks = BLOCK.findall(body)
        if blocks:
            found.append((int(number), title, "".join(blocks)))
    return found


def commands(block: str) -> list[str]:
    """The block's commands: continuation lines joined; a `( … )` group spanning lines stays one command."""
    lines: list[str] = []
    for line in block.splitlines():
        if lines and (lines[-1].endswith("\\") or lines[-1].count("(") > lines[-1].count(")")):
            lines[-1] += "\n" + line
        else:
            lines.append(line)
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")]


def not_run(command: str) -> bool:
    words = command.split()
    return words[0] in NOT_RUN_COMMANDS or any(name in command for name in NOT_RUN_NAMES)


def test_the_steps_are_numbered_in_order_and_none_is_also_a_readme_line() -> None:
    text = PAGE.read_text()
    found = steps(text)
    assert [number for number, _, _ in found] == list(range(1, 11))
    run = [c for _, _, block in found for c in commands(block) if not not_run(c)]
    assert any(c.startswith("/usr/bin/python3 -c") for c in run) and "/usr/bin/python3 -m venv /opt/mcp-asrama" in run
    imports = "\n".join(run)
    assert imports.index("import kamar kamar.csv") < imports.index("import anak siswa.csv")
    assert all(not re.match(r"mcp-asrama\b", c) for c in run), "the program is not on PATH: name it in full"
    assert "```sh runnable" not in "".join(body for _, _, body in STEP.findall(text)), "a step is also a README line"


def missing() -> str | None:
    if os.geteuid() != 0:
        return "root (the steps run as root)"
    for program in ("runuser", "redis-server", "redis-cli", "openssl", "curl", "/usr/bin/python3"):
        if shutil.which(program) is None:
            return program
    if not PG_BIN:
        return "PostgreSQL (bash scripts/postgres-for-tests.sh)"
    return None


@dataclass
class Machine:
    """The temp root the steps install into, the services standing in for Debian's, and their ports."""

    folder: Path
    ports: dict[int, int]
    env: dict[str, str]
    processes: list[subprocess.Popen[Any]] = field(default_factory=list)

    @property
    def root(self) -> Path:
        return self.folder / "root"

    @property
    def checkout(self) -> Path:
        return self.folder / "checkout"

    def here(self, text: str) -> str:
        """`text` with the rules' paths and ports."""
        text = PLACES.sub(lambda m: f"{self.root}{m.group(0)}", text)
        text = re.sub(r"127\.0\.0\.1:(\d+)", lambda m: f"127.0.0.1:{self.ports.get(int(m[1]), m[1])}", text)
        return re.sub(r"\bredis-cli ", f"redis-cli -p {self.ports[6379]} ", text)

    def run(self, script: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=self.checkout,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=400,
            check=False,
        )

    def stand_in(self, command: str) -> None:
        """`systemctl enable --now` of our units: each one's ExecStart, as its unit file says."""
        for kind, instance in UNIT.findall(command):
            unit = (self.checkout / "deploy" / "systemd" / f"mcp-asrama-{kind}@.service").read_text()
            self.start_unit(unit.replace("%i", instance), kind, f"{kind}-{instance}")

    def start_unit(self, unit: str, kind: str, name: str) -> None:
        settings = dict(line.split("=", 1) for line in unit.splitlines() if "=" in line and not line.startswith("#"))
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
        env |= dict(
            line.split("=", 1)[1].split("=", 1) for line in unit.splitlines() if line.startswith("Environment=")
        )
        env |= read_env(Path(settings["EnvironmentFile"]))
        port_name = "ASRAMA_SERVICE_PORT" if kind == "service" else "ASRAMA_MCP_PORT"
        env[port_name] = str(self.ports[int(env[port_name])])
        (self.root / "var/lib/mcp-asrama").mkdir(mode=0o700, parents=True, exist_ok=True)  # StateDirectory=
        log = self.folder / f"{name}.log"
        with log.open("w") as out:
            process = subprocess.Popen(shlex.split(settings["ExecStart"]), env=env, stdout=out, stderr=out)
        self.processes.append(process)
        wait_for(f"http://127.0.0.1:{env[port_name]}/{'healthz' if kind == 'service' else 'readyz'}", process, log)


def read_env(path: Path) -> dict[str, str]:
    """A systemd EnvironmentFile: NAME=value lines."""
    lines = [line for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
    return dict(line.split("=", 1) for line in lines)


def wait_for(url: str, process: subprocess.Popen[Any], log: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, f"{url}: exited {process.returncode}: {log.read_text()[-3000:]}"
        try:
            if httpx.get(url, timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{url} not up after {timeout}s: {log.read_text()[-3000:]}")


def copy_checkout(to: Path) -> None:
    """This checkout's files as they are now (what `git clone` would give, with the changes not yet committed)."""
    listing = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    listed = subprocess.run(listing, cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (to / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, to / name)


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Machine]:
    if (why := missing()) is not None:
        pytest.skip(f"not on this machine: {why}")
    folder = tmp_path_factory.mktemp("deploy")
    pg_port, redis_port = free_port(), free_port()
    ports = {
        5432: pg_port,
        6379: redis_port,
        8101: free_port(),
        8102: free_port(),
        8201: free_port(),
        8202: free_port(),
    }
    ports[8000] = ports[8101]
    shims = folder / "shims"
    shims.mkdir()
    (shims / "editor").write_text("#!/bin/sh\nexit 0\n")
    (shims / "editor").chmod(0o755)
    scripts = Path(EXECUTABLE).parent
    path = [str(shims), *(p for p in os.environ["PATH"].split(os.pathsep) if Path(p) != scripts)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASRAMA_") and k != "VIRTUAL_ENV"}
    env |= {"PATH": os.pathsep.join(path), "PGHOST": "127.0.0.1", "PGPORT": str(pg_port), "PGUSER": "postgres"}
    here = Machine(folder, ports, env)
    copy_checkout(here.checkout)
    for name in ["deploy/asrama.env.example", *(f"deploy/systemd/mcp-asrama-{k}@.service" for k in ("service", "mcp"))]:
        (here.checkout / name).write_text(here.here((here.checkout / name).read_text()))
    for kind, school in (("kamar", "kamar"), ("siswa", "siswa")):
        shutil.copy(ROOT / "examples" / f"{kind}.csv", here.checkout / f"{school}.csv")
    pg_dir = Path(tempfile.mkdtemp(prefix="mcp-asrama-deploy-pg-"))  # the postgres user must reach it: not tmp_path
    pg_env = env | {"ASRAMA_TEST_PG_PORT": str(pg_port), "ASRAMA_TEST_PG_DIR": str(pg_dir)}
    redis_log = (folder / "redis.log").open("w")
    redis = subprocess.Popen(
        ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--dir", str(folder)],
        stdout=redis_log,
        stderr=redis_log,
    )
    here.processes.append(redis)
    try:
        subprocess.run(["bash", str(ROOT / "scripts" / "postgres-for-tests.sh")], env=pg_env, check=True, timeout=120)
        yield here
    finally:
        for process in reversed(here.processes):
            stop(process)
        redis_log.close()
        pg_ctl = [str(PG_BIN[-1] / "pg_ctl"), "-D", str(pg_dir), "-m", "immediate", "stop"]
        subprocess.run(["runuser", "-u", "postgres", "--", *pg_ctl], capture_output=True, timeout=60, check=False)
        shutil.rmtree(pg_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def typed(machine: Machine) -> dict[int, subprocess.CompletedProcess[str]]:
    """Every step run in order; each one's result by its number (a failing step fails at once, naming itself)."""
    results = {}
    for number, title, block in steps(PAGE.read_text()):
        kept = []
        for command in commands(block):
            if not_run(command):
                if command.startswith("systemctl enable --now"):
                    machine.stand_in(command)
                continue
            kept.append(machine.here(command))
        done = machine.run("\n".join(kept))
        assert done.returncode == 0, f"step {number}. {title}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        assert "Traceback" not in done.stderr, f"step {number}. {title}: {done.stderr[-3000:]}"
        results[number] = done
    return results


def test_the_program_is_installed_from_the_checkout(machine: Machine, typed: dict[int, Any]) -> None:
    assert typed[3].stdout.strip().splitlines()[-1].startswith("mcp-asrama ")
    venv = (machine.root / "opt/mcp-asrama/pyvenv.cfg").read_text()
    assert "command = /usr/bin/python3 -m venv" in venv and "include-system-site-packages = false" in venv
    assert (machine.root / "opt/mcp-asrama/deploy/nginx/asrama.conf").is_file()


def test_the_env_file_holds_made_secrets_and_only_its_owner_reads_it(machine: Machine, typed: dict[int, Any]) -> None:
    env_file = machine.root / "etc/mcp-asrama/asrama.env"
    settings = read_env(env_file)
    assert "GANTI" not in env_file.read_text()
    assert settings["ASRAMA_SERVICE_TOKEN"] == settings["ASRAMA_API_TOKEN"] and len(settings["ASRAMA_API_TOKEN"]) == 64
    assert env_file.stat().st_mode & 0o777 == 0o600
    assert (machine.root / "etc/mcp-asrama/audit.key").stat().st_mode & 0o777 == 0o600
    assert typed[6].stdout.strip() == "PONG"


def test_rooms_then_students_are_imported(typed: dict[int, Any]) -> None:
    rooms = len((ROOT / "examples/kamar.csv").read_text().splitlines()) - 1
    students = len((ROOT / "examples/siswa.csv").read_text().splitlines()) - 1
    assert f"kamar.csv: {rooms} added, 0 updated (kamar)" in typed[7].stdout
    assert f"siswa.csv: {students} added, 0 updated (anak)" in typed[7].stdout


def test_the_check_lists_the_rooms_and_audits_it(machine: Machine, typed: dict[int, Any]) -> None:
    out = typed[10].stdout
    assert out.count('{"status":"ok",') == 3 and out.count('{"status":"ready"}') == 2, out[:2000]
    assert '"Al-Fatih 1' in out and "probe:" not in typed[10].stderr
    program = machine.root / "opt/mcp-asrama/bin/mcp-asrama"
    key = machine.root / "etc/mcp-asrama/audit.key"
    verify = [str(program), "audit", "verify", str(machine.root / "var/lib/mcp-asrama"), "--key", str(key)]
    done = subprocess.run(verify, env=machine.env, capture_output=True, text=True, timeout=60, check=False)
    assert (machine.root / "var/lib/mcp-asrama/audit-check.jsonl").stat().st_size > 0
    assert done.returncode == 0 and done.stdout.startswith("intact: 1 entry sealed with the key"), done.stdout


def test_a_check_that_fails_says_the_servers_own_reason(machine: Machine, typed: dict[int, Any]) -> None:
    """The check without its audit file (the page's old line): the probe prints the server's one-line reason."""
    probe = next(c for c in commands(steps(PAGE.read_text())[-1][2]) if "probe" in c)
    assert "export ASRAMA_AUDIT_LOG=" in probe
    without = "\n".join(line for line in probe.splitlines() if "ASRAMA_AUDIT_LOG" not in line)
    done = machine.run(machine.here(without))
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "probe: the server stopped: configuration error: ASRAMA_AUDIT_KEY seals the audit log: set ASRAMA_AUDIT_LOG too"
    )
