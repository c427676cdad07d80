"""The remote usulan page as a URL-mode elicitation (`--auth sekolah`, `ASRAMA_KONFIRMASI=halaman`): a 2026-07-28 host
that declares URL elicitation gets `elicitation/create` with `mode: "url"` and the page's URL (no secret in it); the
signed-in person decides on the page, which writes once; the retry only reports how the usulan stands (written,
waiting, or not opened), for the usulan's own subject; any other host still gets the link in the result."""

import json
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata
from mcp_types import ElicitRequestURLParams, ElicitResult

from tests.auth.conftest import Mcp
from tests.auth.oidc.support import Memory
from tests.auth.sekolah_support import HOST, Browser, put_staff, school_service, sekolah_server, set_password, staff
from tests.auth.sekolah_support import tokens_for as sign_in_for
from tests.auth.support import MODERN, TIMEOUT, rpc
from tests.conftest import TOKEN
from tests.http_rpc import reply

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]
RIDWAN, HALIMAH = "ridwan@pesantren.sch.id", "halimah@pesantren.sch.id"
SERVICE = {"Authorization": f"Bearer {TOKEN}"}
PAGE = re.compile(r"^http://127\.0\.0\.1:\d+/usulan/([A-Za-z0-9_\-]{16,64})$")
URL_ONLY = {"elicitation": {"url": {}}}


@pytest.fixture(scope="module")
def school(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    with school_service(tmp_path_factory.mktemp("sekolah")) as (url, db_file):
        for email in (RIDWAN, HALIMAH):
            put_staff(url, staff(email, peran=["musyrif"], kamar=("Al-Fatih 1",), menulis=True))
            set_password(db_file, email)
        yield url, db_file


@pytest.fixture(scope="module")
def mcp(school: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mcp]:
    folder = tmp_path_factory.mktemp("mcp")
    env = {"ASRAMA_WRITES": "on", "ASRAMA_KONFIRMASI": "halaman", "ASRAMA_AUDIT_LOG": str(folder / "audit.jsonl")}
    with sekolah_server(school[0], folder, **env) as server:
        yield server


async def signed_in(mcp: Mcp, email: str) -> tuple[Browser, str]:
    """A person signed in on our pages (the browser keeps the session; the caller closes it) and their token."""
    person = Browser(email)
    tokens, _ = await sign_in_for(mcp, email, person)
    return person, tokens["access_token"]


def arguments(tanggal: str) -> dict[str, Any]:
    return {"tanggal": tanggal, "entri": [{"id_anak": "A001", "status": "hadir"}]}


def call(
    mcp: Mcp, bearer: str, tanggal: str, capabilities: dict[str, Any], era: str = MODERN, **more: Any
) -> dict[str, Any]:
    """One raw `tools/call` of catat_absensi declaring `capabilities` (2026-07-28), `more` added to its params: the
    JSON-RPC response."""
    body, headers = rpc("tools/call", {"name": "catat_absensi", "arguments": arguments(tanggal), **more}, era=era)
    if era == MODERN:
        body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = capabilities
    answer = httpx2.post(mcp.url, json=body, headers={**headers, "Authorization": f"Bearer {bearer}"}, timeout=TIMEOUT)
    return reply(answer)


def asked_url(response: dict[str, Any]) -> tuple[str, str, str]:
    """The URL elicitation of an `input_required` answer: (its key, the page's URL, the requestState)."""
    result = response["result"]
    assert result["resultType"] == "input_required", result
    [(key, request)] = result["inputRequests"].items()
    params = request["params"]
    assert request["method"] == "elicitation/create" and params["mode"] == "url", request
    match = PAGE.match(params["url"])
    assert match and "Buka halaman ini" in params["message"], params
    assert "Ahmad" not in json.dumps(result) and "kunci" not in json.dumps(result)  # no one named, no secret
    return key, params["url"], result["requestState"]


def retry(mcp: Mcp, bearer: str, tanggal: str, asked: tuple[str, str, str], action: str) -> dict[str, Any]:
    key, _, state = asked
    responses = {key: {"action": action}}
    return call(mcp, bearer, tanggal, URL_ONLY, inputResponses=responses, requestState=state)


def recorded(service_url: str, tanggal: str) -> dict[str, str]:
    answer = httpx2.get(f"{service_url}/absensi", params={"tanggal": tanggal}, headers=SERVICE, timeout=TIMEOUT)
    return {row["id_anak"]: row["status"] for row in answer.json()["data"]}


def history(service_url: str, tanggal: str) -> list[dict[str, Any]]:
    answer = httpx2.get(f"{service_url}/absensi/{tanggal}/A001/riwayat", headers=SERVICE, timeout=TIMEOUT)
    data: list[dict[str, Any]] = answer.json()["data"]
    return data


def audit_lines(mcp: Mcp) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (mcp.log.parent / "audit.jsonl").read_text().splitlines()]  # type: ignore[union-attr]


