"""`--auth sekolah` with the school's own OpenID provider (oidc-provider standing in for Google Workspace) and with a
host named by its client ID metadata document, end to end over real sockets: the SDK's OAuth client → our /authorize
→ /masuk → "Masuk dengan akun sekolah" → the provider's login and consent → /login/callback → /izin → token; an
email off the staff list and a domain not allowed get a refusal page and no code.
All but the last test need ASRAMA_TEST_OIDC (scripts/oidc-provider.sh)."""

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import jwt
import pytest

from mcp_asrama.server.sekolah.client_documents import ClientDocuments
from tests.auth.conftest import Mcp
from tests.auth.oidc.documents import DOCUMENT_PATH, metadata_document, self_signed
from tests.auth.oidc.support import Memory, Provider, running_provider
from tests.auth.sekolah_oidc_support import SchoolBrowser
from tests.auth.sekolah_support import (
    HOST,
    REDIRECT_URI,
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
from tests.e2e.conftest import free_port

OIDC = os.environ.get("ASRAMA_TEST_OIDC")
pytestmark = [pytest.mark.anyio, pytest.mark.e2e]
needs_oidc = pytest.mark.skipif(not OIDC, reason="ASRAMA_TEST_OIDC is not set (scripts/oidc-provider.sh installs it)")
LOGIN_CLIENT_ID, SECRET = "asrama-login", "rahasia-sekolah-yang-panjang-sekali"
RIDWAN, HALIMAH = "ridwan@pesantren.sch.id", "halimah@pesantren.sch.id"


@dataclass(frozen=True)
class School:
    """The school's provider and our server using it for sign-in."""

    provider: Provider
    mcp: Mcp

    @property
    def callback(self) -> str:
        return f"{self.mcp.base}/login/callback"


@pytest.fixture(scope="module")
def school(tmp_path_factory: pytest.TempPathFactory) -> Iterator[School]:
    """The data service (two musyrif: Ridwan signs in with the school's account, Halimah with a local password),
    the provider with our login client registered for our callback, and our server trusting the certificate a
    host's client ID metadata document is served with (SSL_CERT_FILE)."""
    assert OIDC
    folder = tmp_path_factory.mktemp("sekolah-oidc")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    login_client = {
        "client_id": LOGIN_CLIENT_ID,
        "client_secret": SECRET,
        "redirect_uris": [f"{base}/login/callback"],
        "token_endpoint_auth_method": "client_secret_basic",
    }
    with school_service(folder) as (service_url, db_file):
        put_staff(service_url, staff(RIDWAN, peran=["musyrif"], kamar=("Al-Fatih 1",), menulis=True))
        put_staff(service_url, staff(HALIMAH, peran=["musyrif"], kamar=("Aisyah 2",)))
        set_password(db_file, HALIMAH)
        with running_provider(
            OIDC, free_port(), f"{base}/mcp", folder, 300, login_client=login_client, id_token_claims=True
        ) as provider:
            settings = {
                "ASRAMA_LOGIN_OIDC_ISSUER": provider.issuer,
                "ASRAMA_LOGIN_OIDC_CLIENT_ID": LOGIN_CLIENT_ID,
                "ASRAMA_LOGIN_OIDC_CLIENT_SECRET": SECRET,
                "ASRAMA_LOGIN_DOMAINS": "pesantren.sch.id,pondok.example",
                "SSL_CERT_FILE": str(provider.cert[0]),
            }
            with sekolah_server(service_url, folder, port, **settings) as mcp:
                yield School(provider, mcp)


@needs_oidc
async def test_a_musyrif_signs_in_with_the_school_account_and_sees_exactly_his_room(school: School) -> None:
    school.provider.set_email("ridwan", "Ridwan@Pesantren.SCH.id", email_verified=True)
    person, storage = SchoolBrowser(RIDWAN, login="ridwan", callback=school.callback), Memory()
    async with host(school.mcp, person, storage) as client:
        assert await students(client) == {"A001", "A002"}  # Al-Fatih 1's
    assert person.pages == [(200, "/masuk"), (200, "/izin")] and person.provider_pages == ["login", "consent"]
    token = storage.tokens[-1]
    assert set((token.scope or "").split()) == {"asrama:read", "asrama:write"}
    server = httpx2.get(f"{school.mcp.base}/.well-known/oauth-authorization-server", timeout=TIMEOUT).json()
    key = jwt.PyJWKClient(server["jwks_uri"]).get_signing_key_from_jwt(token.access_token)
    claims = jwt.decode(token.access_token, key.key, algorithms=["ES256"], audience=school.mcp.public_url)
    assert claims["sub"] == RIDWAN and claims["asrama_scope"] == ["kamar:Al-Fatih 1"]


async def refused(school: School, login: str) -> httpx2.Response:
    """`login` signs in at the provider for a freshly registered client; the page our server ends on."""
    redirects: list[str] = []

    async def note(response: httpx2.Response) -> None:
        redirects.append(response.headers.get("location", ""))

    person = SchoolBrowser("", login=login, callback=school.callback)
    async with person:
        person.http.event_hooks["response"].append(note)
        page = await person.sign_in(await authorize_url(person.http, school.mcp))
    assert person.provider_pages == ["login", "consent"]  # the provider let her in; our server refused
    assert any(url.startswith(school.provider.issuer) for url in redirects)  # (the hook saw the way out)
    assert not page.is_redirect and not any(url.startswith(REDIRECT_URI) for url in redirects)  # no code went on
    return page


@needs_oidc
async def test_an_email_not_on_the_staff_list_gets_no_code(school: School) -> None:
    school.provider.set_email("tamu", "tamu@pesantren.sch.id", email_verified=True)
    page = await refused(school, "tamu")
    assert page.status_code == 403 and page.url.path == "/login/callback"  # refused before any session exists
    assert "belum terdaftar sebagai pengurus" in page.text and "asrama_sesi" not in page.headers.get("set-cookie", "")


@needs_oidc
async def test_a_domain_not_allowed_gets_no_code(school: School) -> None:
    school.provider.set_email("budi", "ridwan@gmail.com", email_verified=True)  # a staff member's name, elsewhere
    page = await refused(school, "budi")
    assert page.status_code == 403 and page.url.path == "/login/callback"
    assert "bukan akun sekolah yang diizinkan" in page.text


@needs_oidc
async def test_a_host_named_by_its_client_id_metadata_document(school: School) -> None:
    """No registration: the server reads the host's document (HTTPS, trusted through SSL_CERT_FILE) and the person
    signs in with a local password."""
    with metadata_document(school.provider.cert, {**HOST, "client_name": "Asrama Desktop"}) as (url, fetched):
        person, storage = Browser(HALIMAH), Memory()
        async with host(school.mcp, person, storage, document_url=url) as client:
            assert await students(client) == {"A003"}  # Aisyah 2's
    assert DOCUMENT_PATH in fetched
    assert storage.client is not None and storage.client.client_id == url
    assert storage.client.client_id_issued_at is None  # not registered dynamically (RFC 7591 would set it)
    assert person.pages == [(200, "/masuk"), (200, "/izin")] and storage.tokens[-1].scope == "asrama:read"


async def test_documents_are_trusted_through_ssl_cert_file_but_no_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The certificates the environment trusts (SSL_CERT_FILE) hold for documents too; its proxy does not: the
    checked address is connected to."""
    cert = self_signed(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert[0]))
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    with metadata_document(cert, HOST) as (url, fetched):
        documents = ClientDocuments(allow_loopback=True)
        try:
            client = await documents.client(url)
        finally:
            await documents.aclose()
    assert client is not None and client.client_id == url and fetched == [DOCUMENT_PATH]
