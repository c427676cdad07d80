"""The README's runnable lines, typed as printed, against a running demo: a block fenced as ```sh runnable is what
a school's IT person types in the project folder while `make run` is up, in a shell where `mcp-asrama` is not on
PATH. The demo runs on free ports with its data folder in tmp: the lines' 127.0.0.1:8000/8001 and
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
BLOCK = re.compile(r"^```sh runnable\n(.*?)^```", re.MULTILINE | re.DOTALL)
SCRIPTS = Path(EXECUTABLE).parent


def runnable_lines(text: str) -> list[str]:
    """The commands of every runnable block: continuation lines joined, comments and blank lines left out."""
    commands: list[str] = []
    for block in BLOCK.findall(text):
        current = ""
        for line in block.splitlines():
            if not current and (not line.strip() or line.lstrip().startswith("#")):
                continue
            current += line.rstrip()
            if current.endswith("\\"):
                current = current[:-1] + " "
                continue
            commands.append(current)
            current = ""
    return commands


def test_the_readme_has_runnable_lines() -> None:
    lines = runnable_lines(README.read_text())
    assert len(lines) >= 5
    assert all("make run" not in line for line in lines)  # it runs in the other terminal


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


@pytest.mark.parametrize("number", range(len(runnable_lines(README.read_text()))))
def test_a_readme_line_runs_as_printed(demo: tuple[int, int, Path], number: int) -> None:
    service, mcp, folder = demo
    line = runnable_lines(README.read_text())[number]
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if Path(p) != SCRIPTS)
    env = clean_env(XDG_DATA_HOME=str(folder / "data"), PATH=path, MAKEFLAGS="")
    done = subprocess.run(
        ["bash", "-c", "set -o pipefail; " + as_typed_here(line, service, mcp, folder / "data")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{line}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert done.stdout.strip(), f"{line}: printed nothing"
    assert "Traceback" not in done.stderr
