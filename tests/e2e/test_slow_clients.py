"""Slow clients cannot hold a server: header and body deadlines, a cap on connections, and accept() failures
counted instead of each logged — for the data service and the MCP server, over real sockets on 127.0.0.1."""

import asyncio
import logging
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import uvicorn

from mcp_asrama.config import ServiceSettings
from mcp_asrama.runtime import serving
from mcp_asrama.server.app import build_server
from mcp_asrama.server.settings import ServerSettings
from mcp_asrama.server.transport import http_app
from mcp_asrama.service.app import create_app
from tests.conftest import TOKEN
from tests.e2e.conftest import START_TIMEOUT, clean_env, free_port, stop, wait_until_up

pytestmark = pytest.mark.e2e

TIMEOUT = 0.5  # header or body deadline of the servers under test (seconds)
MARGIN = 1.5  # how late the server may cut on a busy machine


def limited_server(kind: str, folder: Path, **limits: Any) -> uvicorn.Server:
    """The data service or the MCP server's HTTP app, as the product starts them, on a port the OS picks."""
    if kind == "service":
        app: Any = create_app(ServiceSettings(db_url=f"sqlite:///{folder / 'asrama.db'}", service_token=TOKEN))
    else:
        # Never the default upstream (8000): a running demo would answer there.
        settings = ServerSettings(transport="http", api_url=f"http://127.0.0.1:{free_port()}", api_token=TOKEN)
        app = http_app(build_server(settings), settings)
    return serving.make_server(app, "127.0.0.1", 0, ServiceSettings(**limits))


