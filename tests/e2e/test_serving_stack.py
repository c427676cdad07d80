"""Every HTTP parser and event loop (ASRAMA_HTTP, ASRAMA_LOOP) keeps serving.py's fixes: header deadlines on
kept-alive connections, the connection cap, TCP_NODELAY on accepted connections; and the choice is checked."""

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import anyio
import pytest
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from mcp_asrama import cli
from mcp_asrama.config import ServiceSettings
from mcp_asrama.runtime import serving
from mcp_asrama.runtime.stack import Stack
from mcp_asrama.service.app import create_app
from tests.conftest import TOKEN
from tests.e2e.conftest import START_TIMEOUT
from tests.e2e.test_slow_clients import MARGIN, TIMEOUT, closed_after, connect, healthz

pytestmark = pytest.mark.e2e

STACKS = [("h11", "asyncio"), ("httptools", "asyncio"), ("httptools", "uvloop")]
PROTOCOLS = {"h11": H11Protocol, "httptools": HttpToolsProtocol}  # what sdk_seams.limited_protocol subclasses


@contextmanager
def running_on(server: uvicorn.Server, loop: str) -> Iterator[int]:
    """Serve from a thread of this process on `loop`; yields the port."""
    options = Stack(loop=loop).backend_options(data_service=True)
    thread = threading.Thread(
        target=anyio.run, args=(serving.serve, server), kwargs={"backend_options": options}, daemon=True
    )
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


def service(folder: Path, parser: str, **limits: float) -> uvicorn.Server:
    app = create_app(ServiceSettings(db_url=f"sqlite:///{folder / 'asrama.db'}", service_token=TOKEN))
    return serving.make_server(app, "127.0.0.1", 0, ServiceSettings(**limits), stack=Stack(http=parser))


@pytest.mark.parametrize(("parser", "loop"), STACKS)
def test_each_stack_cuts_slow_headers_on_kept_alive_connections_with_nagle_off(
    parser: str, loop: str, tmp_path: Path
) -> None:
    server = service(tmp_path, parser, header_timeout=TIMEOUT, body_timeout=30)
    with running_on(server, loop) as port:
        assert healthz(port) == 200  # warm: the next answer comes within the wait below
        with connect(port) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            still_open, answer = closed_after(sock, time.monotonic(), 1.0)
            assert still_open is None and answer.startswith(b"HTTP/1.1 200 ")  # kept alive, idle: not cut
            [protocol] = [
                p
                for p in server.server_state.connections
                if p.transport.get_extra_info("peername") == sock.getsockname()
            ]
            assert type(protocol) is server.config.http and isinstance(protocol, PROTOCOLS[parser])
            accepted = protocol.transport.get_extra_info("socket")
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
            started = time.monotonic()
            sock.sendall(b"GET /healthz HTTP/1.1\r\n")
            elapsed, _ = closed_after(sock, started, TIMEOUT + MARGIN, trickle=b"X-Slow: still sending" * 3)
        assert elapsed is not None, "a slowloris client still holds the kept-alive connection"
        assert TIMEOUT * 0.9 <= elapsed <= TIMEOUT + MARGIN
        assert healthz(port) == 200


@pytest.mark.parametrize(("parser", "loop"), STACKS)
def test_each_stack_answers_connections_beyond_the_cap_with_503(parser: str, loop: str, tmp_path: Path) -> None:
    cap = 2
    server = service(tmp_path, parser, header_timeout=5, max_connections=cap)
    with running_on(server, loop) as port, ExitStack() as held:
        for _ in range(cap):
            held.enter_context(connect(port))
        opened = time.monotonic()
        while len(server.server_state.connections) < cap:
            assert time.monotonic() - opened < 2, "the server did not accept the first connections"
            time.sleep(0.01)
        with connect(port) as extra:
            elapsed, answer = closed_after(extra, time.monotonic(), 0.5)
        assert elapsed is not None and answer.startswith(b"HTTP/1.1 503 ")


def test_auto_is_httptools_and_uvloop_for_the_mcp_server_and_asyncio_for_the_data_service() -> None:
    auto = Stack()
    assert auto.parser == "httptools"
    assert auto.backend_options() == {"use_uvloop": True}
    assert auto.backend_options(data_service=True) == {}
    assert Stack(loop="uvloop").backend_options(data_service=True) == {"use_uvloop": True}
    assert Stack(http="h11", loop="asyncio").parser == "h11"
    assert Stack(loop="asyncio").backend_options() == {}


def test_an_unknown_stack_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ASRAMA_HTTP", "h2")
    assert cli.main(["serve"]) == 2
    assert "configuration error: http: Input should be 'auto', 'h11' or 'httptools'" in capsys.readouterr().err
