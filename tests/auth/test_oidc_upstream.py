"""The person's sign-in at the school's own OpenID provider (src/mcp_asrama/server/sekolah/oidc.py) against a real
one (oidc-provider, tests/auth/oidc) with a preregistered confidential client: the test plays the person at its
login and consent pages and hands the callback's query to `finish`.
Needs ASRAMA_TEST_OIDC (scripts/oidc-provider.sh)."""

import logging
import os
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import parse_qs, parse_qsl, urlsplit

import pytest

from mcp_asrama.server.sekolah.oidc import LoginRefused, OidcLogin
from tests.auth.oidc.support import Provider, browse, private_jwk, running_provider
from tests.e2e.conftest import free_port

OIDC = os.environ.get("ASRAMA_TEST_OIDC")
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.e2e,
    pytest.mark.skipif(not OIDC, reason="ASRAMA_TEST_OIDC is not set (scripts/oidc-provider.sh installs it)"),
]

CALLBACK = "http://127.0.0.1:9/login/callback"  # never visited: the test's person stops at the redirect
CLIENT = {
    "client_id": "asrama-login",
    "client_secret": "rahasia-sekolah-yang-panjang-sekali",
    "redirect_uris": [CALLBACK],
    "token_endpoint_auth_method": "client_secret_basic",
}
DOMAINS = ["Pesantren.sch.id"]


def start_provider(folder: Path, *, id_token_claims: bool) -> Iterator[Provider]:
    assert OIDC
    resource = "http://127.0.0.1:9/mcp"  # the MCP hosts' resource: unused by the login client
    with running_provider(
        OIDC, free_port(), resource, folder, 300, login_client=CLIENT, id_token_claims=id_token_claims
    ) as provider:
        yield provider


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provider]:
    """The provider that puts email in the ID token, as Google and Entra ID do."""
    yield from start_provider(tmp_path_factory.mktemp("oidc-upstream"), id_token_claims=True)


def oidc_login(issuer: str, domains: list[str] = DOMAINS) -> OidcLogin:
    return OidcLogin(
        issuer=issuer,
        client_id=CLIENT["client_id"],
        client_secret=CLIENT["client_secret"],
        callback_url=CALLBACK,
        domains=domains,
    )


@pytest.fixture
async def login(provider: Provider) -> AsyncIterator[OidcLogin]:
    login = oidc_login(provider.issuer)
    yield login
    await login.aclose()


async def sign_in(url: str, person: str, cancel: bool = False) -> dict[str, str]:
    """The query the provider sends the person's browser back to the callback with."""
    pages: list[str] = []
    target = await browse(url, person, CALLBACK, pages, cancel)
    assert pages == ([] if cancel else ["login", "consent"])
    return dict(parse_qsl(urlsplit(target).query))


async def refused(login: OidcLogin, pending: dict[str, str], query: dict[str, str]) -> str:
    with pytest.raises(LoginRefused) as refusal:
        await login.finish(pending, query)
    return refusal.value.reason


async def test_full_sign_in_gives_the_verified_case_folded_email(provider: Provider, login: OidcLogin) -> None:
    provider.set_email("halimah", "Halimah@Pesantren.SCH.id", email_verified=True)
    url, pending = await login.begin()
    params = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
    assert url.startswith(f"{provider.issuer}/auth?")
    assert params["scope"] == "openid email profile" and params["code_challenge_method"] == "S256"
    assert params["state"] == pending["state"] and params["nonce"] == pending["nonce"]
    assert len(pending["state"]) >= 22 and len(pending["nonce"]) >= 22  # >= 128 bits of 62 characters
    query = await sign_in(url, "halimah")
    assert query["iss"] == provider.issuer  # RFC 9207: checked by finish
    assert await login.finish(pending, query) == "halimah@pesantren.sch.id"
    assert await refused(login, pending, query) == "tidak_sah"  # the code is spent


async def test_email_from_userinfo_when_the_id_token_has_none(tmp_path: Path) -> None:
    """As oidc-provider by default (Keycloak can be set so): the ID token has no email, userinfo has it; no
    email_verified at all is accepted (Entra ID sends none)."""
    for provider in start_provider(tmp_path, id_token_claims=False):
        provider.set_email("ridwan", "ridwan@pesantren.sch.id")
        login = oidc_login(provider.issuer)
        try:
            url, pending = await login.begin()
            assert await login.finish(pending, await sign_in(url, "ridwan")) == "ridwan@pesantren.sch.id"
        finally:
            await login.aclose()