@contextmanager
def running(server: uvicorn.Server) -> Iterator[int]:
    """Serve from a thread of this process; yields the port."""
    thread = threading.Thread(target=anyio.run, args=(serving.serve, server), daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT
    try:
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "server did not start"
            time.sleep(0.02)
        yield int(server.servers[0].sockets[0].getsockname()[1])
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        assert not thread.is_alive(), "server did not stop"


@pytest.fixture(params=["service", "mcp"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=2)
    sock.settimeout(0.05)
    return sock


def closed_after(
    sock: socket.socket, started: float, within: float, trickle: bytes = b""
) -> tuple[float | None, bytes]:
    """Seconds from `started` until the server closed the connection (None: still open after `within`), and what
    it sent; meanwhile one byte of `trickle` goes out every 0.1 s, as a slowloris client sends."""
    received = b""
    pending = list(trickle)
    last_sent = time.monotonic()
    while time.monotonic() - started < within:
        try:
            data = sock.recv(4096)
        except TimeoutError:
            data = None
        except ConnectionResetError:
            return time.monotonic() - started, received
        if data == b"":
            return time.monotonic() - started, received
        received += data or b""
        if pending and time.monotonic() - last_sent >= 0.1:
            try:
                sock.send(bytes([pending.pop(0)]))
            except OSError:
                return time.monotonic() - started, received
            last_sent = time.monotonic()
    return None, received


def healthz(port: int) -> int:
    return httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code


def test_half_sent_headers_are_cut_off_at_the_header_timeout(kind: str, tmp_path: Path) -> None:
    with running(limited_server(kind, tmp_path, header_timeout=TIMEOUT, body_timeout=30)) as port:
        with connect(port) as sock:
            started = time.monotonic()
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            elapsed, _ = closed_after(sock, started, TIMEOUT + MARGIN, trickle=b"X-Slow: still sending" * 3)
        assert elapsed is not None, "a slowloris client still holds the connection"
        assert TIMEOUT * 0.9 <= elapsed <= TIMEOUT + MARGIN
        assert healthz(port) == 200


def test_headers_trickled_on_a_kept_alive_connection_are_cut_off_too(kind: str, tmp_path: Path) -> None:
    with running(limited_server(kind, tmp_path, header_timeout=TIMEOUT, body_timeout=30)) as port:
        with connect(port) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            still_open, answer = closed_after(sock, time.monotonic(), 0.3)
            assert still_open is None and answer.startswith(b"HTTP/1.1 200 ")  # kept alive, idle: not cut
            started = time.monotonic()
            sock.sendall(b"GET /healthz HTTP/1.1\r\n")
            elapsed, _ = closed_after(sock, started, TIMEOUT + MARGIN, trickle=b"X-Slow: still sending" * 3)
        assert elapsed is not None, "a slowloris client still holds the kept-alive connection"
        assert TIMEOUT * 0.9 <= elapsed <= TIMEOUT + MARGIN


def test_a_body_shorter_than_its_content_length_is_cut_off_at_the_body_timeout(
    kind: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # To /mcp our own checks read the body (routing_headers) before the SDK does.
    path = "/mcp" if kind == "mcp" else "/healthz"
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n"
    )
    with running(limited_server(kind, tmp_path, header_timeout=30, body_timeout=TIMEOUT)) as port:
        with connect(port) as sock:
            sock.sendall(head.encode() + b'{"jsonrpc": "2.0", ')
            started = time.monotonic()
            elapsed, _ = closed_after(sock, started, TIMEOUT + MARGIN, trickle=b'"id": 1, "method": "tools/list"')
        assert elapsed is not None, "a client sending its body slowly still holds the connection"
        assert TIMEOUT * 0.9 <= elapsed <= TIMEOUT + MARGIN
        assert healthz(port) == 200
    # Nobody is left to answer a cut request: no traceback, no attempt at a 500.
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


def test_connections_beyond_the_cap_get_a_quick_503_and_the_server_recovers(kind: str, tmp_path: Path) -> None:
    cap, header_timeout = 3, 1.0
    server = limited_server(kind, tmp_path, header_timeout=header_timeout, max_connections=cap)
    with running(server) as port, ExitStack() as stack:
        idle = [stack.enter_context(connect(port)) for _ in range(cap)]
        opened = time.monotonic()
        while len(server.server_state.connections) < cap:
            assert time.monotonic() - opened < 2, "the server did not accept the first connections"
            time.sleep(0.01)
        for _ in range(2):
            with connect(port) as extra:
                elapsed, answer = closed_after(extra, time.monotonic(), 0.5)
            assert elapsed is not None, "a connection beyond the cap is held"
            assert answer.startswith(b"HTTP/1.1 503 ")
        for sock in idle:
            elapsed, _ = closed_after(sock, opened, header_timeout + MARGIN)
            assert elapsed is not None
        assert healthz(port) == 200


def test_a_flood_of_failed_accepts_is_one_log_line_and_the_service_recovers(tmp_path: Path) -> None:
    """With too few file descriptors for its connections, asyncio would log a traceback per backlog slot and second
    (megabytes); the service logs one line and answers again once the connections are gone."""
    port = free_port()
    log = tmp_path / "service.log"
    starter = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_NOFILE, (40, 40)); "
        "from mcp_asrama.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    command = [
        sys.executable,
        "-c",
        starter,
        "service",
        "--port",
        str(port),
        "--buat",
        "--db",
        f"sqlite:///{tmp_path / 'a.db'}",
    ]
    env = clean_env(ASRAMA_SERVICE_TOKEN=TOKEN, XDG_DATA_HOME=str(tmp_path), ASRAMA_HEADER_TIMEOUT="1")
    with log.open("w") as stderr:
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        wait_until_up(port, process, log)
        with ExitStack() as stack:
            for _ in range(100):
                stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=2))
            time.sleep(1.5)
        deadline = time.monotonic() + 10
        while True:
            try:
                if healthz(port) == 200:
                    break
            except httpx2.HTTPError:
                pass
            assert time.monotonic() < deadline, "the service did not answer after the connections were closed"
            time.sleep(0.2)
    finally:
        stop(process)
    text = log.read_text()
    assert len(text) < 16_000, f"{len(text):,} bytes of log"
    assert sum("accept()" in line for line in text.splitlines()) <= 2  # one line per 10 s interval
    assert "accept() failed" in text, "the test did not run the service out of file descriptors"


def test_failed_accepts_are_counted_and_other_loop_errors_still_reported(caplog: pytest.LogCaptureFixture) -> None:
    reported: list[str] = []
    loop = asyncio.new_event_loop()
    try:
        loop.set_exception_handler(lambda _loop, context: reported.append(context["message"]))
        serving.tally_accept_failures(loop)
        caplog.set_level(logging.WARNING, logger="mcp_asrama.runtime.serving")
        for _ in range(1000):
            loop.call_exception_handler({"message": serving.ACCEPT_FAILED, "exception": OSError(24, "Too many")})
        loop.call_exception_handler({"message": "Task exception was never retrieved"})
    finally:
        loop.close()
    assert reported == ["Task exception was never retrieved"]
    assert [(r.getMessage(), r.__dict__["count"]) for r in caplog.records] == [
        ("accept() failed: out of file descriptors or memory; new connections wait", 1)
    ]
