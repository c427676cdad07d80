"""Fixtures for the HTTP security tests: the stand-in identity provider, the data service, and MCP servers that
require bearer tokens, as real processes or uvicorn threads, all on 127.0.0.1."""

import os
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from mcp_asrama.server.app import build_server
from mcp_asrama.server.settings import ServerSettings
from mcp_asrama.server.transport import http_app
from tests.auth.idp import Idp
from tests.conftest import TOKEN, TUTORIAL_ABSENSI, TUTORIAL_ANAK, TUTORIAL_KAMAR, insert_rows
from tests.e2e.conftest import EXECUTABLE, START_TIMEOUT, clean_env, free_port, start, stop, wait_until_up

# Rate limits are tested elsewhere; these servers must not throttle the many requests of one test subject.
UNLIMITED = {"rate_limit": "1000000/min", "rate_burst": 100000}
UNLIMITED_ENV = {"ASRAMA_RATE_LIMIT": "1000000/min", "ASRAMA_RATE_BURST": "100000"}
ALLOWED_ORIGIN = "https://asrama.example.sch.id"


@dataclass(frozen=True)
class Mcp:
    """A running MCP server: its /mcp URL, its root, the public URL tokens must name, and its log (processes)."""

    url: str
    base: str
    public_url: str
    log: Path | None = None

    @property
    def metadata_url(self) -> str:
        return f"{self.base}/.well-known/oauth-protected-resource/mcp"


@pytest.fixture(scope="module")
def idp() -> Iterator[Idp]:
    """The identity provider of a test module, publishing key `k1`."""
    with Idp() as provider:
        provider.add_key("k1")
        yield provider


@pytest.fixture(scope="module")
def service_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The data service as a real process with the tutorial's data and token (one per test module)."""
    folder = tmp_path_factory.mktemp("service")
    db_url = f"sqlite:///{folder / 'asrama.db'}"
    insert_rows(db_url, kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK, absensi=TUTORIAL_ABSENSI)
    port = free_port()
    log = folder / "service.log"
    env = clean_env(ASRAMA_SERVICE_TOKEN=TOKEN, XDG_DATA_HOME=str(folder))
    process = start([EXECUTABLE, "service", "--port", str(port), "--buat", "--db", db_url], env, log)
    try:
        wait_until_up(port, process, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


@contextmanager
def mcp_process(flags: list[str], env: dict[str, str], folder: Path, port: int | None = None) -> Iterator[Mcp]:
    """`mcp-asrama --log-level DEBUG serve --transport http ...` as a real process."""
    port = port or free_port()
    log = folder / f"mcp-{port}.log"
    command = [EXECUTABLE, "--log-level", "DEBUG", "serve", "--transport", "http", "--port", str(port), *flags]
    process = start(command, clean_env(**{**UNLIMITED_ENV, "XDG_DATA_HOME": str(folder), **env}), log)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(port, process, log)
        yield Mcp(f"{base}/mcp", base, f"{base}/mcp", log)
    finally:
        stop(process)


@contextmanager
def jwt_process(idp: Idp, service_url: str, folder: Path, **env: str) -> Iterator[Mcp]:
    """`mcp-asrama serve` as a real process requiring the IdP's tokens (JWKS), configured with the CLI flags, bound
    to 127.0.0.1, with `env` added to its environment."""
    port = free_port()
    flags = [
        "--auth", "jwt",
        "--public-url", f"http://127.0.0.1:{port}/mcp",
        "--auth-issuer", idp.issuer,
        "--auth-jwks-url", idp.jwks_url,
        "--allowed-origins", ALLOWED_ORIGIN,
    ]  # fmt: skip
    with mcp_process(flags, {"ASRAMA_API_URL": service_url, "ASRAMA_API_TOKEN": TOKEN, **env}, folder, port) as mcp:
        yield mcp


@pytest.fixture(scope="module")
def jwt_mcp(idp: Idp, service_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mcp]:
    """The MCP server requiring the IdP's tokens, as a real process."""
    with jwt_process(idp, service_url, tmp_path_factory.mktemp("mcp")) as mcp:
        yield mcp


@contextmanager
def uvicorn_thread(app: Any, port: int) -> Iterator[None]:
    """Serve an ASGI app on 127.0.0.1:`port` from a thread of this process, stopping it afterwards."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, lifespan="on"))
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT
    try:
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn on port {port} did not start")
            time.sleep(0.02)
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        assert not thread.is_alive(), "uvicorn thread did not stop"


@contextmanager
def mcp_in_thread(port: int | None = None, **settings: Any) -> Iterator[Mcp]:
    """build_server + http_app under uvicorn in this process: any settings, even a bind we only pretend to have
    (the socket is always 127.0.0.1). With auth, the public URL defaults to this server's own /mcp."""
    port = port or free_port()
    base = f"http://127.0.0.1:{port}"
    options: dict[str, Any] = {"transport": "http", "mcp_port": port, "api_token": TOKEN, **UNLIMITED, **settings}
    if options.get("auth") == "jwt":
        options.setdefault("public_url", f"{base}/mcp")
    config = ServerSettings(**options)
    server = build_server(config)
    with uvicorn_thread(http_app(server, config), port):
        yield Mcp(f"{base}/mcp", base, str(config.public_url or f"{base}/mcp"))


def jwt_settings(idp: Idp, **overrides: Any) -> dict[str, Any]:
    """Settings of a server requiring `idp`'s tokens (fetched from its JWKS)."""
    return {"auth": "jwt", "auth_issuer": idp.issuer, "auth_jwks_url": idp.jwks_url, **overrides}


REDIS_SERVER = os.environ.get("ASRAMA_TEST_REDIS_SERVER")
needs_redis = pytest.mark.skipif(not REDIS_SERVER, reason="ASRAMA_TEST_REDIS_SERVER is not set")


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A throwaway Redis on a free port of 127.0.0.1, nothing persisted."""
    assert REDIS_SERVER
    port = free_port()
    log = tmp_path / "redis.log"
    command = [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path)
    try:
        wait_until_up(port, process, log)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop(process)