async def decide(person: Browser, url: str, keputusan: str = "setuju") -> httpx2.Response:
    page = await person.follow(url)
    assert page.status_code == 200 and "Ahmad Fauzi" in page.text, page.text[:300]
    return await person.submit(page, keputusan=keputusan)


async def test_a_url_host_opens_the_page_and_the_retry_reports_it_written_once(
    mcp: Mcp, school: tuple[str, Path]
) -> None:
    person, bearer = await signed_in(mcp, RIDWAN)
    async with person:
        asked = asked_url(call(mcp, bearer, "2026-11-10", URL_ONLY))
        assert recorded(school[0], "2026-11-10") == {}
        done = await decide(person, asked[1])
        assert done.status_code == 200 and "sudah dicatat" in done.text
    written = retry(mcp, bearer, "2026-11-10", asked, "accept")["result"]
    hasil = written["structuredContent"]
    assert hasil["hasil"] == "ditulis" and hasil["jumlah"] == 1 and hasil["id_usulan"] == PAGE.match(asked[1]).group(1)  # type: ignore[union-attr]
    again = retry(mcp, bearer, "2026-11-10", asked, "accept")  # the same retry sent twice: refused, nothing more
    assert again["error"]["code"] == -32602
    assert recorded(school[0], "2026-11-10") == {"A001": "hadir"} and len(history(school[0], "2026-11-10")) == 1
    id_usulan = hasil["id_usulan"]
    accepted = [
        line
        for line in audit_lines(mcp)
        if (line.get("arguments") or {}).get("id_usulan") == id_usulan
        and line.get("write", {}).get("confirmation") == "accepted"
    ]
    assert len(accepted) == 1 and accepted[0]["method"] == "usulan/halaman" and accepted[0]["subject"] == RIDWAN


async def test_waiting_or_not_opened_writes_nothing_and_says_the_page_still_decides(
    mcp: Mcp, school: tuple[str, Path]
) -> None:
    person, bearer = await signed_in(mcp, RIDWAN)
    async with person:
        waiting = asked_url(call(mcp, bearer, "2026-11-11", URL_ONLY))
        still = retry(mcp, bearer, "2026-11-11", waiting, "accept")["result"]["structuredContent"]
        assert still["hasil"] == "menunggu" and waiting[1] in still["pesan"] and "cek_usulan" in still["pesan"]
        declined = asked_url(call(mcp, bearer, "2026-11-12", URL_ONLY))
        told = retry(mcp, bearer, "2026-11-12", declined, "decline")["result"]["structuredContent"]
        assert told["hasil"] == "ditolak" and declined[1] in told["pesan"] and "kedaluwarsa" in told["pesan"]
        cancelled = retry(mcp, bearer, "2026-11-11", asked_url(call(mcp, bearer, "2026-11-11", URL_ONLY)), "cancel")
        assert cancelled["result"]["structuredContent"]["hasil"] == "dibatalkan"
        assert recorded(school[0], "2026-11-11") == {} and recorded(school[0], "2026-11-12") == {}
        later = await decide(person, declined[1])  # as the result said: the page can still decide it
        assert "sudah dicatat" in later.text and recorded(school[0], "2026-11-12") == {"A001": "hadir"}


