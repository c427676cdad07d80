"""The write tools over real HTTP on 127.0.0.1, against the real data service, with real tokens: who sees them
(ASRAMA_WRITES and the scope asrama:write), a roll call confirmed through the SDK's client, the handshake era on
stateless HTTP refused with a clear tool error, and every way a confirmation's raw rounds can go wrong (sent
again, forged, changed, another caller, sent on other methods, no capability, declined, cancelled, expired) writing
nothing — or once.

Each test writes on its own dates, so the module's one data service never carries one test's records into another.
"""

import hashlib
import json
import re
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import date
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.request_state import AESGCMRequestStateCodec
from mcp_types import ElicitRequestParams, ElicitResult

from tests.auth.conftest import Mcp, jwt_process, jwt_settings, mcp_in_thread, mcp_process, needs_redis
from tests.auth.idp import Idp
from tests.auth.support import MODERN, TIMEOUT, post, rpc
from tests.conftest import TOKEN
from tests.http_rpc import reply

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

WRITE_TOOLS = {"catat_absensi", "ajukan_izin", "akhiri_izin"}
READ = "openid asrama:read"
WRITE = "openid asrama:read asrama:write"
KONFIRMASI = "mcp_asrama.server.features.write:keputusan_catat_absensi"
FORM: dict[str, Any] = {"elicitation": {"form": {}}}
KEYS = "kunci-rahasia-sekolah-yang-panjang-0001,kunci-lama-sekolah-yang-panjang-sekali-2"
ACCEPT = {"action": "accept", "content": {"setuju": True}}
SERVICE = {"Authorization": f"Bearer {TOKEN}"}


# --- the servers -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def writes_mcp(idp: Idp, service_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mcp]:
    """`mcp-asrama serve` as a real process requiring the IdP's tokens, with ASRAMA_WRITES=on."""
    with jwt_process(idp, service_url, tmp_path_factory.mktemp("mcp-writes"), ASRAMA_WRITES="on") as mcp:
        yield mcp


@pytest.fixture(scope="module")
def raw_mcp(idp: Idp, service_url: str) -> Iterator[Mcp]:
    """The same server in a thread, with known ASRAMA_STATE_KEYS (so a test can seal a state itself)."""
    with mcp_in_thread(**jwt_settings(idp, api_url=service_url, writes=True, state_keys=KEYS)) as mcp:
        yield mcp


def token(idp: Idp, mcp: Mcp, scope: str = WRITE, sub: str = "ust-ridwan") -> str:
    return idp.mint(mcp.public_url, sub=sub, scope=scope, asrama_scope=["all"])


# --- the data service, read directly -----------------------------------------------------------------------------


def recorded(service_url: str, tanggal: str) -> dict[str, str]:
    """id_anak → status of every attendance record of `tanggal` in the service's database."""
    answer = httpx2.get(f"{service_url}/absensi", params={"tanggal": tanggal}, headers=SERVICE, timeout=TIMEOUT)
    assert answer.status_code == 200, answer.text
    return {row["id_anak"]: row["status"] for row in answer.json()["data"]}


def history(service_url: str, tanggal: str, id_anak: str) -> list[dict[str, Any]]:
    """Every change of one student's record of `tanggal` (who: `oleh`, which confirmation: `kunci`)."""
    answer = httpx2.get(f"{service_url}/absensi/{tanggal}/{id_anak}/riwayat", headers=SERVICE, timeout=TIMEOUT)
    assert answer.status_code == 200, answer.text
    rows = answer.json()["data"]
    assert isinstance(rows, list)
    return rows


def nothing_written(service_url: str, tanggal: str) -> None:
    assert recorded(service_url, tanggal) == {}
    for id_anak in ("A001", "A002", "A003"):
        assert history(service_url, tanggal, id_anak) == []


def key_of(sealed: str) -> str:
    """The Idempotency-Key a confirmation writes under: the SHA-256 of its sealed requestState."""
    return hashlib.sha256(sealed.encode()).hexdigest()


# --- raw JSON-RPC rounds on 2026-07-28 ---------------------------------------------------------------------------


def roll_call(tanggal: str, *entri: tuple[str, str]) -> dict[str, Any]:
    return {"tanggal": tanggal, "entri": [{"id_anak": i, "status": s} for i, s in entri]}


