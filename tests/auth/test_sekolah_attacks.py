"""`--auth sekolah` refuses what it must, each over real sockets: a replayed code, a reused refresh token (its family
revoked), a token or resource for another server, PKCE missing or `plain`, a redirect URI not registered, a forged
session cookie, a cross-site POST, a guessed password, a deactivated account; and a musyrif's refreshed token follows
his new room."""

import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
import jwt
import pytest
from sqlalchemy import update

from mcp_asrama.service.db import make_engine, make_sessionmaker
from mcp_asrama.service.models.oauth_state import OAuthState
from mcp_asrama.service.models.pengurus import Pengurus
from tests.auth.conftest import Mcp, mcp_process
from tests.auth.sekolah_support import (
    HOST,
    REDIRECT_URI,
    SANDI,
    Browser,
    pkce,
    put_staff,
    query_of,
    school_service,
    sekolah_server,
    set_password,
    sign_in,
    staff,
    token,
    tokens_for,
)
from tests.auth.support import MODERN, TIMEOUT, rpc
from tests.conftest import TOKEN
from tests.e2e.conftest import EXECUTABLE, free_port

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.fixture(scope="module")
def school(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    with school_service(tmp_path_factory.mktemp("sekolah")) as both:
        yield both


@pytest.fixture(scope="module")
def mcp(school: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mcp]:
    with sekolah_server(school[0], tmp_path_factory.mktemp("mcp")) as server:
        yield server


def musyrif(school: tuple[str, Path], email: str, kamar: str = "Al-Fatih 1", **more: Any) -> str:
    put_staff(school[0], staff(email, peran=["musyrif"], kamar=(kamar,), **more))
    set_password(school[1], email)
    return email


def refresh(mcp: Mcp, refresh_token: str, client_id: str) -> httpx2.Response:
    return token(mcp, grant_type="refresh_token", refresh_token=refresh_token, client_id=client_id)


def students(mcp: Mcp, access_token: str) -> httpx2.Response:
    body, headers = rpc("tools/call", {"name": "cari_anak", "arguments": {}}, era=MODERN)
    headers["Authorization"] = f"Bearer {access_token}"
    return httpx2.post(mcp.url, json=body, headers=headers, timeout=TIMEOUT)


def ids(answer: httpx2.Response) -> set[str]:
    assert answer.status_code == 200, answer.text[:300]
    return {row["id"] for row in answer.json()["result"]["structuredContent"]["data"]}


async def test_a_refreshed_token_follows_the_new_room(mcp: Mcp, school: tuple[str, Path]) -> None:
    email = musyrif(school, "pindah@pesantren.sch.id")
    first, client_id = await tokens_for(mcp, email)
    assert ids(students(mcp, first["access_token"])) == {"A001", "A002"}
    put_staff(school[0], staff(email, peran=["musyrif"], kamar=("Aisyah 2",)))
    second = refresh(mcp, first["refresh_token"], client_id).json()
    assert ids(students(mcp, second["access_token"])) == {"A003"}
    assert jwt.decode(second["access_token"], options={"verify_signature": False})["asrama_scope"] == ["kamar:Aisyah 2"]
    assert second["refresh_token"] != first["refresh_token"]  # rotated


async def test_a_reused_refresh_token_revokes_its_family(mcp: Mcp, school: tuple[str, Path]) -> None:
    first, client_id = await tokens_for(mcp, musyrif(school, "curian@pesantren.sch.id"))
    second = refresh(mcp, first["refresh_token"], client_id).json()
    reused = refresh(mcp, first["refresh_token"], client_id)  # the thief (or the owner) replays the old one
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    assert refresh(mcp, second["refresh_token"], client_id).json()["error"] == "invalid_grant"  # family gone
    assert students(mcp, second["access_token"]).status_code == 401  # and its access token with it


async def test_a_replayed_code_is_refused_and_revokes_what_it_gave(mcp: Mcp, school: tuple[str, Path]) -> None:
    answer, client_id, verifier = await sign_in(mcp, musyrif(school, "kode@pesantren.sch.id"))
    form = {"grant_type": "authorization_code", "code": query_of(answer)["code"], "client_id": client_id}
    form |= {"code_verifier": verifier, "redirect_uri": REDIRECT_URI}
    first = token(mcp, **form)
    assert first.status_code == 200
    again = token(mcp, **form)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert students(mcp, first.json()["access_token"]).status_code == 401


async def test_a_resource_of_another_server_gets_no_code(mcp: Mcp, school: tuple[str, Path]) -> None:
    answer, _, _ = await sign_in(mcp, musyrif(school, "lain@pesantren.sch.id"), resource="https://lain.example/mcp")
    assert query_of(answer)["error"] == "invalid_target"


async def test_a_token_of_another_server_is_refused(
    mcp: Mcp, school: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    port = free_port()
    flags = ["--auth", "sekolah", "--public-url", f"http://127.0.0.1:{port}/mcp"]
    env = {"ASRAMA_API_URL": school[0], "ASRAMA_API_TOKEN": TOKEN}
    with mcp_process(flags, env, tmp_path_factory.mktemp("other"), port) as other:
        theirs, _ = await tokens_for(other, musyrif(school, "tamu@pesantren.sch.id"))
        assert ids(students(other, theirs["access_token"])) == {"A001", "A002"}
    # Same service, same signing keys: only the issuer and the audience say it is not ours.
    assert students(mcp, theirs["access_token"]).status_code == 401


@pytest.mark.parametrize(
    "pkce_params", [{"code_challenge_method": "plain"}, {"code_challenge": ""}, {"code_challenge": None}]
)
async def test_pkce_missing_or_plain_is_refused(
    mcp: Mcp, school: tuple[str, Path], pkce_params: dict[str, str | None]
) -> None:
    answer, _, _ = await sign_in(mcp, musyrif(school, "pkce@pesantren.sch.id"), **pkce_params)
    if answer.is_redirect:
        assert query_of(answer)["error"] == "invalid_request" and "code" not in query_of(answer)
    else:
        assert answer.status_code == 400


async def test_a_redirect_uri_not_registered_is_never_followed(mcp: Mcp, school: tuple[str, Path]) -> None:
    answer, _, _ = await sign_in(mcp, musyrif(school, "alih@pesantren.sch.id"), redirect_uri="https://evil.example/cb")
    assert answer.status_code == 400 and "location" not in answer.headers


async def test_a_forged_session_cookie_finds_no_session(mcp: Mcp) -> None:
    async with httpx2.AsyncClient(timeout=TIMEOUT, cookies={"asrama_sesi": "dipalsukan"}) as browser:
        shown = await browser.get(f"{mcp.base}/izin", params={"permintaan": "x"})
        assert shown.status_code == 303 and shown.headers["location"].startswith("/masuk")
        posted = await browser.post(f"{mcp.base}/izin", data={"permintaan": "x", "csrf": "c", "keputusan": "izinkan"})
        assert posted.status_code == 403 and "code=" not in posted.headers.get("location", "")


async def test_a_cross_site_post_is_refused(mcp: Mcp) -> None:
    headers = {"Origin": "https://evil.example"}
    for path in ("/masuk", "/izin"):
        answer = httpx2.post(f"{mcp.base}{path}", data={"permintaan": "x"}, headers=headers, timeout=TIMEOUT)
        assert answer.status_code == 403


async def test_a_guessed_password_locks_the_account(mcp: Mcp, school: tuple[str, Path]) -> None:
    email = musyrif(school, "tebak@pesantren.sch.id")
    _, challenge = pkce()
    async with Browser(email) as person:
        client_id = (await person.http.post(f"{mcp.base}/register", json=HOST)).json()["client_id"]
        params = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT_URI}
        url = str(httpx2.URL(f"{mcp.base}/authorize", params={**params, "code_challenge": challenge}))
        login = await person.follow(url)
        for guess in range(20):
            page = await person.submit(login, email=email, sandi=f"tebakan-{guess}")
            assert page.status_code in (401, 403) and "code=" not in page.headers.get("location", "")
        locked = await person.submit(login, email=email, sandi=SANDI)  # the right password, while locked
        assert locked.status_code == 403 and "dikunci" in locked.text
        engine = make_engine(f"sqlite:///{school[1]}")  # the lock ends (as time would end it)
        with make_sessionmaker(engine)() as session, session.begin():
            past = datetime.now(UTC) - timedelta(seconds=1)
            session.execute(update(Pengurus).where(Pengurus.email == email).values(terkunci_sampai=past))
        engine.dispose()
        opened = await person.submit(login, email=email, sandi=SANDI)
        assert opened.status_code == 200 and opened.url.path == "/izin"


async def test_a_deactivated_account_is_refused_at_refresh_and_sign_in(mcp: Mcp, school: tuple[str, Path]) -> None:
    email = musyrif(school, "keluar@pesantren.sch.id")
    first, client_id = await tokens_for(mcp, email)
    answer = httpx2.post(f"{school[0]}/pengurus/{email}/nonaktif", headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 200
    assert refresh(mcp, first["refresh_token"], client_id).json()["error"] == "invalid_grant"
    assert students(mcp, first["access_token"]).status_code == 401  # signed out at once, not in 10 minutes
    page, _, _ = await sign_in(mcp, email)
    assert page.status_code == 403 and "belum terdaftar sebagai pengurus" in page.text


async def test_revoking_the_refresh_token_ends_the_access_token(mcp: Mcp, school: tuple[str, Path]) -> None:
    tokens, client_id = await tokens_for(mcp, musyrif(school, "cabut@pesantren.sch.id"))
    form = {"token": tokens["refresh_token"], "client_id": client_id, "client_secret": ""}
    assert httpx2.post(f"{mcp.base}/revoke", data=form, timeout=TIMEOUT).status_code == 200
    assert students(mcp, tokens["access_token"]).status_code == 401
    assert refresh(mcp, tokens["refresh_token"], client_id).json()["error"] == "invalid_grant"


async def test_pengurus_sesi_cabut_ends_a_persons_sessions_and_tokens(mcp: Mcp, school: tuple[str, Path]) -> None:
    email = musyrif(school, "sesi@pesantren.sch.id")
    tokens, client_id = await tokens_for(mcp, email)
    command = [EXECUTABLE, "pengurus", "sesi", email.upper(), "--buat", "--db", f"sqlite:///{school[1]}"]
    seen = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    assert seen.stdout.strip().startswith(f"{email}: 2 live sign-in(s)")  # the browser's session, the grant
    ended = subprocess.run([*command, "--cabut"], capture_output=True, text=True, timeout=60, check=True)
    assert "ended every session and token" in ended.stdout
    assert students(mcp, tokens["access_token"]).status_code == 401
    assert refresh(mcp, tokens["refresh_token"], client_id).json()["error"] == "invalid_grant"
    again = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    assert again.stdout.strip().startswith(f"{email}: 0 live sign-in(s)")


async def test_replicas_share_codes_tokens_and_keys(
    mcp: Mcp, school: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A second process behind the same public URL (a replica): a code made on one is exchanged on the other, and
    each accepts and refreshes what the other issued (the state and the signing keys live in the service)."""
    port = free_port()
    flags = ["--auth", "sekolah", "--public-url", mcp.public_url]
    env = {"ASRAMA_API_URL": school[0], "ASRAMA_API_TOKEN": TOKEN}
    with mcp_process(flags, env, tmp_path_factory.mktemp("replica"), port) as replica:
        answer, client_id, verifier = await sign_in(mcp, musyrif(school, "replika@pesantren.sch.id"))
        form = {"grant_type": "authorization_code", "code": query_of(answer)["code"], "client_id": client_id}
        got = token(replica, **form, code_verifier=verifier, redirect_uri=REDIRECT_URI)
        assert got.status_code == 200, got.text
        assert ids(students(mcp, got.json()["access_token"])) == {"A001", "A002"}
        again = refresh(mcp, got.json()["refresh_token"], client_id).json()
        assert ids(students(replica, again["access_token"])) == {"A001", "A002"}
        assert refresh(replica, got.json()["refresh_token"], client_id).json()["error"] == "invalid_grant"  # used


async def test_an_expired_session_is_no_session(mcp: Mcp, school: tuple[str, Path]) -> None:
    email = musyrif(school, "basi@pesantren.sch.id")
    async with Browser(email) as person:
        await sign_in(mcp, email, person=person)  # signed in: the browser holds a session
        engine = make_engine(f"sqlite:///{school[1]}")  # twelve hours pass
        with make_sessionmaker(engine)() as session, session.begin():
            past = datetime.now(UTC) - timedelta(seconds=1)
            session.execute(update(OAuthState).where(OAuthState.kind == "sesi").values(expires_at=past))
        engine.dispose()
        shown = await person.http.get(f"{mcp.base}/izin", params={"permintaan": "x"})
        assert shown.status_code == 303 and shown.headers["location"].startswith("/masuk")


async def test_registration_is_limited_per_address(
    school: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    with sekolah_server(school[0], tmp_path_factory.mktemp("register")) as server:  # its own limits
        answers = [httpx2.post(f"{server.base}/register", json=HOST, timeout=TIMEOUT).status_code for _ in range(101)]
    assert answers[:100] == [201] * 100 and answers[100] == 429
