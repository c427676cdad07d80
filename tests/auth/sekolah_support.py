"""The school's own sign-in under test: a data service (a real process) with staff and passwords, our server with
`--auth sekolah`, and a person at a browser who signs in and consents on our pages (an HTTP client keeping cookies)."""

import base64
import hashlib
import re
import secrets
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from mcp_asrama.service.crud import pengurus as crud
from mcp_asrama.service.db import make_engine, make_sessionmaker
from tests.auth.conftest import Mcp, mcp_process
from tests.auth.oidc.support import Memory
from tests.auth.support import MODERN, TIMEOUT
from tests.conftest import TOKEN, TUTORIAL_ABSENSI, TUTORIAL_ANAK, TUTORIAL_KAMAR, insert_rows
from tests.e2e.conftest import EXECUTABLE, clean_env, free_port, start, stop, wait_until_up
from tests.server.support import call_ok

FORM = re.compile(r'<form method="post" action="([^"]+)">(.*?)</form>', re.S)
HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')
REDIRECT_URI = "http://127.0.0.1:9/callback"  # never visited: the person stops at the redirect
SANDI = "sandi-yang-panjang-sekali"
HOST = {
    "client_name": "Uji",
    "redirect_uris": [REDIRECT_URI],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
}


@contextmanager
def school_service(folder: Path) -> Iterator[tuple[str, Path]]:
    """The data service (a process) with the tutorial's data: its URL and its database file."""
    db_file = folder / "asrama.db"
    insert_rows(f"sqlite:///{db_file}", kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK, absensi=TUTORIAL_ABSENSI)
    port = free_port()
    log = folder / "service.log"
    env = clean_env(ASRAMA_SERVICE_TOKEN=TOKEN, XDG_DATA_HOME=str(folder))
    process = start([EXECUTABLE, "service", "--port", str(port), "--buat", "--db", f"sqlite:///{db_file}"], env, log)
    try:
        wait_until_up(port, process, log)
        yield f"http://127.0.0.1:{port}", db_file
    finally:
        stop(process)


@contextmanager
def sekolah_server(service_url: str, folder: Path, port: int | None = None, **env: str) -> Iterator[Mcp]:
    """`mcp-asrama serve --transport http --auth sekolah` (a process) on `port` (else a free one), its public URL its
    own, `env` added to its environment."""
    port = port or free_port()
    flags = ["--auth", "sekolah", "--public-url", f"http://127.0.0.1:{port}/mcp"]
    with mcp_process(flags, {"ASRAMA_API_URL": service_url, "ASRAMA_API_TOKEN": TOKEN, **env}, folder, port) as mcp:
        yield mcp


@contextmanager
def one_musyrif(folder: Path, email: str, sandi: str = SANDI) -> Iterator[Mcp]:
    """The data service with the tutorial's data and one musyrif of Al-Fatih 1 (who may record) with a password,
    and our `--auth sekolah` server in front of it."""
    with school_service(folder) as (url, db_file):
        put_staff(url, staff(email, peran=["musyrif"], kamar=("Al-Fatih 1",), menulis=True))
        set_password(db_file, email, sandi)
        with sekolah_server(url, folder) as mcp:
            yield mcp


def staff(email: str, *, peran: list[str], kamar: tuple[str, ...] = (), **more: Any) -> dict[str, Any]:
    """A staff record as `PUT /pengurus/{email}` takes it."""
    return {"email": email, "nama": email.split("@")[0], "peran": peran, "kamar": list(kamar), **more}