def send(url: str, body: dict[str, Any], headers: dict[str, str], bearer: str) -> dict[str, Any]:
    answer = httpx2.post(url, json=body, headers={**headers, "Authorization": f"Bearer {bearer}"}, timeout=TIMEOUT)
    return reply(answer)


def ask(
    url: str, bearer: str, arguments: dict[str, Any], capabilities: dict[str, Any] | None = None
) -> tuple[dict[str, Any], dict[str, str], dict[str, Any]]:
    """The first round of catat_absensi: (body, headers, the JSON-RPC answer)."""
    body, headers = rpc("tools/call", {"name": "catat_absensi", "arguments": arguments}, era=MODERN)
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = (
        FORM if capabilities is None else capabilities
    )
    return body, headers, send(url, body, headers, bearer)


def asked_ok(url: str, bearer: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str], dict[str, Any]]:
    """A first round that asked the question: (body, headers, the input_required result)."""
    body, headers, answer = ask(url, bearer, arguments)
    asked = answer["result"]
    assert asked["resultType"] == "input_required", answer
    assert list(asked["inputRequests"]) == [KONFIRMASI]
    assert asked["inputRequests"][KONFIRMASI]["method"] == "elicitation/create"
    return body, headers, asked


def retry(
    body: dict[str, Any],
    state: str,
    request_id: int,
    answer: dict[str, Any] = ACCEPT,
    arguments: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The retry of `body` carrying `answer` and `state` (optionally with other arguments)."""
    params = {**body["params"], "inputResponses": {KONFIRMASI: answer}, "requestState": state}
    if arguments is not None:
        params["arguments"] = arguments
    return {**body, "id": request_id, "params": params}


def invalid_state(answer: dict[str, Any]) -> None:
    assert "result" not in answer, answer
    assert answer["error"]["code"] == -32602
    assert answer["error"]["message"] == "Invalid or expired requestState"


# --- the SDK client ----------------------------------------------------------------------------------------------


class Person:
    """The elicitation callback: records each question and gives `answer`."""

    def __init__(self, answer: ElicitResult) -> None:
        self.answer = answer
        self.questions: list[str] = []

    async def __call__(self, context: Any, params: ElicitRequestParams) -> ElicitResult:
        self.questions.append(params.message)
        return self.answer


@asynccontextmanager
async def sdk_client(url: str, bearer: str, mode: str, person: Person) -> AsyncIterator[Client]:
    """The SDK's client over Streamable HTTP with a bearer token and an elicitation callback."""
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}"}, timeout=TIMEOUT) as http,
        Client(
            streamable_http_client(url, http_client=http), mode=mode, cache=None, elicitation_callback=person
        ) as client,
    ):
        yield client


def tool_names(url: str, bearer: str, era: str) -> set[str]:
    answer = post(url, "tools/list", era=era, token=bearer)
    assert answer.status_code == 200, answer.text
    return {tool["name"] for tool in reply(answer)["result"]["tools"]}


# --- 1. who sees the write tools ---------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ["legacy", MODERN])
def test_a_read_token_sees_no_write_tools_and_cannot_call_them(
    writes_mcp: Mcp, idp: Idp, service_url: str, era: str
) -> None:
    reader = token(idp, writes_mcp, READ)
    names = tool_names(writes_mcp.url, reader, era)
    assert "daftar_izin" in names and "absensi_harian" in names
    assert names & WRITE_TOOLS == set()
    tanggal = "2026-10-19" if era == MODERN else "2026-10-18"
    body, headers = rpc(
        "tools/call", {"name": "catat_absensi", "arguments": roll_call(tanggal, ("A001", "hadir"))}, era=era
    )
    if era == MODERN:  # a host that could confirm is refused just the same
        body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = FORM
    answer = send(writes_mcp.url, body, headers, reader)
    assert "result" not in answer, answer
    assert answer["error"]["code"] == -32602
    assert "catat_absensi" in answer["error"]["message"]
    nothing_written(service_url, tanggal)


