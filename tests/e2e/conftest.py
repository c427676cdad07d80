"""End-to-end fixtures: real processes of the `mcp-asrama` console script on 127.0.0.1."""

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TOKEN, TUTORIAL_ABSENSI, TUTORIAL_ANAK, TUTORIAL_KAMAR, insert_rows

EXECUTABLE = shutil.which("mcp-asrama", path=str(Path(sys.executable).parent)) or "mcp-asrama"
START_TIMEOUT = 20.0


def free_port() -> int:
    """A port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[Any]:
    """Start a console-script process with stderr going to `log` (a pipe could fill up and block it)."""
    with log.open("w") as stderr:
        return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=stderr)


def wait_until_up(port: int, process: subprocess.Popen[Any], log: Path) -> None:
    """Wait until something accepts connections on `port` (uvicorn listens once start-up is complete)."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"process exited with {process.returncode}: {log.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
            return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listens on port {port} after {START_TIMEOUT}s")


def stop(process: subprocess.Popen[Any]) -> None:
    """Terminate, then kill if it does not stop within 5 s."""
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without the developer's ASRAMA_* settings, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASRAMA_")}
    return {**env, **extra}


@pytest.fixture
def live_service(tmp_path: Path) -> Iterator[str]:
    """The data service as a real process on 127.0.0.1 with the tutorial's data and token; yields its URL."""
    db_url = f"sqlite:///{tmp_path / 'asrama.db'}"
    insert_rows(db_url, kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK, absensi=TUTORIAL_ABSENSI)
    port = free_port()
    log = tmp_path / "service.log"
    env = clean_env(ASRAMA_SERVICE_TOKEN=TOKEN, XDG_DATA_HOME=str(tmp_path))
    process = start([EXECUTABLE, "service", "--port", str(port), "--buat", "--db", db_url], env, log)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(port, process, log)
        yield url
    finally:
        stop(process)


@pytest.fixture
def server_env(live_service: str, tmp_path: Path) -> dict[str, str]:
    """What a host passes to the MCP server process: the service URL and token."""
    return clean_env(ASRAMA_API_URL=live_service, ASRAMA_API_TOKEN=TOKEN, XDG_DATA_HOME=str(tmp_path))


@contextmanager
def http_mcp(env: dict[str, str], log: Path) -> Iterator[str]:
    """`mcp-asrama serve --transport http` on a free loopback port with `env`: its /mcp URL, stopped afterwards."""
    port = free_port()
    process = start([EXECUTABLE, "serve", "--transport", "http", "--port", str(port)], env, log)
    try:
        wait_until_up(port, process, log)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)


@pytest.fixture
def mcp_url(server_env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    with http_mcp(server_env, tmp_path / "mcp.log") as url:
        yield url


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
