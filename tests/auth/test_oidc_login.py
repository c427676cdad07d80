"""A full login as a host does it, against a real authorization server (oidc-provider, tests/auth/oidc): the SDK's
OAuth client meets our `mcp-asrama serve --transport http --auth jwt` with 401 → Protected Resource Metadata →
authorization server metadata → client registration (a client ID metadata document served over HTTPS, or
dynamic registration) → authorization code + PKCE (the test plays the user at the login and consent pages) → a
JWT access token for our resource (RFC 8707) → a scoped tools/call; then a refresh, a user whose scope changed,
and a signing-key rotation at the provider.
Needs ASRAMA_TEST_OIDC (scripts/oidc-provider.sh)."""

import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import anyio
import httpx2
import jwt
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata

from tests.auth import conftest as auth
from tests.auth.conftest import Mcp
from tests.auth.oidc.documents import DOCUMENT_PATH, metadata_document
from tests.auth.oidc.support import Memory, Person, Provider, private_jwk, provider_and_server
from tests.auth.support import MODERN, TIMEOUT
from tests.server.support import call_ok

OIDC = os.environ.get("ASRAMA_TEST_OIDC")
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.e2e,
    pytest.mark.skipif(not OIDC, reason="ASRAMA_TEST_OIDC is not set (scripts/oidc-provider.sh installs it)"),
]

service_url = auth.service_url  # tests/auth's module fixture: the data service with the tutorial's data
ACCESS_TTL = 2  # seconds: short enough that a test sees the host refresh its token
REDIRECT_URI = "http://127.0.0.1:9/callback"  # never visited: the test's person stops at the redirect


@pytest.fixture(scope="module")
def servers(service_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Provider, Mcp]]:
    """The provider and our server requiring its tokens, each on a free port."""
    assert OIDC
    with provider_and_server(OIDC, service_url, tmp_path_factory.mktemp("oidc"), ACCESS_TTL) as both:
        yield both


HOST_METADATA = {
    "client_name": "asrama-test-host",
    "redirect_uris": [REDIRECT_URI],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
}


@asynccontextmanager
async def host(mcp: Mcp, person: Person, storage: Memory, document_url: str | None = None) -> AsyncIterator[Client]:
    """The SDK's client with its OAuth support, logging in through `person` when the server asks for a token;
    with `document_url` it names its client ID metadata document instead of registering."""
    metadata = OAuthClientMetadata.model_validate(HOST_METADATA)
    oauth = OAuthClientProvider(
        mcp.url, metadata, storage, person.redirect_handler, person.callback_handler, client_metadata_url=document_url
    )
    async with (
        httpx2.AsyncClient(auth=oauth, timeout=TIMEOUT) as http,
        Client(streamable_http_client(mcp.url, http_client=http), mode=MODERN, cache=None) as client,
    ):
        yield client


async def students(client: Client) -> set[str]:
    body = await call_ok(client, "cari_anak", {})
    return {row["id"] for row in body["data"]}


async def test_login_gives_a_token_for_this_resource_and_a_scoped_call(servers: tuple[Provider, Mcp]) -> None:
    provider, mcp = servers
    provider.set_scope("halimah", ["kamar:Aisyah 2"])
    person, storage = Person("halimah", REDIRECT_URI), Memory()
    async with host(mcp, person, storage) as client:
        assert await students(client) == {"A003"}
    assert person.logins == 1 and person.pages == ["login", "consent"]
    metadata = httpx2.get(mcp.metadata_url, timeout=TIMEOUT).json()  # where the SDK found the provider
    assert [url.rstrip("/") for url in metadata["authorization_servers"]] == [provider.issuer]
    assert storage.client is not None and storage.client.client_id_issued_at  # registered dynamically (RFC 7591)
    claims = jwt.decode(storage.tokens[-1].access_token, options={"verify_signature": False})
    assert claims["iss"] == provider.issuer and claims["aud"] == mcp.public_url and claims["sub"] == "halimah"
    assert claims["asrama_scope"] == ["kamar:Aisyah 2"] and "asrama:read" in claims["scope"].split()


async def test_refresh_brings_the_users_new_scope_without_a_new_login(servers: tuple[Provider, Mcp]) -> None:
    provider, mcp = servers
    provider.set_scope("ridwan", ["kamar:Aisyah 2"])
    person, storage = Person("ridwan", REDIRECT_URI), Memory()
    async with host(mcp, person, storage) as client:
        assert await students(client) == {"A003"}
        provider.set_scope("ridwan", ["kamar:Al-Fatih 1"])
        await anyio.sleep(ACCESS_TTL + 1)  # the access token expires; the host refreshes before its next request
        assert await students(client) == {"A001", "A002"}
    assert person.logins == 1
    assert len(storage.tokens) == 2 and storage.tokens[0].refresh_token
    first, second = (jwt.decode(t.access_token, options={"verify_signature": False}) for t in storage.tokens)
    assert first["jti"] != second["jti"] and second["asrama_scope"] == ["kamar:Al-Fatih 1"]


async def test_signing_key_rotation_at_the_provider(servers: tuple[Provider, Mcp]) -> None:
    provider, mcp = servers
    provider.set_scope("zahra", ["kamar:Aisyah 2"])
    async with host(mcp, Person("zahra", REDIRECT_URI), Memory()) as client:
        assert await students(client) == {"A003"}  # our server now holds the provider's current keys
    old = provider.keys[0]["kid"]
    provider.restart([private_jwk(f"{old}-next"), *provider.keys])  # a new key signs from now on; the old stays
    person, storage = Person("zahra", REDIRECT_URI), Memory()
    async with host(mcp, person, storage) as client:
        assert await students(client) == {"A003"}  # our server fetched the JWKS again for the unknown kid
    assert jwt.get_unverified_header(storage.tokens[-1].access_token)["kid"] == f"{old}-next"


async def test_login_with_a_client_id_metadata_document(servers: tuple[Provider, Mcp]) -> None:
    provider, mcp = servers
    provider.set_scope("aminah", ["kamar:Al-Fatih 1"])
    with metadata_document(provider.cert, HOST_METADATA) as (url, fetched):
        person, storage = Person("aminah", REDIRECT_URI), Memory()
        async with host(mcp, person, storage, document_url=url) as client:
            assert await students(client) == {"A001", "A002"}
    assert DOCUMENT_PATH in fetched  # the provider read the document: no registration took place
    assert storage.client is not None and storage.client.client_id == url
    claims = jwt.decode(storage.tokens[-1].access_token, options={"verify_signature": False})
    assert claims["client_id"] == url and claims["asrama_scope"] == ["kamar:Al-Fatih 1"]