async def test_a_write_token_records_a_roll_call_through_the_sdk_client(
    writes_mcp: Mcp, idp: Idp, service_url: str
) -> None:
    tanggal = "2026-10-20"
    person = Person(ElicitResult(action="accept", content={"setuju": True}))
    writer = token(idp, writes_mcp, WRITE, sub="ust-ridwan")
    assert WRITE_TOOLS | {"daftar_izin"} <= tool_names(writes_mcp.url, writer, MODERN)
    async with sdk_client(writes_mcp.url, writer, MODERN, person) as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        assert listed >= WRITE_TOOLS
        arguments: dict[str, Any] = {
            "tanggal": tanggal,
            "entri": [
                {"id_anak": "A001", "status": "hadir"},
                {"id_anak": "A002", "status": "sakit", "keterangan": "Demam"},
            ],
        }
        result = await client.call_tool("catat_absensi", arguments)
    assert not result.is_error, result
    body = result.structured_content
    assert body is not None
    counts = {k: body[k] for k in ("hasil", "tanggal", "jumlah", "baru", "diubah", "tetap")}
    assert counts == {"hasil": "ditulis", "tanggal": tanggal, "jumlah": 2, "baru": 2, "diubah": 0, "tetap": 0}
    assert sorted((c["id_anak"], c.get("status_lama"), c["status_baru"]) for c in body["perubahan"]) == [
        ("A001", None, "hadir"),
        ("A002", None, "sakit"),
    ]
    [question] = person.questions  # asked once, with the changes spelled out
    assert f"Catat absensi {tanggal}: 2 anak; 2 baru, 0 diubah, 0 tetap." in question
    assert "Ahmad Fauzi (A001): belum dicatat → hadir" in question
    assert "Budi Santoso (A002): belum dicatat → sakit (Demam)" in question
    assert recorded(service_url, tanggal) == {"A001": "hadir", "A002": "sakit"}
    [change] = history(service_url, tanggal, "A002")
    assert change["oleh"] == "ust-ridwan"  # the token's subject
    assert re.fullmatch(r"[0-9a-f]{64}", change["kunci"])  # the confirmation's digest, not a random key
    assert change["keterangan_baru"] == "Demam"
    [first] = history(service_url, tanggal, "A001")
    assert first["kunci"] == change["kunci"]  # one confirmation, one write
    assert history(service_url, tanggal, "A003") == []

    # A second roll call of the day changes one record: old → new in the question, the result and the history.
    arguments["entri"][0]["status"] = "alpa"
    async with sdk_client(writes_mcp.url, writer, MODERN, person) as client:
        again = await client.call_tool("catat_absensi", arguments)
    body = again.structured_content
    assert body is not None
    assert (body["hasil"], body["jumlah"], body["baru"], body["diubah"], body["tetap"]) == ("ditulis", 2, 0, 1, 1)
    assert body["perubahan"] == [
        {"id_anak": "A001", "nama": "Ahmad Fauzi", "status_lama": "hadir", "status_baru": "alpa"}
    ]
    assert "2 anak; 0 baru, 1 diubah, 1 tetap." in person.questions[1]
    assert "Ahmad Fauzi (A001): hadir → alpa" in person.questions[1]
    assert "A002" not in person.questions[1]
    assert recorded(service_url, tanggal) == {"A001": "alpa", "A002": "sakit"}
    old, new = history(service_url, tanggal, "A001")
    assert (new["status_lama"], new["status_baru"], new["oleh"]) == ("hadir", "alpa", "ust-ridwan")
    assert new["kunci"] != old["kunci"]
    assert len(history(service_url, tanggal, "A002")) == 1  # unchanged records are not rewritten