async def test_domain_not_allowed_and_nothing_personal_logged(
    provider: Provider, login: OidcLogin, caplog: pytest.LogCaptureFixture
) -> None:
    provider.set_email("budi", "budi.santoso@gmail.com", email_verified=True)
    url, pending = await login.begin()
    query = await sign_in(url, "budi")
    with caplog.at_level(logging.DEBUG):
        assert await refused(login, pending, query) == "domain"
    assert "domain" in caplog.text and "budi" not in caplog.text and query["code"] not in caplog.text


async def test_any_domain_when_none_configured(provider: Provider) -> None:
    provider.set_email("budi", "budi.santoso@gmail.com", email_verified=True)
    login = oidc_login(provider.issuer, domains=[])
    try:
        url, pending = await login.begin()
        assert await login.finish(pending, await sign_in(url, "budi")) == "budi.santoso@gmail.com"
    finally:
        await login.aclose()


async def test_unverified_email_refused(provider: Provider, login: OidcLogin) -> None:
    provider.set_email("zahra", "zahra@pesantren.sch.id", email_verified=False)
    url, pending = await login.begin()
    assert await refused(login, pending, await sign_in(url, "zahra")) == "email_belum_terverifikasi"


async def test_state_mismatch_refused(provider: Provider, login: OidcLogin) -> None:
    provider.set_email("aminah", "aminah@pesantren.sch.id", email_verified=True)
    url, _ = await login.begin()
    _, other = await login.begin()
    assert await refused(login, other, await sign_in(url, "aminah")) == "tidak_sah"


async def test_cancel_at_the_provider(provider: Provider, login: OidcLogin) -> None:
    url, pending = await login.begin()
    query = await sign_in(url, "aminah", cancel=True)
    assert query["error"] == "access_denied" and query["state"] == pending["state"]
    assert await refused(login, pending, query) == "dibatalkan"


async def test_expired_pending_refused(provider: Provider, login: OidcLogin) -> None:
    provider.set_email("aminah", "aminah@pesantren.sch.id", email_verified=True)
    url, pending = await login.begin()
    query = await sign_in(url, "aminah")
    stale = {**pending, "created": str(int(time.time()) - 601)}
    assert await refused(login, stale, query) == "kedaluwarsa"
    assert await login.finish(pending, query) == "aminah@pesantren.sch.id"  # only its age was wrong


async def test_another_sign_ins_nonce_refused(provider: Provider, login: OidcLogin) -> None:
    provider.set_email("aminah", "aminah@pesantren.sch.id", email_verified=True)
    url, pending = await login.begin()
    _, other = await login.begin()
    query = await sign_in(url, "aminah")
    assert await refused(login, {**pending, "nonce": other["nonce"]}, query) == "tidak_sah"


async def test_tampered_id_token_refused(provider: Provider, login: OidcLogin) -> None:
    provider.set_email("aminah", "aminah@pesantren.sch.id", email_verified=True)
    url, pending = await login.begin()
    query = await sign_in(url, "aminah")
    with provider.tampered_id_tokens():
        assert await refused(login, pending, query) == "tidak_sah"


async def test_provider_rotates_its_keys(provider: Provider, login: OidcLogin) -> None:
    provider.set_email("aminah", "aminah@pesantren.sch.id", email_verified=True)
    url, pending = await login.begin()
    assert await login.finish(pending, await sign_in(url, "aminah")) == "aminah@pesantren.sch.id"
    provider.restart([private_jwk("k-next"), *provider.keys])  # a key our cached JWKS does not have signs now
    url, pending = await login.begin()
    assert await login.finish(pending, await sign_in(url, "aminah")) == "aminah@pesantren.sch.id"


async def test_provider_down_or_another_issuer(provider: Provider) -> None:
    for issuer in (f"http://127.0.0.1:{free_port()}", provider.issuer + "/"):
        login = oidc_login(issuer)
        try:
            with pytest.raises(LoginRefused) as refusal:
                await login.begin()
            assert refusal.value.reason == "penyedia_gagal"
        finally:
            await login.aclose()
