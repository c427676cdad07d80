"""`--auth sekolah`'s pages in a real browser: headless Chromium (over CDP, `ASRAMA_TEST_CHROMIUM`) starts at the
authorization URL of a client registered with POST /register (PKCE S256), types the email and password into the
login page, clicks "Masuk", then "Izinkan" (or "Tolak") on the consent page, and lands on the client's redirect URI
(a tiny HTTP server of the test that records the query). Also watched: every request the pages make (none leaves
our server and the client's), their Content-Security-Policy, console and CSP errors, and the session cookie."""

import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import jwt
import pytest

from tests.auth.conftest import Mcp
from tests.auth.sekolah_support import one_musyrif, pkce
from tests.auth.support import TIMEOUT
from tests.e2e.chromium import Browser, browser
from tests.e2e.conftest import free_port

CHROMIUM = os.environ.get("ASRAMA_TEST_CHROMIUM")
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not CHROMIUM, reason="ASRAMA_TEST_CHROMIUM is not set (scripts/chromium-for-tests.sh)"),
]
RIDWAN = "ridwan@pesantren.sch.id"
SANDI = "sandi-peramban-yang-panjang"
CLIENT_NAME = "Uji Peramban"
BUTTON = "[...document.querySelectorAll('button')].find((b) => b.textContent.trim() === {!r})"
CONSENT = "[...document.querySelectorAll('main li')].map((li) => li.textContent)"


@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mcp]:
    """The data service with the tutorial's data and a musyrif with a password, and our `--auth sekolah` server."""
    with one_musyrif(tmp_path_factory.mktemp("sekolah"), RIDWAN, SANDI) as server:
        yield server


@dataclass
class Callback:
    """The client's redirect URI: a tiny HTTP server that records the query of every request it gets."""

    url: str
    queries: list[dict[str, str]] = field(default_factory=list)

    def wait(self, seconds: float = 30) -> dict[str, str]:
        deadline = time.monotonic() + seconds
        while not self.queries:
            assert time.monotonic() < deadline, "the browser never reached the redirect URI"
            time.sleep(0.05)
        [query] = self.queries
        return query


