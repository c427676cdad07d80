"""The runnable lines of the README and of every docs page, typed as printed, against one running demo: a block
fenced as ```sh runnable is what a school's IT person types in the project folder while `make run` is up, in a
shell where `mcp-asrama` is not on PATH. The pages run in order (the README, then docs/*.md by name), each line
once. The demo runs on free ports with its data folder in tmp: the lines' 127.0.0.1:8000/8001 and
~/.local/share/mcp-asrama are rewritten to those, nothing else."""

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import EXECUTABLE, clean_env, free_port, start, stop, wait_until_up

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```sh runnable\n(.*?)^```", re.MULTILINE | re.DOTALL)
SCRIPTS = Path(EXECUTABLE).parent


def commands(block: str) -> list[str]:
    """A block's commands: continuation lines joined, comments and blank lines left out."""
    found: list[str] = []
    current = ""
    for line in block.splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        current += line.rstrip()
        if current.endswith("\\"):
            current = current[:-1] + " "
            continue
        found.append(current)
        current = ""
    return found


def runnable_lines(text: str) -> list[str]:
    """The commands of every runnable block."""
    return [command for block in BLOCK.findall(text) for command in commands(block)]


def all_runnable_lines() -> list[tuple[str, str]]:
    """(page, command) for every runnable line of the README and the docs pages, in the order they run."""
    return [(page.relative_to(ROOT).as_posix(), line) for page in PAGES for line in runnable_lines(page.read_text())]


def test_the_readme_and_the_docs_have_runnable_lines() -> None:
    lines = all_runnable_lines()
    assert len(runnable_lines(README.read_text())) >= 5
    pages = {page for page, _ in lines}
    assert {"docs/hosts.md", "docs/writes.md", "docs/staff-devices.md"} <= pages
    assert all("make run" not in line for _, line in lines)  # it runs in the other terminal


def test_make_run_takes_the_ports_from_its_command_line_only() -> None:
    env = clean_env(MAKEFLAGS="", PORT="3000")
    given = ["make", "-n", "run", "PORT=8100", "MCP_PORT=8101"]
    done = subprocess.run(given, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=True)
    assert "mcp-asrama demo --port 8100 --mcp-port 8101" in done.stdout
    plain = subprocess.run(["make", "-n", "run"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert plain.returncode == 0 and "mcp-asrama demo" in plain.stdout and "--port" not in plain.stdout


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, int, Path]]:
    """`mcp-asrama demo` on free ports, its data folder in tmp."""
    folder = tmp_path_factory.mktemp("readme")
    service, mcp = free_port(), free_port()
    log = folder / "demo.log"
    env = clean_env(XDG_DATA_HOME=str(folder / "data"))
    process = start([EXECUTABLE, "demo", "--port", str(service), "--mcp-port", str(mcp)], env, log)
    try:
        wait_until_up(mcp, process, log)
        wait_until_up(service, process, log)
        yield service, mcp, folder
    finally:
        stop(process)


def as_typed_here(line: str, service: int, mcp: int, data: Path) -> str:
    line = line.replace("127.0.0.1:8000", f"127.0.0.1:{service}").replace("127.0.0.1:8001", f"127.0.0.1:{mcp}")
    return line.replace("~/.local/share/mcp-asrama", str(data / "mcp-asrama"))


def test_a_second_demo_on_its_ports_says_how_to_choose_others(demo: tuple[int, int, Path]) -> None:
    service, mcp, folder = demo
    env = clean_env(XDG_DATA_HOME=str(folder / "data"))
    command = [EXECUTABLE, "demo", "--port", str(service), "--mcp-port", str(mcp)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0
    assert f"cannot listen on 127.0.0.1:{service}: it is in use" in done.stderr
    assert "make run PORT=8100 MCP_PORT=8101" in done.stderr


LINES = all_runnable_lines()


@pytest.mark.parametrize(("page", "line"), LINES, ids=[f"{page}-{n}" for n, (page, _) in enumerate(LINES)])
def test_a_runnable_line_runs_as_printed(demo: tuple[int, int, Path], page: str, line: str) -> None:
    service, mcp, folder = demo
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if Path(p) != SCRIPTS)
    env = clean_env(XDG_DATA_HOME=str(folder / "data"), PATH=path, MAKEFLAGS="")
    done = subprocess.run(
        ["bash", "-c", "set -o pipefail; " + as_typed_here(line, service, mcp, folder / "data")],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,  # a line that asks the person (probe --tanya) gets no answer: nothing is written
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{page}: {line}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert done.stdout.strip(), f"{page}: {line}: printed nothing"
    assert "Traceback" not in done.stderr