async def test_the_office_grants_and_ends_an_izin_over_http_and_a_musyrif_cannot(
    writes_mcp: Mcp, idp: Idp, service_url: str
) -> None:
    """The office (scope all) asks for a leave and ends it, each confirmed; a musyrif of another room neither sees
    that izin nor can end it; the service records the office's subject as the actor."""
    today = date.today().isoformat()
    person = Person(ElicitResult(action="accept", content={"setuju": True}))
    office = idp.mint(writes_mcp.public_url, sub="kantor-1", scope=WRITE, asrama_scope=["all"])
    musyrif = idp.mint(writes_mcp.public_url, sub="ust-ridwan", scope=WRITE, asrama_scope=["kamar:Al-Fatih 1"])
    leave = {"id_anak": "A003", "dari": today, "sampai": today, "jenis": "sakit", "alasan": "Demam tinggi"}
    async with sdk_client(writes_mcp.url, office, MODERN, person) as client:
        made = await client.call_tool("ajukan_izin", leave)
        assert not made.is_error and made.structured_content is not None, made
        handle = made.structured_content["izin"]["id"]
    async with sdk_client(writes_mcp.url, musyrif, MODERN, person) as client:
        listed = await client.call_tool("daftar_izin", {"aktif": True})
        assert listed.structured_content is not None and listed.structured_content["data"] == []
        refused = await client.call_tool("akhiri_izin", {"id_izin": handle, "tanggal_kembali": today})
        assert refused.is_error and "daftar_izin" in refused.content[0].text  # type: ignore[union-attr]
    async with sdk_client(writes_mcp.url, office, MODERN, person) as client:
        ended = await client.call_tool("akhiri_izin", {"id_izin": handle, "tanggal_kembali": today})
    assert not ended.is_error and ended.structured_content is not None, ended
    assert ended.structured_content["izin"]["aktif"] is False
    assert len(person.questions) == 2 and "Demam tinggi" in person.questions[0]
    stored = httpx2.get(f"{service_url}/izin/{handle}", headers=SERVICE, timeout=TIMEOUT).json()
    assert stored["tanggal_kembali"] == today and "alasan" in stored  # the reason stays in the service
    marked, removed = history(service_url, today, "A003")  # the day marked izin, then removed on her return
    assert (marked["status_baru"], removed.get("status_baru")) == ("izin", None)
    assert marked["oleh"] == removed["oleh"] == "kantor-1"


async def test_a_counsellor_records_violations_only_within_his_room_over_http(
    writes_mcp: Mcp, idp: Idp, service_url: str
) -> None:
    """`peran:bk` with asrama:write reads every student's violations but records only for his room/class scope:
    alone, for no one."""
    tanggal = "2026-11-04"
    person = Person(ElicitResult(action="accept", content={"setuju": True}))
    violation = {"tanggal": tanggal, "jenis": "membawa_hp"}
    alone = idp.mint(writes_mcp.public_url, sub="bk-1", scope=WRITE, asrama_scope=["peran:bk"])
    with_room = idp.mint(writes_mcp.public_url, sub="bk-2", scope=WRITE, asrama_scope=["kamar:Aisyah 2", "peran:bk"])
    for counsellor, allowed in ((alone, set()), (with_room, {"A003"})):
        async with sdk_client(writes_mcp.url, counsellor, MODERN, person) as client:
            for id_anak in ("A001", "A002", "A003"):
                seen = await client.call_tool("pelanggaran_anak", {"id_anak": id_anak})
                assert not seen.is_error, seen  # he reads everyone's violations
                made = await client.call_tool("catat_pelanggaran", {"id_anak": id_anak, **violation})
                assert made.is_error == (id_anak not in allowed), (id_anak, made)
    answer = httpx2.get(f"{service_url}/pelanggaran", headers=SERVICE, timeout=TIMEOUT)
    assert answer.status_code == 200, answer.text
    stored = [(r["id_anak"], r["dicatat_oleh"]) for r in answer.json()["data"] if r["tanggal"] == tanggal]
    assert stored == [("A003", "bk-2")]


def test_without_asrama_writes_a_write_token_sees_no_write_tools(jwt_mcp: Mcp, idp: Idp, service_url: str) -> None:
    writer = token(idp, jwt_mcp, WRITE)
    for era in ("legacy", MODERN):
        names = tool_names(jwt_mcp.url, writer, era)
        assert "daftar_izin" in names
        assert names & WRITE_TOOLS == set()
    arguments = roll_call("2026-10-17", ("A001", "hadir"))
    body, headers = rpc("tools/call", {"name": "catat_absensi", "arguments": arguments}, era=MODERN)
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = FORM
    assert send(jwt_mcp.url, body, headers, writer)["error"]["code"] == -32602
    nothing_written(service_url, "2026-10-17")


# --- 2. the handshake era on stateless HTTP ----------------------------------------------------------------------