@pytest.fixture
def callback() -> Iterator[Callback]:
    port = free_port()
    landed = Callback(f"http://127.0.0.1:{port}/callback")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path == "/callback":
                landed.queries.append({k: v[0] for k, v in parse_qs(parts.query).items()})
            self.send_response(200 if parts.path == "/callback" else 404)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.end_headers()
            self.wfile.write(b"kembali ke aplikasi")

        def log_message(self, *_args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield landed
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def authorization(mcp: Mcp, redirect_uri: str) -> tuple[str, str, str]:
    """Register a client as a host does and build its authorization URL: (the URL, its client id, the verifier)."""
    client = {"client_name": CLIENT_NAME, "redirect_uris": [redirect_uri], "token_endpoint_auth_method": "none"}
    registered = httpx2.post(f"{mcp.base}/register", json=client, timeout=TIMEOUT)
    assert registered.status_code == 201, registered.text
    verifier, challenge = pkce()
    params = {
        "response_type": "code",
        "client_id": registered.json()["client_id"],
        "redirect_uri": redirect_uri,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "keadaan-1",
        "scope": "asrama:read asrama:write",
        "resource": mcp.public_url,
    }
    return str(httpx2.URL(f"{mcp.base}/authorize", params=params)), params["client_id"], verifier


def click(chrome: Browser, element: str) -> None:
    """A mouse click in the middle of `element` (a JS expression), where the browser draws it."""
    box = chrome.evaluate(
        f"(() => {{ const r = ({element}).getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; }})()"
    )
    chrome.click(box[0] + box[2] / 2, box[1] + box[3] / 2)


def type_into(chrome: Browser, name: str, text: str) -> None:
    """Focus the input named `name` and type `text` as a keyboard would."""
    chrome.evaluate(f"document.querySelector('input[name={name}]').focus()")
    chrome.send("Input.insertText", session=chrome.session, text=text)


def sign_in(chrome: Browser, url: str) -> None:
    """At the authorization URL: the login page appears; type the email and password, click "Masuk"."""
    chrome.send("Page.navigate", session=chrome.session, url=url)
    chrome.wait_for("location.pathname === '/masuk' && !!document.querySelector('input[name=sandi]')")
    type_into(chrome, "email", RIDWAN)
    type_into(chrome, "sandi", SANDI)
    click(chrome, BUTTON.format("Masuk"))


def until_consent(chrome: Browser, mcp: Mcp, url: str) -> list[str]:
    """From the authorization URL through the login page to the consent page: what the consent page lists."""
    sign_in(chrome, url)  # the browser's own form POST, its Origin as it sends it
    chrome.wait_for(f"location.pathname === '/izin' && !!({BUTTON.format('Izinkan')})")
    return list(chrome.evaluate(CONSENT))


def network(chrome: Browser) -> tuple[list[str], dict[str, dict[str, str]]]:
    """Every URL the page asked for, and the headers (lower-case names) of each document our server answered."""
    chrome.evaluate("0")  # flush the events sent so far
    urls, documents = [], {}
    for event in chrome.events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Network.requestWillBeSent":
            urls.append(params["request"]["url"])
        elif method == "Network.responseReceived" and params["type"] == "Document":
            headers = {k.lower(): v for k, v in params["response"]["headers"].items()}
            documents[urlsplit(params["response"]["url"]).path] = headers
    return urls, documents


def page_errors(chrome: Browser) -> list[str]:
    """Console errors, exceptions and CSP violations, but the favicon's 404 (the pages have none; Chromium asks)."""
    errors = chrome.errors
    for event in chrome.events:
        entry = event.get("params", {}).get("entry", {})
        if event.get("method") == "Log.entryAdded" and entry.get("url", "").endswith("/favicon.ico"):
            errors.remove(entry["text"])
    return errors


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def test_a_musyrif_signs_in_and_allows_in_chromium(mcp: Mcp, callback: Callback, tmp_path: Path) -> None:
    url, client_id, verifier = authorization(mcp, callback.url)
    assert CHROMIUM is not None
    with browser(CHROMIUM, tmp_path / "profile") as chrome:
        chrome.send("Network.enable", session=chrome.session)
        consent = until_consent(chrome, mcp, url)
        shown = chrome.evaluate("document.querySelector('main').textContent")
        click(chrome, BUTTON.format("Izinkan"))
        query = callback.wait()
        chrome.wait_for(f"location.href.startsWith({callback.url!r})")
        cookies = chrome.send("Network.getCookies", session=chrome.session, urls=[mcp.base])["cookies"]
        urls, documents = network(chrome)
        errors = page_errors(chrome)
    issuer = httpx2.get(f"{mcp.base}/.well-known/oauth-authorization-server", timeout=TIMEOUT).json()["issuer"]
    assert set(query) == {"code", "state", "iss"} and (query["state"], query["iss"]) == ("keadaan-1", issuer)
    assert consent == ["data kamar Al-Fatih 1", "boleh mencatat"]
    assert f"{CLIENT_NAME} meminta akses atas nama {RIDWAN}" in shown
    assert errors == []  # no console error, no CSP violation
    # Nothing loaded from elsewhere: only our server's pages and the client's redirect URI were ever asked for.
    assert {origin(u) for u in urls} == {mcp.base, origin(callback.url)}
    for path in ("/masuk", "/izin"):
        policy = documents[path]["content-security-policy"]
        assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy, policy
    assert f"form-action 'self' {origin(callback.url)}" in documents["/izin"]["content-security-policy"]
    [session] = [c for c in cookies if c["name"] == "asrama_sesi"]  # loopback: no __Host- prefix, not Secure
    assert session["httpOnly"] and session["sameSite"] == "Lax" and session["path"] == "/"
    assert not [c for c in cookies if c["name"] == "asrama_form"]  # the login form's token ended with sign-in
    form = {"grant_type": "authorization_code", "code": query["code"], "client_id": client_id}
    form |= {"code_verifier": verifier, "redirect_uri": callback.url, "resource": mcp.public_url}
    tokens = httpx2.post(f"{mcp.base}/token", data=form, timeout=TIMEOUT)
    assert tokens.status_code == 200, tokens.text
    claims = jwt.decode(tokens.json()["access_token"], options={"verify_signature": False})
    assert (claims["sub"], claims["asrama_scope"]) == (RIDWAN, ["kamar:Al-Fatih 1"])


def test_tolak_sends_access_denied_and_no_code(mcp: Mcp, callback: Callback, tmp_path: Path) -> None:
    url, _, _ = authorization(mcp, callback.url)
    assert CHROMIUM is not None
    with browser(CHROMIUM, tmp_path / "profile") as chrome:
        until_consent(chrome, mcp, url)
        click(chrome, BUTTON.format("Tolak"))
        query = callback.wait()
        errors = page_errors(chrome)
    assert query["error"] == "access_denied" and query["state"] == "keadaan-1" and "code" not in query
    assert errors == []
