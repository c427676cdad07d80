"""The school's own sign-in under test: a data service (a real process) with staff and passwords, our server with
`--auth sekolah`, and a person at a browser who signs in and consents on our pages (an HTTP client keeping cookies)."""

import base64
import hashlib
import re
import secrets
from dataclasses import dataclass, field
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
from mcp.shared.auth import AuthorizationCodeResult

from mcp_asrama.service.crud import pengurus as crud
from mcp_asrama.service.db import make_engine, make_sessionmaker
from tests.auth.support import TIMEOUT
from tests.conftest import TOKEN

FORM = re.compile(r'<form method="post" action="([^"]+)">(.*?)</form>', re.S)
HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')
REDIRECT_URI = "http://127.0.0.1:9/callback"  # never visited: the person stops at the redirect
SANDI = "sandi-yang-panjang-sekali"


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