async def test_the_handshake_era_gets_an_usulan_for_the_view_and_nothing_is_written(
    writes_mcp: Mcp, idp: Idp, service_url: str
) -> None:
    """Stateless HTTP keeps no session: what a handshake-era host declared at `initialize` is unknown on its tool
    call, so it is offered the view (as claude.ai's remote connectors need); only a view's key can decide it."""
    tanggal = "2026-10-16"
    person = Person(ElicitResult(action="accept", content={"setuju": True}))
    writer = token(idp, writes_mcp, WRITE)
    async with sdk_client(writes_mcp.url, writer, "legacy", person) as client:
        assert {tool.name for tool in (await client.list_tools()).tools} >= WRITE_TOOLS
        result = await client.call_tool("catat_absensi", roll_call(tanggal, ("A001", "alpa")))
    assert not result.is_error and result.structured_content is not None
    assert result.structured_content["hasil"] == "menunggu" and "tampilan" in result.structured_content["pesan"]
    assert result.meta is not None and result.meta["asrama/usulan"]["kunci"] not in str(result.content)
    assert person.questions == []
    # Raw, without any initialize: the same usulan, not a JSON-RPC error and not a crash.
    body, headers = rpc("tools/call", {"name": "catat_absensi", "arguments": roll_call(tanggal, ("A002", "alpa"))})
    answer = send(writes_mcp.url, body, headers, writer)
    assert answer["result"]["structuredContent"]["hasil"] == "menunggu"
    nothing_written(service_url, tanggal)


# --- 3. raw rounds on 2026-07-28 ---------------------------------------------------------------------------------


def test_the_accepted_retry_sent_again_is_refused_and_written_once(raw_mcp: Mcp, idp: Idp, service_url: str) -> None:
    tanggal = "2026-10-21"
    writer = token(idp, raw_mcp, sub="ust-ridwan")
    body, headers, asked = asked_ok(raw_mcp.url, writer, roll_call(tanggal, ("A001", "hadir"), ("A003", "izin")))
    assert "Citra" in asked["inputRequests"][KONFIRMASI]["params"]["message"]
    nothing_written(service_url, tanggal)  # asking writes nothing
    done = send(raw_mcp.url, retry(body, asked["requestState"], 2), headers, writer)
    assert done["result"]["structuredContent"]["hasil"] == "ditulis"
    assert done["result"]["structuredContent"]["baru"] == 2
    for request_id in (3, 4):
        invalid_state(send(raw_mcp.url, retry(body, asked["requestState"], request_id), headers, writer))
    assert recorded(service_url, tanggal) == {"A001": "hadir", "A003": "izin"}
    for id_anak in ("A001", "A003"):
        [change] = history(service_url, tanggal, id_anak)
        assert (change["oleh"], change["kunci"]) == ("ust-ridwan", key_of(asked["requestState"]))