def put_staff(service_url: str, record: dict[str, Any]) -> None:
    response = httpx2.put(
        f"{service_url}/pengurus/{record['email']}", json=record, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert response.status_code in (200, 201), response.text


def set_password(db_file: Path, email: str, sandi: str = SANDI) -> None:
    engine = make_engine(f"sqlite:///{db_file}")
    with make_sessionmaker(engine)() as session, session.begin():
        assert crud.set_sandi(session, email, sandi)
    engine.dispose()


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def form_of(page: str) -> tuple[str, dict[str, str]]:
    match = FORM.search(page)
    assert match, page[:800]
    return match.group(1), {name: unescape(value) for name, value in HIDDEN.findall(match.group(2))}


@dataclass
class Browser:
    """A person at a browser on our pages: signs in with email and password, then decides on the consent page."""

    email: str
    sandi: str = SANDI
    keputusan: str = "izinkan"
    pages: list[tuple[int, str]] = field(default_factory=list)  # (status, path) of every page shown
    http: httpx2.AsyncClient = field(default_factory=lambda: httpx2.AsyncClient(timeout=TIMEOUT))
    result: AuthorizationCodeResult | None = None

    async def __aenter__(self) -> "Browser":
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.http.aclose()

    async def follow(self, url: str) -> httpx2.Response:
        """GET `url` and follow redirects on our server; stops at a page or at the client's redirect URI."""
        response = await self.http.get(url)
        while response.is_redirect:
            target = urljoin(str(response.url), response.headers["location"])
            if target.startswith(REDIRECT_URI):
                return response
            response = await self.http.get(target)
        self.pages.append((response.status_code, response.url.path))
        return response

    async def submit(self, page: httpx2.Response, **fields: str) -> httpx2.Response:
        action, hidden = form_of(page.text)
        response = await self.http.post(urljoin(str(page.url), action), data={**hidden, **fields})
        if response.is_redirect:
            target = urljoin(str(response.url), response.headers["location"])
            return response if target.startswith(REDIRECT_URI) else await self.follow(target)
        self.pages.append((response.status_code, response.url.path))
        return response

    async def sign_in(self, authorize_url: str) -> httpx2.Response:
        """From the authorization URL to the redirect back to the client (or the page that refused)."""
        page = await self.follow(authorize_url)
        if page.url.path == "/masuk" and page.status_code == 200:
            page = await self.submit(page, email=self.email, sandi=self.sandi)
        if page.url.path == "/izin" and page.status_code == 200:
            page = await self.submit(page, keputusan=self.keputusan)
        return page

    async def redirect_handler(self, url: str) -> None:
        answer = await self.sign_in(url)
        assert answer.is_redirect, (answer.status_code, answer.text[:500])
        query = parse_qs(urlsplit(answer.headers["location"]).query)
        self.result = AuthorizationCodeResult(
            code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
        )

    async def callback_handler(self) -> AuthorizationCodeResult:
        assert self.result is not None, "no authorization code reached the redirect URI"
        result, self.result = self.result, None
        return result


async def sign_in(
    mcp: Mcp, email: str, *, person: Browser | None = None, **extra: str | None
) -> tuple[httpx2.Response, str, str]:
    """A registered client's person signs in (in `person`'s browser, kept open, or a new one): (the redirect or
    refusal, the client id, the PKCE verifier)."""
    verifier, challenge = pkce()
    async with AsyncExitStack() as stack:
        if person is None:
            person = await stack.enter_async_context(Browser(email))
        client_id = (await person.http.post(f"{mcp.base}/register", json=HOST)).json()["client_id"]
        params = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT_URI,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "s1",
            "scope": "asrama:read asrama:write",
            "resource": mcp.public_url,
            **extra,
        }
        sent = {name: value for name, value in params.items() if value is not None}
        answer = await person.sign_in(str(httpx2.URL(f"{mcp.base}/authorize", params=sent)))
    return answer, client_id, verifier


def query_of(answer: httpx2.Response) -> dict[str, str]:
    assert answer.is_redirect, (answer.status_code, answer.text[:300])
    return {k: v[0] for k, v in parse_qs(urlsplit(answer.headers["location"]).query).items()}


def token(mcp: Mcp, **form: str) -> httpx2.Response:
    return httpx2.post(f"{mcp.base}/token", data=form, timeout=TIMEOUT)


async def tokens_for(mcp: Mcp, email: str, person: Browser | None = None) -> tuple[dict[str, Any], str]:
    """Signed in, the code exchanged: (the token response, the client id)."""
    answer, client_id, verifier = await sign_in(mcp, email, person=person)
    code = query_of(answer)["code"]
    got = token(
        mcp,
        grant_type="authorization_code",
        code=code,
        client_id=client_id,
        code_verifier=verifier,
        redirect_uri=REDIRECT_URI,
        resource=mcp.public_url,
    )
    assert got.status_code == 200, got.text
    return got.json(), client_id


@asynccontextmanager
async def host(mcp: Mcp, person: Browser, storage: Memory, document_url: str | None = None) -> AsyncIterator[Client]:
    """The SDK's client with its OAuth support, as a host: `person` signs in when asked; with `document_url` it
    names its client ID metadata document instead of registering."""
    metadata = OAuthClientMetadata.model_validate({**HOST, "client_name": "Claude"})
    oauth = OAuthClientProvider(
        mcp.url, metadata, storage, person.redirect_handler, person.callback_handler, client_metadata_url=document_url
    )
    async with (
        person,
        httpx2.AsyncClient(auth=oauth, timeout=TIMEOUT) as http,
        Client(streamable_http_client(mcp.url, http_client=http), mode=MODERN, cache=None) as client,
    ):
        yield client


async def students(client: Client) -> set[str]:
    """The ids `cari_anak` shows."""
    return {row["id"] for row in (await call_ok(client, "cari_anak", {}))["data"]}


async def authorize_url(http: httpx2.AsyncClient, mcp: Mcp, **extra: str) -> str:
    """Register a client and build its authorization URL (PKCE S256, for this resource), as a host would."""
    registered = (await http.post(f"{mcp.base}/register", json=HOST)).json()
    params = {
        "response_type": "code",
        "client_id": registered["client_id"],
        "redirect_uri": REDIRECT_URI,
        "code_challenge": "x" * 43,
        "code_challenge_method": "S256",
        "state": "s1",
        "resource": mcp.public_url,
        **extra,
    }
    return str(httpx2.URL(f"{mcp.base}/authorize", params=params))