async def test_only_the_usulans_subject_decides_or_hears_how_it_stands(mcp: Mcp, school: tuple[str, Path]) -> None:
    owner, bearer = await signed_in(mcp, RIDWAN)
    other, stranger_bearer = await signed_in(mcp, HALIMAH)
    async with owner, other:
        asked = asked_url(call(mcp, bearer, "2026-11-13", URL_ONLY))
        stranger = await other.follow(asked[1])
        assert stranger.status_code == 404 and "Setujui" not in stranger.text
        taken = retry(mcp, stranger_bearer, "2026-11-13", asked, "accept")  # the sealed state is bound to RIDWAN
        assert taken["error"]["code"] == -32602
        assert recorded(school[0], "2026-11-13") == {}
        await decide(owner, asked[1], "tolak")
    told = retry(mcp, bearer, "2026-11-13", asked, "accept")["result"]["structuredContent"]
    assert told["hasil"] == "ditolak" and recorded(school[0], "2026-11-13") == {}


@pytest.mark.parametrize(
    ("era", "capabilities"),
    [(MODERN, {}), (MODERN, {"elicitation": {"form": {}}}), ("legacy", {})],
    ids=["nothing", "form-only", "handshake"],
)
async def test_a_host_without_url_elicitation_gets_the_link(
    mcp: Mcp, school: tuple[str, Path], era: str, capabilities: dict[str, Any]
) -> None:
    person, bearer = await signed_in(mcp, RIDWAN)
    await person.http.aclose()
    result = call(mcp, bearer, "2026-11-14", capabilities, era=era)["result"]
    hasil = result["structuredContent"]
    assert result.get("resultType", "complete") == "complete" and hasil["hasil"] == "menunggu"
    assert f"/usulan/{hasil['id_usulan']}" in hasil["pesan"] and "kunci" not in json.dumps(result)


@asynccontextmanager
async def sdk_host(mcp: Mcp, person: Browser, asked: list[str]) -> AsyncIterator[Client]:
    """The SDK's client (it declares form and URL elicitation): `person` signs in when asked, and opens the page it
    is given and approves there."""

    async def open_page(_ctx: Any, params: Any) -> ElicitResult:
        assert isinstance(params, ElicitRequestURLParams), params
        asked.append(params.url)
        done = await decide(person, params.url)
        assert "sudah dicatat" in done.text
        return ElicitResult(action="accept")

    metadata = OAuthClientMetadata.model_validate({**HOST, "client_name": "Inspector"})
    oauth = OAuthClientProvider(mcp.url, metadata, Memory(), person.redirect_handler, person.callback_handler)
    async with (
        person,
        httpx2.AsyncClient(auth=oauth, timeout=TIMEOUT) as http,
        Client(
            streamable_http_client(mcp.url, http_client=http), mode=MODERN, cache=None, elicitation_callback=open_page
        ) as client,
    ):
        yield client


async def test_the_sdk_client_drives_the_page_round_to_the_written_result(mcp: Mcp, school: tuple[str, Path]) -> None:
    asked: list[str] = []
    async with sdk_host(mcp, Browser(RIDWAN), asked) as client:
        result = await client.call_tool("catat_absensi", arguments("2026-11-15"))
    assert len(asked) == 1 and PAGE.match(asked[0])
    assert result.structured_content is not None and result.structured_content["hasil"] == "ditulis"
    assert recorded(school[0], "2026-11-15") == {"A001": "hadir"} and len(history(school[0], "2026-11-15")) == 1
