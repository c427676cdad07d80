"""The wheel `make dist` builds, installed with plain pip into a clean virtual environment by docs/first-day.md's
Linux tab (its wheel lines typed as printed, in a temporary HOME, in a folder holding only the wheel; `python3` is
this Python, the demo and `claude-config` on free ports), then run from there: the `claude-config` block, the probe
of the server that block starts against the installed demo, and `serve --transport http`'s health routes. Nothing
of the project is on that environment's path; pip takes the dependencies from the registry through its cache."""

import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.error import HTTPError
from urllib.request import urlopen

import pytest

from mcp_asrama import __version__
from tests.e2e.conftest import clean_env, free_port, start, stop
from tests.test_first_day_os import PAGE, WHEEL, tabs, wheel_block

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "src" / "mcp_asrama"
SDIST = f"mcp_asrama-{__version__}.tar.gz"
START_TIMEOUT = 90.0  # the first start compiles every module it imports (pip installs without bytecode, for speed)


def source_files() -> list[Path]:
    """The package's files in the source tree (bytecode left out)."""
    return [p for p in SOURCES.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"]


def fresh_dist() -> tuple[Path, Path] | None:
    """dist/'s wheel and sdist of this version, when both are newer than pyproject.toml and every source file and
    folder (a folder's time changes when a file in it is removed)."""
    wheel, sdist = ROOT / "dist" / WHEEL, ROOT / "dist" / SDIST
    try:
        built = min(wheel.stat().st_mtime, sdist.stat().st_mtime)
        sources = [ROOT / "pyproject.toml", SOURCES, *SOURCES.rglob("*")]
        newest = max(p.stat().st_mtime for p in sources if "__pycache__" not in p.parts)
    except FileNotFoundError:  # no dist/, or a file removed while we looked
        return None
    return (wheel, sdist) if built > newest else None


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The wheel and the sdist: dist/'s when fresh, else built as `make dist` builds them (into a temp folder)."""
    fresh = fresh_dist()
    if fresh is not None:
        return fresh
    out = tmp_path_factory.mktemp("dist")
    command = [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)]
    done = subprocess.run(command, cwd=out, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return out / WHEEL, out / SDIST


@dataclass
class Installation:
    home: Path  # HOME of every command run here
    cwd: Path  # the folder holding the wheel, where the lines are typed
    bin: Path  # the virtual environment's scripts
    env: dict[str, str]
    lines: list[list[str]]  # the tab's wheel lines: venv, pip install, demo, claude-config

    def words(self, line: list[str]) -> list[str]:
        """A line's words as the shell passes them: `~/` is HOME."""
        return [str(self.home / word[2:]) if word.startswith("~/") else word for word in line]

    def run(self, words: list[str], **extra: str) -> subprocess.CompletedProcess[str]:
        env = {**self.env, **extra}
        return subprocess.run(words, cwd=self.cwd, env=env, capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def installed(built: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Installation:
    """The Linux tab's first two wheel lines, run: a venv, and the wheel pip-installed into it."""
    folder = tmp_path_factory.mktemp("wheel")
    home, cwd = folder / "home", folder / "wheelhouse"
    home.mkdir()
    cwd.mkdir()
    shutil.copy(built[0], cwd)
    cache = os.environ.get("PIP_CACHE_DIR") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pip"
    )
    left_out = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "PIP_TARGET", "PIP_USER")
    env = {
        k: v for k, v in clean_env(HOME=str(home), PIP_CACHE_DIR=cache, PIP_COMPILE="0").items() if k not in left_out
    }
    lines = wheel_block(tabs(PAGE.read_text())["Linux"])
    create, install = lines[:2]
    assert create[0] == "python3"
    here = Installation(home, cwd, home / "mcp-asrama" / "bin", env, lines)
    for words in ([sys.executable, *create[1:]], install):
        done = here.run(here.words(words))
        assert done.returncode == 0, f"{words}: {done.stderr[-3000:]}"
    return here


def test_the_wheel_is_pure_python_with_its_data_and_no_tests(built: tuple[Path, Path]) -> None:
    wheel, sdist = built
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        meta = archive.read(f"mcp_asrama-{__version__}.dist-info/WHEEL").decode()
        entry_points = archive.read(f"mcp_asrama-{__version__}.dist-info/entry_points.txt").decode()
    assert "Tag: py3-none-any" in meta and "Root-Is-Purelib: true" in meta
    assert "mcp-asrama = mcp_asrama.cli:main" in entry_points
    assert {"mcp_asrama/data/surah.csv", "mcp_asrama/service/migrations/script.py.mako"} <= names
    assert {f"mcp_asrama/{p.relative_to(SOURCES).as_posix()}" for p in source_files()} <= names
    assert all(name.split("/")[0] in ("mcp_asrama", f"mcp_asrama-{__version__}.dist-info") for name in names)
    with tarfile.open(sdist) as archive:
        members = archive.getnames()
    assert f"mcp_asrama-{__version__}/src/mcp_asrama/data/surah.csv" in members
    assert not [name for name in members if "/tests/" in name]


def test_the_command_and_the_package_are_the_installed_ones(installed: Installation) -> None:
    done = installed.run([str(installed.bin / "mcp-asrama"), "--version"])
    assert done.stdout.strip() == f"mcp-asrama {__version__}", done.stderr
    code = "import mcp_asrama, sys; print(mcp_asrama.__file__); print(sys.path)"
    where, path = installed.run([str(installed.bin / "python"), "-c", code]).stdout.splitlines()
    assert Path(where).is_relative_to(installed.home / "mcp-asrama")
    assert str(ROOT) not in path


@pytest.fixture(scope="module")
def demo(installed: Installation) -> Iterator[str]:
    """The tab's demo line on free ports, its data in the temporary HOME; yields the data service's URL."""
    line = installed.words(installed.lines[2])
    assert line[1:] == ["demo"]
    port, mcp_port = free_port(), free_port()
    log = installed.home / "demo.log"
    process = start([*line, "--port", str(port), "--mcp-port", str(mcp_port)], installed.env, log)
    try:
        wait_for(f"http://127.0.0.1:{mcp_port}/healthz", process, log)
        wait_for(f"http://127.0.0.1:{port}/healthz", process, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


def wait_for(url: str, process: subprocess.Popen[Any], log: Path) -> None:
    """Wait until `url` answers (any HTTP status counts as up)."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"exited with {process.returncode}: {log.read_text()[-2000:]}")
        try:
            with urlopen(url, timeout=2):  # noqa: S310 - our own loopback URL
                return
        except HTTPError:  # it answered
            return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"{url} did not answer within {START_TIMEOUT}s")


@pytest.fixture(scope="module")
def block(installed: Installation, demo: str) -> dict[str, Any]:
    """The tab's claude-config line (the demo's URL), its output saved where Claude Desktop reads it on Linux."""
    line = [demo if word == "http://127.0.0.1:8000" else word for word in installed.words(installed.lines[3])]
    assert line[1:] == ["claude-config", "--api-url", demo]
    done = installed.run(line)
    assert done.returncode == 0, done.stderr
    assert "~/.config/Claude/claude_desktop_config.json" in done.stderr
    config = installed.home / ".config" / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir(parents=True)
    config.write_text(done.stdout)
    return dict(json.loads(config.read_text())["mcpServers"]["asrama"])


def test_claude_config_names_the_installed_command(installed: Installation, block: dict[str, Any], demo: str) -> None:
    assert block["command"] == str(installed.bin / "mcp-asrama")
    assert block["args"] == ["serve"]
    assert block["env"]["ASRAMA_API_URL"] == demo
    assert "ASRAMA_API_TOKEN" not in block["env"]  # the server reads the token the demo keeps in the data folder


def test_the_probe_of_the_blocks_server_answers_from_the_demo(installed: Installation, block: dict[str, Any]) -> None:
    call = ["--call", "cari_anak", json.dumps({"kelas": "7A"})]
    probe = [str(installed.bin / "mcp-asrama"), "probe", "--compact", *call, "--", block["command"], *block["args"]]
    done = installed.run(probe, **block["env"])
    assert done.returncode == 0, done.stderr[-3000:]
    received = [json.loads(line.split(" ", 2)[2]) for line in done.stdout.splitlines() if line.startswith("<<< ")]
    results = {message["id"]: message["result"] for message in received if "result" in message}
    tools = {tool["name"] for result in results.values() for tool in result.get("tools", [])}
    assert {"cari_anak", "absensi_harian"} <= tools
    answer = results[max(results)]
    assert not answer.get("isError"), answer
    assert json.loads(answer["content"][0]["text"])["total"] > 0


def test_serve_over_http_is_healthy_and_reaches_the_demo(installed: Installation, demo: str) -> None:
    port = free_port()
    log = installed.home / "serve-http.log"
    command = [str(installed.bin / "mcp-asrama"), "serve", "--transport", "http", "--port", str(port)]
    process = start(command, {**installed.env, "ASRAMA_API_URL": demo}, log)
    try:
        wait_for(f"http://127.0.0.1:{port}/healthz", process, log)
        for path, status in (("/healthz", "ok"), ("/readyz", "ready")):
            with urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
                assert json.loads(response.read()) == {"status": status}
    finally:
        stop(process)
