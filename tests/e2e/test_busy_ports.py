"""A second start on ports already in use says so in one line and exits non-zero, before claiming to run."""

import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import TOKEN
from tests.e2e.conftest import EXECUTABLE, clean_env, free_port

pytestmark = pytest.mark.e2e


@pytest.fixture
def taken() -> Iterator[int]:
    """A port something else listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def run(args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = clean_env(XDG_DATA_HOME=str(tmp_path), **env)
    return subprocess.run([EXECUTABLE, *args], env=environment, capture_output=True, text=True, timeout=60, check=False)


def assert_refused_in_one_line(done: subprocess.CompletedProcess[str], port: int) -> None:
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if f"127.0.0.1:{port}" in line]
    assert lines == [f"mcp-asrama: cannot listen on 127.0.0.1:{port}: it is in use (is mcp-asrama already running?)"]
    assert "is running" not in done.stdout and "Uvicorn running" not in done.stderr


@pytest.mark.parametrize("which", ["service", "mcp"])
def test_a_demo_on_a_busy_port_exits_with_one_line(taken: int, tmp_path: Path, which: str) -> None:
    ports = {"service": str(taken), "mcp": str(free_port())} if which == "service" else {
        "service": str(free_port()), "mcp": str(taken)}  # fmt: skip
    done = run(["demo", "--port", ports["service"], "--mcp-port", ports["mcp"]], tmp_path)
    assert_refused_in_one_line(done, taken)


def test_a_service_on_a_busy_port_exits_with_one_line(taken: int, tmp_path: Path) -> None:
    done = run(["service", "--port", str(taken)], tmp_path, ASRAMA_SERVICE_TOKEN=TOKEN)
    assert_refused_in_one_line(done, taken)
    assert "service: http://" not in done.stderr


def test_an_mcp_server_on_a_busy_port_exits_with_one_line(taken: int, tmp_path: Path) -> None:
    done = run(["serve", "--transport", "http", "--port", str(taken)], tmp_path)
    assert_refused_in_one_line(done, taken)
    assert "mcp endpoint" not in done.stderr