def test_a_forged_state_is_refused_and_writes_nothing(raw_mcp: Mcp, idp: Idp, service_url: str) -> None:
    tanggal = "2026-10-22"
    writer = token(idp, raw_mcp)
    body, headers, asked = asked_ok(raw_mcp.url, writer, roll_call(tanggal, ("A002", "alpa")))
    state = asked["requestState"]
    for forged in (state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB"), "v1.bukan-state", "x" + state):
        invalid_state(send(raw_mcp.url, retry(body, forged, 2), headers, writer))
    nothing_written(service_url, tanggal)
    # The real one was not claimed by the forgeries: it still writes.
    assert (
        send(raw_mcp.url, retry(body, state, 3), headers, writer)["result"]["structuredContent"]["hasil"] == "ditulis"
    )
    assert recorded(service_url, tanggal) == {"A002": "alpa"}


def test_a_retry_with_changed_arguments_is_refused_and_writes_nothing(raw_mcp: Mcp, idp: Idp, service_url: str) -> None:
    tanggal = "2026-10-23"
    writer = token(idp, raw_mcp)
    body, headers, asked = asked_ok(raw_mcp.url, writer, roll_call(tanggal, ("A001", "hadir")))
    state = asked["requestState"]
    for changed in (
        roll_call(tanggal, ("A001", "alpa")),  # another status
        roll_call(tanggal, ("A001", "hadir"), ("A002", "hadir")),  # one more student
        roll_call("2026-10-24", ("A001", "hadir")),  # another day
    ):
        invalid_state(send(raw_mcp.url, retry(body, state, 2, arguments=changed), headers, writer))
    nothing_written(service_url, tanggal)
    nothing_written(service_url, "2026-10-24")


def test_a_state_minted_for_one_caller_is_refused_for_another(raw_mcp: Mcp, idp: Idp, service_url: str) -> None:
    tanggal = "2026-10-25"
    token_a, token_b = token(idp, raw_mcp, sub="ust-ridwan"), token(idp, raw_mcp, sub="ustz-halimah")
    body, headers, asked = asked_ok(raw_mcp.url, token_a, roll_call(tanggal, ("A003", "sakit")))
    invalid_state(send(raw_mcp.url, retry(body, asked["requestState"], 2), headers, token_b))
    nothing_written(service_url, tanggal)
    # Refused before it was claimed: its own caller can still finish it.
    done = send(raw_mcp.url, retry(body, asked["requestState"], 3), headers, token_a)
    assert done["result"]["structuredContent"]["hasil"] == "ditulis"
    [change] = history(service_url, tanggal, "A003")
    assert change["oleh"] == "ust-ridwan"


def test_another_caller_sending_a_seen_state_on_other_methods_does_not_burn_it(
    raw_mcp: Mcp, idp: Idp, service_url: str
) -> None:
    """An onlooker who saw another's sealed state sends it with his own token on every method but the call it
    confirms: none of them claims it, and its own caller's retry then writes once."""
    tanggal = "2026-11-03"
    victim, onlooker = token(idp, raw_mcp, sub="ust-ridwan"), token(idp, raw_mcp, sub="ustz-halimah")
    body, headers, asked = asked_ok(raw_mcp.url, victim, roll_call(tanggal, ("A001", "sakit")))
    state = asked["requestState"]
    elsewhere: list[tuple[str, dict[str, Any], str]] = [
        ("tools/list", {}, MODERN),
        ("tools/list", {}, "legacy"),
        ("ping", {}, "legacy"),
        ("resources/read", {"uri": "asrama://kamar"}, MODERN),
        ("tools/call", {"name": "daftar_izin", "arguments": {}}, MODERN),
    ]
    for method, params, era in elsewhere:
        sent, sent_headers = rpc(method, {**params, "requestState": state}, era=era)
        if method == "resources/read":
            sent_headers["Mcp-Name"] = params["uri"]
        send(raw_mcp.url, sent, sent_headers, onlooker)
    invalid_state(send(raw_mcp.url, retry(body, state, 2), headers, onlooker))  # his own retry: not his to use
    nothing_written(service_url, tanggal)
    done = send(raw_mcp.url, retry(body, state, 3), headers, victim)
    assert done["result"]["structuredContent"]["hasil"] == "ditulis", done
    invalid_state(send(raw_mcp.url, retry(body, state, 4), headers, victim))  # and once only
    [change] = history(service_url, tanggal, "A001")
    assert (change["oleh"], change["kunci"]) == ("ust-ridwan", key_of(state))


def test_a_client_without_the_elicitation_capability_gets_32021(raw_mcp: Mcp, idp: Idp, service_url: str) -> None:
    tanggal = "2026-10-26"
    writer = token(idp, raw_mcp)
    declared: list[dict[str, Any]] = [{}, {"elicitation": {"url": {}}}, {"sampling": {}}]
    for capabilities in declared:
        _, _, answer = ask(raw_mcp.url, writer, roll_call(tanggal, ("A001", "hadir")), capabilities)
        assert "result" not in answer, answer
        assert answer["error"]["code"] == -32021
        assert answer["error"]["data"]["requiredCapabilities"] == {"elicitation": {"form": {}}}
    nothing_written(service_url, tanggal)


@pytest.mark.parametrize(
    ("answer", "hasil", "tanggal"),
    [
        ({"action": "decline"}, "ditolak", "2026-10-27"),
        ({"action": "cancel"}, "dibatalkan", "2026-10-28"),
        ({"action": "accept", "content": {"setuju": False}}, "ditolak", "2026-10-29"),  # the box left unticked
    ],
)
def test_a_declined_or_cancelled_confirmation_writes_nothing(
    raw_mcp: Mcp, idp: Idp, service_url: str, answer: dict[str, Any], hasil: str, tanggal: str
) -> None:
    writer = token(idp, raw_mcp)
    body, headers, asked = asked_ok(raw_mcp.url, writer, roll_call(tanggal, ("A001", "izin"), ("A002", "hadir")))
    done = send(raw_mcp.url, retry(body, asked["requestState"], 2, answer), headers, writer)
    result = done["result"]
    assert result["resultType"] == "complete"
    assert result["isError"] is False
    assert result["structuredContent"]["hasil"] == hasil
    assert result["structuredContent"]["perubahan"] == []
    assert "tidak ada yang dicatat" in result["structuredContent"]["pesan"]
    nothing_written(service_url, tanggal)


# --- 4. replicas -------------------------------------------------------------------------------------------------


def test_a_second_server_with_the_same_state_keys_finishes_the_confirmation_once(idp: Idp, service_url: str) -> None:
    tanggal = "2026-10-30"
    public = "https://asrama.example.sch.id/mcp"  # both replicas behind one public URL, as in production
    settings = jwt_settings(idp, api_url=service_url, writes=True, state_keys=KEYS, public_url=public)
    with mcp_in_thread(**settings) as first, mcp_in_thread(**settings) as second:
        writer = idp.mint(public, sub="ust-ridwan", scope=WRITE, asrama_scope=["all"])
        body, headers, asked = asked_ok(first.url, writer, roll_call(tanggal, ("A001", "sakit"), ("A002", "hadir")))
        nothing_written(service_url, tanggal)
        done = send(second.url, retry(body, asked["requestState"], 2), headers, writer)
        assert done["result"]["structuredContent"]["hasil"] == "ditulis"
        # The same accepted retry again, on either replica, writes nothing more.
        invalid_state(send(second.url, retry(body, asked["requestState"], 3), headers, writer))
        again = send(first.url, retry(body, asked["requestState"], 4), headers, writer)
    assert recorded(service_url, tanggal) == {"A001": "sakit", "A002": "hadir"}
    for id_anak in ("A001", "A002"):
        [change] = history(service_url, tanggal, id_anak)
        assert change["kunci"] == key_of(asked["requestState"])
    # These replicas keep claims in memory (no shared ASRAMA_CONFIRM_STORAGE), so the first one runs the tool again;
    # its plan finds nothing left to change and nothing is written twice.
    if "error" in again:
        invalid_state(again)
    else:
        assert again["result"]["structuredContent"]["hasil"] == "tetap", again


@needs_redis
def test_two_server_processes_sharing_keys_and_a_store_finish_a_confirmation_once(
    idp: Idp, service_url: str, tmp_path: Path, redis_url: str
) -> None:
    """Two replicas as a school runs them: `mcp-asrama serve` processes started the same way, with the same
    ASRAMA_STATE_KEYS and ASRAMA_CONFIRM_STORAGE, behind one public URL. Either may finish a confirmation the
    other asked; once it is used, both refuse it."""
    tanggal = "2026-11-02"
    public = "https://asrama.example.sch.id/mcp"
    flags = ["--auth", "jwt", "--public-url", public, "--auth-issuer", idp.issuer, "--auth-jwks-url", idp.jwks_url]
    env = {
        "ASRAMA_API_URL": service_url,
        "ASRAMA_API_TOKEN": TOKEN,
        "ASRAMA_WRITES": "on",
        "ASRAMA_STATE_KEYS": KEYS,
        "ASRAMA_CONFIRM_STORAGE": redis_url,
    }
    folders = [tmp_path / name for name in ("a", "b")]
    for folder in folders:
        folder.mkdir()
    with mcp_process(flags, env, folders[0]) as first, mcp_process(flags, env, folders[1]) as second:
        writer = idp.mint(public, sub="ust-ridwan", scope=WRITE, asrama_scope=["all"])
        body, headers, asked = asked_ok(first.url, writer, roll_call(tanggal, ("A003", "sakit")))
        done = send(second.url, retry(body, asked["requestState"], 2), headers, writer)
        assert done["result"]["structuredContent"]["hasil"] == "ditulis", done
        invalid_state(send(first.url, retry(body, asked["requestState"], 3), headers, writer))
        invalid_state(send(second.url, retry(body, asked["requestState"], 4), headers, writer))
    assert recorded(service_url, tanggal) == {"A003": "sakit"}
    [change] = history(service_url, tanggal, "A003")
    assert change["kunci"] == key_of(asked["requestState"]) and change["oleh"] == "ust-ridwan"


@needs_redis
def test_an_usulan_made_on_one_replica_is_decided_on_another_once(
    idp: Idp, service_url: str, tmp_path: Path, redis_url: str
) -> None:
    """Issue 20: the view's usulan lives in the shared Redis (sealed with the shared keys), so the replica that
    takes the click may not be the one that proposed; the decision is claimed once whichever replica takes it, and
    the usulan exists for its own subject only."""
    tanggal = "2026-11-05"
    public = "https://asrama.example.sch.id/mcp"
    flags = ["--auth", "jwt", "--public-url", public, "--auth-issuer", idp.issuer, "--auth-jwks-url", idp.jwks_url]
    env = {"ASRAMA_API_URL": service_url, "ASRAMA_API_TOKEN": TOKEN, "ASRAMA_WRITES": "on", "ASRAMA_STATE_KEYS": KEYS,
           "ASRAMA_CONFIRM_STORAGE": redis_url}  # fmt: skip
    apps = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}
    folders = [tmp_path / name for name in ("a", "b")]
    for folder in folders:
        folder.mkdir()
    with mcp_process(flags, env, folders[0]) as first, mcp_process(flags, env, folders[1]) as second:
        writer = idp.mint(public, sub="ust-ridwan", scope=WRITE, asrama_scope=["all"])
        other = idp.mint(public, sub="ust-lain", scope=WRITE, asrama_scope=["all"])
        _, _, proposed = ask(first.url, writer, roll_call(tanggal, ("A003", "sakit")), capabilities=apps)
        usulan = proposed["result"]["_meta"]["asrama/usulan"]
        assert proposed["result"]["structuredContent"]["hasil"] == "menunggu"
        decide = {"id_usulan": usulan["id"], "kunci": usulan["kunci"], "keputusan": "setuju"}

        def call(url: str, bearer: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            body, headers = rpc("tools/call", {"name": name, "arguments": arguments}, era=MODERN)
            return send(url, body, headers, bearer)["result"]

        stranger = call(second.url, other, "putuskan_usulan", decide)
        done = call(second.url, writer, "putuskan_usulan", decide)
        again = call(first.url, writer, "putuskan_usulan", decide)
        checked = call(first.url, writer, "cek_usulan", {"id_usulan": usulan["id"]})
    assert stranger["isError"] and "tidak ditemukan" in stranger["content"][0]["text"]
    assert done["structuredContent"]["status"] == "ditulis", done
    assert again["isError"] and "sudah diputuskan" in again["content"][0]["text"]
    assert checked["structuredContent"]["status"] == "ditulis"
    assert recorded(service_url, tanggal) == {"A003": "sakit"}
    [change] = history(service_url, tanggal, "A003")
    assert change["kunci"].startswith("asrama-usulan-") and change["oleh"] == "ust-ridwan"


# --- 5. an expired state -----------------------------------------------------------------------------------------


def reseal(state: str, **claims: Any) -> str:
    """`state` opened and sealed again with the server's keys (the SDK's own codec), its envelope changed."""
    codec = AESGCMRequestStateCodec(KEYS.split(","))
    envelope = json.loads(codec.unseal(state))
    assert {"iat", "exp", "m", "t", "a", "s", "aud", "p"} <= set(envelope)  # the SDK's envelope, bound to the caller
    envelope.update(claims)
    return codec.seal(json.dumps(envelope, separators=(",", ":")).encode())


def test_an_expired_state_is_refused_and_writes_nothing(raw_mcp: Mcp, idp: Idp, service_url: str) -> None:
    tanggal = "2026-10-31"
    writer = token(idp, raw_mcp)
    body, headers, asked = asked_ok(raw_mcp.url, writer, roll_call(tanggal, ("A002", "izin")))
    now = time.time()
    expired = reseal(asked["requestState"], iat=now - 700, exp=now - 100)  # minted 700 s ago, TTL 600 s
    invalid_state(send(raw_mcp.url, retry(body, expired, 2), headers, writer))
    nothing_written(service_url, tanggal)
    # The control: the same envelope resealed with a live expiry is accepted, so it was the expiry that was refused.
    live = reseal(asked["requestState"], iat=now, exp=now + 600)
    done = send(raw_mcp.url, retry(body, live, 3), headers, writer)
    assert done["result"]["structuredContent"]["hasil"] == "ditulis"
    assert recorded(service_url, tanggal) == {"A002": "izin"}
    [change] = history(service_url, tanggal, "A002")
    assert change["kunci"] == key_of(live)
