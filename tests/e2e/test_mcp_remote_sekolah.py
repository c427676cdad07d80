"""Claude Desktop's bridge against the school's own sign-in: `mcp-remote` (npm) as a stdio server in front of a real
`mcp-asrama serve --transport http --auth sekolah`. The bridge finds our authorization server (401 → Protected
Resource Metadata → authorization server metadata), registers itself dynamically and prints the authorization URL;
the test's musyrif follows it in his browser (sekolah_support.Browser: email and password on /masuk, "Izinkan" on
/izin) and lands on the bridge's callback; a tools/call through the bridge's stdio then answers only his room.
Needs ASRAMA_TEST_MCP_REMOTE (scripts/mcp-remote.sh)."""

import json
import os
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import jwt
import pytest

from tests.auth.conftest import Mcp
from tests.auth.sekolah_support import Browser, one_musyrif
from tests.auth.support import TIMEOUT
from tests.e2e.conftest import free_port
from tests.e2e.test_mcp_remote_oauth import LOGIN_TIMEOUT, authorization_url, bridge, session

MCP_REMOTE = os.environ.get("ASRAMA_TEST_MCP_REMOTE")
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.e2e,
    pytest.mark.skipif(not MCP_REMOTE, reason="ASRAMA_TEST_MCP_REMOTE is not set (scripts/mcp-remote.sh installs it)"),
]
RIDWAN = "ridwan@pesantren.sch.id"


@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mcp]:
    """The data service with the tutorial's data and a musyrif with a password, and our `--auth sekolah` server."""
    with one_musyrif(tmp_path_factory.mktemp("sekolah"), RIDWAN) as server:
        yield server


async def log_in(person: Browser, log: Path, landed: list[httpx2.Response]) -> None:
    """The person at the browser: from the URL the bridge printed, through our pages, to the bridge's callback."""
    async with person:
        landed.append(await person.sign_in(await authorization_url(log)))


async def test_the_bridge_signs_a_musyrif_in_and_he_sees_only_his_room(mcp: Mcp, tmp_path: Path) -> None:
    callback_port = free_port()
    redirect_uri = f"http://127.0.0.1:{callback_port}/oauth/callback"
    person, landed = Browser(RIDWAN), list[httpx2.Response]()
    params = bridge(mcp.url, callback_port, tmp_path / "mcp-auth")
    first_log, second_log = tmp_path / "bridge-1.log", tmp_path / "bridge-2.log"
    first_log.touch()
    with anyio.fail_after(LOGIN_TIMEOUT + 30):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(log_in, person, first_log, landed)
            names, seen = await session(params, first_log)
    assert names[:2] == ["cari_anak", "detail_anak"]
    assert seen == {"A001", "A002"}  # Al-Fatih 1's, not Aisyah 2's A003
    [page] = landed
    assert page.status_code == 200 and str(page.url).startswith(redirect_uri)  # the bridge took the code
    assert [path for _, path in person.pages] == ["/masuk", "/izin", "/oauth/callback"]
    [client_file] = (tmp_path / "mcp-auth").rglob("*_client_info.json")
    client = json.loads(client_file.read_text())
    assert client["redirect_uris"] == [redirect_uri] and client["client_id_issued_at"]  # registered (RFC 7591)
    [tokens_file] = (tmp_path / "mcp-auth").rglob("*_tokens.json")
    tokens = json.loads(tokens_file.read_text())
    server = httpx2.get(f"{mcp.base}/.well-known/oauth-authorization-server", timeout=TIMEOUT).json()
    keys = jwt.PyJWKClient(server["jwks_uri"]).get_signing_key_from_jwt(tokens["access_token"])
    claims = jwt.decode(tokens["access_token"], keys.key, algorithms=["ES256"], audience=mcp.public_url)
    assert (claims["iss"], claims["sub"], claims["asrama_scope"]) == (server["issuer"], RIDWAN, ["kamar:Al-Fatih 1"])
    assert tokens["refresh_token"] and tokens["expires_in"] <= 600
    with anyio.fail_after(LOGIN_TIMEOUT):
        names, seen = await session(params, second_log)
    assert seen == {"A001", "A002"}
    assert "Please authorize" not in second_log.read_text(errors="replace")  # the bridge kept its tokens
