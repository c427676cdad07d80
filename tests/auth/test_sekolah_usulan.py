"""The usulan page of a remote server (`--auth sekolah`, channel `halaman`): a host that can neither show the confirm
view nor a form gets a link to `/usulan/<id>` in the result (no secret in it); only the signed-in person the usulan
is for can open it and decide; the decision writes once, audited; a stranger, a request without a session and a
forged form write nothing."""

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.auth.conftest import Mcp
from tests.auth.sekolah_support import (
    Browser,
    put_staff,
    school_service,
    sekolah_server,
    set_password,
    staff,
    tokens_for,
)
from tests.auth.support import MODERN, TIMEOUT, rpc
from tests.conftest import TOKEN
from tests.http_rpc import reply

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]
RIDWAN, HALIMAH, LIHAT = "ridwan@pesantren.sch.id", "halimah@pesantren.sch.id", "lihat@pesantren.sch.id"
SERVICE = {"Authorization": f"Bearer {TOKEN}"}
LINK = re.compile(r"(http://127\.0\.0\.1:\d+/usulan/[A-Za-z0-9_\-]+)")


@pytest.fixture(scope="module")
def school(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    with school_service(tmp_path_factory.mktemp("sekolah")) as (url, db_file):
        put_staff(url, staff(RIDWAN, peran=["musyrif"], kamar=("Al-Fatih 1",), menulis=True))
        put_staff(url, staff(HALIMAH, peran=["musyrif"], kamar=("Al-Fatih 1",), menulis=True))
        put_staff(url, staff(LIHAT, peran=["musyrif"], kamar=("Al-Fatih 1",), menulis=True))
        for email in (RIDWAN, HALIMAH, LIHAT):
            set_password(db_file, email)
        yield url, db_file


@pytest.fixture(scope="module")
def mcp(school: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mcp]:
    folder = tmp_path_factory.mktemp("mcp")
    env = {"ASRAMA_WRITES": "on", "ASRAMA_AUDIT_LOG": str(folder / "audit.jsonl")}
    with sekolah_server(school[0], folder, **env) as server:
        yield server


async def signed_in(mcp: Mcp, email: str) -> tuple[Browser, str]:
    """A person signed in on our pages (their browser keeps the session) and their access token."""
    person = Browser(email)
    tokens, _ = await tokens_for(mcp, email, person)  # the browser stays open: the caller closes it
    return person, tokens["access_token"]


def propose(mcp: Mcp, bearer: str, tanggal: str) -> dict[str, Any]:
    """catat_absensi from a host that declares neither forms nor the Apps view: the result, waiting."""
    arguments = {"tanggal": tanggal, "entri": [{"id_anak": "A001", "status": "hadir"}]}
    body, headers = rpc("tools/call", {"name": "catat_absensi", "arguments": arguments}, era=MODERN)
    answer = httpx2.post(mcp.url, json=body, headers={**headers, "Authorization": f"Bearer {bearer}"}, timeout=TIMEOUT)
    result: dict[str, Any] = reply(answer)["result"]
    assert result["structuredContent"]["hasil"] == "menunggu", result
    return result


def recorded(service_url: str, tanggal: str) -> dict[str, str]:
    answer = httpx2.get(f"{service_url}/absensi", params={"tanggal": tanggal}, headers=SERVICE, timeout=TIMEOUT)
    return {row["id_anak"]: row["status"] for row in answer.json()["data"]}


async def test_the_person_decides_on_the_linked_page(mcp: Mcp, school: tuple[str, Path]) -> None:
    person, bearer = await signed_in(mcp, RIDWAN)
    async with person:
        result = propose(mcp, bearer, "2026-11-02")
        text = result["structuredContent"]["pesan"]
        link = LINK.search(text)
        assert link and "kunci" not in json.dumps(result) and "asrama/usulan" not in result.get("_meta", {})
        page = await person.follow(link.group(1))
        assert page.status_code == 200 and "Setujui" in page.text and "Ahmad Fauzi" in page.text
        assert recorded(school[0], "2026-11-02") == {}
        done = await person.submit(page, keputusan="setuju")
        assert done.status_code == 200 and "sudah dicatat" in done.text
        assert recorded(school[0], "2026-11-02") == {"A001": "hadir"}
        again = await person.submit(page, keputusan="setuju")  # the same form, sent again
        assert again.status_code == 409 and recorded(school[0], "2026-11-02") == {"A001": "hadir"}
    lines = [json.loads(line) for line in (mcp.log.parent / "audit.jsonl").read_text().splitlines()]  # type: ignore[union-attr]
    decided = [line for line in lines if line.get("method") == "usulan/halaman"]
    assert decided and decided[0]["subject"] == RIDWAN and decided[0]["target"] == "catat_absensi"


async def test_no_one_else_and_no_forged_form_decides(mcp: Mcp, school: tuple[str, Path]) -> None:
    owner, bearer = await signed_in(mcp, HALIMAH)
    other, _ = await signed_in(mcp, LIHAT)
    async with owner, other:
        url = LINK.search(propose(mcp, bearer, "2026-11-03")["structuredContent"]["pesan"]).group(1)  # type: ignore[union-attr]
        stranger = await other.follow(url)
        assert stranger.status_code == 404 and "Setujui" not in stranger.text
        path = httpx2.URL(url).path
        forged = await owner.http.post(url, data={"csrf": "palsu", "keputusan": "setuju"})
        assert forged.status_code == 403
        async with httpx2.AsyncClient(timeout=TIMEOUT) as nobody:
            anonymous = await nobody.get(url)
            assert anonymous.status_code == 303 and anonymous.headers["location"] == f"/masuk?lanjut={path}"
            posted = await nobody.post(url, data={"keputusan": "setuju"})
            assert posted.status_code == 403
        assert recorded(school[0], "2026-11-03") == {}
        page = await owner.follow(url)
        declined = await owner.submit(page, keputusan="tolak")
        assert declined.status_code == 200 and "Ditolak" in declined.text
        assert recorded(school[0], "2026-11-03") == {}


async def test_without_a_session_the_page_signs_in_first_and_comes_back(mcp: Mcp, school: tuple[str, Path]) -> None:
    first, bearer = await signed_in(mcp, RIDWAN)
    await first.http.aclose()
    url = LINK.search(propose(mcp, bearer, "2026-11-04")["structuredContent"]["pesan"]).group(1)  # type: ignore[union-attr]
    async with Browser(RIDWAN) as fresh:  # another browser: no session yet
        login = await fresh.follow(url)
        assert login.url.path == "/masuk"
        page = await fresh.submit(login, email=RIDWAN, sandi=fresh.sandi)
        assert page.url.path == httpx2.URL(url).path and "Setujui" in page.text
        done = await fresh.submit(page, keputusan="setuju")
        assert "sudah dicatat" in done.text and recorded(school[0], "2026-11-04") == {"A001": "hadir"}
