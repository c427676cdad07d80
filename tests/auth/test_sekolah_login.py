"""`serve --transport http --auth sekolah`: our server is the authorization server. The SDK's OAuth client meets it
as a host does (401 → Protected Resource Metadata → authorization server metadata → registration → /authorize →
our sign-in and consent pages → code + PKCE → token) and a staff member reads exactly what the staff list gives
them; then refresh, reuse, replay and revocation over real sockets (a real service and server process)."""

from collections.abc import Iterator
from pathlib import Path

import httpx2
import jwt
import pytest

from tests.auth.conftest import Mcp
from tests.auth.oidc.support import Memory
from tests.auth.sekolah_support import (
    Browser,
    authorize_url,
    host,
    put_staff,
    school_service,
    sekolah_server,
    set_password,
    staff,
    students,
)
from tests.auth.support import TIMEOUT

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]
RIDWAN, HALIMAH, KLINIK = "ridwan@pesantren.sch.id", "halimah@pesantren.sch.id", "klinik@pesantren.sch.id"


@pytest.fixture(scope="module")
def school(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The data service with the tutorial's data and three staff members with passwords."""
    with school_service(tmp_path_factory.mktemp("sekolah")) as (url, db_file):
        put_staff(url, staff(RIDWAN, peran=["musyrif"], kamar=("Al-Fatih 1",), menulis=True))
        put_staff(url, staff(HALIMAH, peran=["musyrif"], kamar=("Aisyah 2",)))
        put_staff(url, staff(KLINIK, peran=["kesehatan"]))
        for email in (RIDWAN, HALIMAH, KLINIK):
            set_password(db_file, email)
        yield url, db_file


@pytest.fixture(scope="module")
def mcp(school: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mcp]:
    with sekolah_server(school[0], tmp_path_factory.mktemp("mcp")) as server:
        yield server


async def test_a_musyrif_signs_in_and_sees_exactly_his_room(mcp: Mcp) -> None:
    person, storage = Browser(RIDWAN), Memory()
    async with host(mcp, person, storage) as client:
        assert await students(client) == {"A001", "A002"}  # Al-Fatih 1's
    assert [path for _, path in person.pages] == ["/masuk", "/izin"]
    assert storage.client is not None and storage.client.client_id_issued_at  # registered dynamically (RFC 7591)
    token = storage.tokens[-1]
    assert (
        token.expires_in == 600
        and token.refresh_token
        and set((token.scope or "").split())
        == {
            "asrama:read",
            "asrama:write",
        }
    )
    server = httpx2.get(f"{mcp.base}/.well-known/oauth-authorization-server", timeout=TIMEOUT).json()
    keys = jwt.PyJWKClient(server["jwks_uri"]).get_signing_key_from_jwt(token.access_token)
    claims = jwt.decode(token.access_token, keys.key, algorithms=["ES256"], audience=mcp.public_url)
    assert claims["iss"] == server["issuer"] and claims["sub"] == RIDWAN and claims["exp"] - claims["iat"] == 600
    assert claims["asrama_scope"] == ["kamar:Al-Fatih 1"]
    assert jwt.get_unverified_header(token.access_token)["typ"] == "at+jwt"
    resource = httpx2.get(mcp.metadata_url, timeout=TIMEOUT).json()
    assert resource["authorization_servers"] == [server["issuer"]] and "asrama:write" in resource["scopes_supported"]


async def test_without_menulis_no_write_scope(mcp: Mcp) -> None:
    person, storage = Browser(HALIMAH), Memory()
    async with host(mcp, person, storage) as client:
        assert await students(client) == {"A003"}
    assert storage.tokens[-1].scope == "asrama:read"
    consent = person.pages[-1]
    assert consent == (200, "/izin")


async def test_a_wrong_password_gets_no_code(mcp: Mcp) -> None:
    async with Browser(RIDWAN, sandi="salah-sekali") as person:
        page = await person.sign_in(await authorize_url(person.http, mcp))
    assert page.status_code == 401 and "Email atau sandi salah" in page.text
    assert "code=" not in page.headers.get("location", "")
