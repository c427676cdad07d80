"""The write tools as a host runs them: `mcp-asrama serve` over stdio with ASRAMA_WRITES=on, against a real data
service process on a temporary database (the tutorial's data), in each era on a fresh process — 2026-07-28
(`input_required`, then the retry with the person's answer) and the handshake (`elicitation/create` mid-call)."""

import json
import subprocess
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, ElicitRequestParams, ElicitResult

from mcp_asrama.server.guard import audit_check
from tests.conftest import TOKEN
from tests.e2e.conftest import EXECUTABLE

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

ERAS = ["legacy", "2026-07-28"]
WRITE_TOOLS = {"catat_absensi", "ajukan_izin", "akhiri_izin"}
HARI = "2026-10-07"  # a school day without records in the tutorial's data
KONFIRMASI = "mcp_asrama.server.features.write:keputusan_catat_absensi"


class Person:
    """The user behind the host: gives the next of `answers` (action, setuju) to each confirmation, and remembers
    how each question came (`via`: the inputRequests key on 2026-07-28, an `elicitation/create` id on the handshake)
    and what it said."""

    def __init__(self, *answers: tuple[str, bool]) -> None:
        self.answers = list(answers) or [("accept", True)]
        self.via: list[str | int] = []
        self.questions: list[str] = []

    async def __call__(self, context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        assert params.mode == "form"
        assert list(params.requested_schema["properties"]) == ["setuju"]
        self.via.append(context.request_id)
        self.questions.append(params.message)
        action, setuju = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if action != "accept":
            return ElicitResult(action=action)
        return ElicitResult(action="accept", content={"setuju": setuju})


def asked_the_era_way(person: Person, era: str, *keys: str) -> None:
    """Each question came as this era asks: in `input_required` under the resolver's key, or mid-call."""
    if era == "legacy":
        assert all(isinstance(v, int) for v in person.via), person.via
    else:
        assert person.via == list(keys)


def host(env: dict[str, str], era: str, person: Person | None = None) -> Client:
    """A host's session with a fresh `mcp-asrama serve` process in `era`."""
    params = StdioServerParameters(command=EXECUTABLE, args=["serve"], env=env)
    return Client(params, mode=era, cache=None, elicitation_callback=person)


@pytest.fixture
def writes_env(server_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    return {**server_env, "ASRAMA_WRITES": "on", "ASRAMA_AUDIT_LOG": str(tmp_path / "audit.jsonl")}


def body(result: CallToolResult) -> dict[str, Any]:
    text = result.content[0].text if result.content and result.content[0].type == "text" else ""
    assert not result.is_error, text
    assert isinstance(result.structured_content, dict)
    assert json.loads(text) == result.structured_content
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    assert result.is_error
    assert result.content[0].type == "text"
    return result.content[0].text


async def recorded(service: str, tanggal: str) -> dict[str, str]:
    """The day's records as the data service holds them (its REST API, its token): id → status."""
    async with httpx2.AsyncClient(base_url=service, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        answer = await http.get("/absensi", params={"tanggal": tanggal})
    assert answer.status_code == 200, answer.text
    return {row["id_anak"]: row["status"] for row in answer.json()["data"]}


async def roll_call_of_the_fullest_room(client: Client) -> tuple[str, list[str], dict[str, Any]]:
    """A musyrif's "semua hadir kecuali <the last of his room> izin", the room and children found by the read
    tools: (room, its children's ids, the catat_absensi arguments)."""
    rooms = body(await client.call_tool("daftar_kamar", {}))["data"]
    room = max(rooms, key=lambda r: r["terisi"])["nama"]
    children = [a["id"] for a in body(await client.call_tool("cari_anak", {"kamar": room}))["data"]]
    assert len(children) >= 2
    arguments = {
        "tanggal": HARI,
        "kamar": room,
        "yang_lain": "hadir",
        "entri": [{"id_anak": children[-1], "status": "izin", "keterangan": "Pulang, acara keluarga"}],
    }
    return room, children, arguments


@pytest.mark.parametrize("era", ERAS)
async def test_a_roll_call_accepted_is_written_once_and_audited(
    writes_env: dict[str, str], live_service: str, tmp_path: Path, era: str
) -> None:
    person = Person()
    async with host(writes_env, era, person) as client:
        assert {t.name for t in (await client.list_tools()).tools} >= WRITE_TOOLS
        room, children, arguments = await roll_call_of_the_fullest_room(client)
        *present, away = children
        done = body(await client.call_tool("catat_absensi", arguments))
        assert done["hasil"] == "ditulis", done
        assert (done["jumlah"], done["baru"], done["diubah"]) == (len(children), len(children), 0)
        assert {c["id_anak"]: c["status_baru"] for c in done["perubahan"]} == {
            **dict.fromkeys(present, "hadir"),
            away: "izin",
        }
        [question] = person.questions
        assert question.startswith(f"Catat absensi {HARI} — kamar {room}: {len(children)} anak; ")
        assert f"({away}): belum dicatat → izin (Pulang, acara keluarga)" in question

        assert await recorded(live_service, HARI) == {**dict.fromkeys(present, "hadir"), away: "izin"}
        day = body(await client.call_tool("absensi_harian", {"tanggal": HARI, "kamar": room}))
        assert day["jumlah_anak"] == len(children)
        assert (day["per_status"]["hadir"], day["per_status"]["izin"], day["per_status"]["belum_dicatat"]) == (
            len(present),
            1,
            0,
        )
        assert [(a["id_anak"], a["status"]) for a in day["tidak_hadir"]] == [(away, "izin")]

        again = body(await client.call_tool("catat_absensi", arguments))  # the same roll call: nothing to ask
        assert again["hasil"] == "tetap" and len(person.questions) == 1
    asked_the_era_way(person, era, KONFIRMASI)

    changes = audit_check.who_changed(tmp_path / "audit.jsonl", away)
    assert [(c["subject"], c["target"], c["old"], c["new"]) for c in changes] == [
        ("local", "catat_absensi", None, "izin")
    ]


@pytest.mark.parametrize("era", ERAS)
async def test_a_roll_call_not_accepted_writes_nothing(writes_env: dict[str, str], live_service: str, era: str) -> None:
    no = ("decline", False), ("accept", False), ("cancel", False), ("decline", False)  # unticked; closed the form
    person = Person(*no)
    async with host(writes_env, era, person) as client:
        _, _, arguments = await roll_call_of_the_fullest_room(client)
        for hasil in ("ditolak", "ditolak", "dibatalkan"):
            done = body(await client.call_tool("catat_absensi", arguments))
            assert done["hasil"] == hasil, done
            assert "tidak ada yang dicatat" in done["pesan"].lower()
            assert "perubahan" not in done or done["perubahan"] == []
        assert len(person.questions) == 3 and len(set(person.questions)) == 1
        leave = {"id_anak": "A001", "dari": HARI, "sampai": HARI, "jenis": "sakit", "alasan": "Demam"}
        refused = body(await client.call_tool("ajukan_izin", leave))
        assert refused["hasil"] == "ditolak" and "izin" not in refused
        assert body(await client.call_tool("daftar_izin", {}))["data"] == []
    asked_the_era_way(
        person, era, KONFIRMASI, KONFIRMASI, KONFIRMASI, "mcp_asrama.server.features.write:keputusan_ajukan_izin"
    )
    assert await recorded(live_service, HARI) == {}


@pytest.mark.parametrize("era", ERAS)
async def test_an_office_izin_from_request_to_return(writes_env: dict[str, str], live_service: str, era: str) -> None:
    today = date.today()
    person = Person()
    async with host(writes_env, era, person) as client:
        [anak] = body(await client.call_tool("cari_anak", {"nama": "Ahmad"}))["data"]
        asked = {
            "id_anak": anak["id"],
            "dari": today.isoformat(),
            "sampai": (today + timedelta(days=2)).isoformat(),
            "jenis": "pulang",
            "alasan": "Acara keluarga",
        }
        made = body(await client.call_tool("ajukan_izin", asked))
        assert made["hasil"] == "ditulis", made
        izin = made["izin"]
        assert (izin["id_anak"], izin["aktif"], izin.get("tanggal_kembali")) == (anak["id"], True, None)
        assert "alasan" not in izin and "Acara keluarga" not in json.dumps(made)  # the reason is never shown again
        assert "Acara keluarga" in person.questions[0]  # but the person confirming it reads it

        running = body(await client.call_tool("daftar_izin", {"aktif": True}))
        assert [i["id"] for i in running["data"]] == [izin["id"]]
        assert body(await client.call_tool("detail_anak", {"id_anak": anak["id"]}))["status"] == "izin"
        tomorrow = (today + timedelta(days=1)).isoformat()
        assert (await recorded(live_service, tomorrow))[anak["id"]] == "izin"

        evening = {"tanggal": today.isoformat(), "kamar": anak["kamar"], "yang_lain": "hadir", "entri": []}
        roll = body(await client.call_tool("catat_absensi", evening))  # the musyrif's "semua hadir" that evening
        assert roll["hasil"] == "ditulis", roll
        assert anak["id"] not in {c["id_anak"] for c in roll["perubahan"]}
        assert f"({anak['id']})" not in person.questions[1]  # away on izin: stays izin, not in the question
        assert (await recorded(live_service, today.isoformat()))[anak["id"]] == "izin"

        back = {"id_izin": izin["id"], "tanggal_kembali": today.isoformat()}
        ended = body(await client.call_tool("akhiri_izin", back))
        assert ended["hasil"] == "ditulis", ended
        assert (ended["izin"]["id"], ended["izin"]["tanggal_kembali"], ended["izin"]["aktif"]) == (
            izin["id"],
            today.isoformat(),
            False,
        )
        assert body(await client.call_tool("daftar_izin", {"aktif": True}))["data"] == []
        assert anak["id"] not in await recorded(live_service, tomorrow)  # back early: the izin days from today go
        assert anak["id"] not in await recorded(live_service, today.isoformat())
        assert body(await client.call_tool("detail_anak", {"id_anak": anak["id"]}))["status"] == "aktif"
        assert len(person.questions) == 3
        asked_the_era_way(
            person,
            era,
            "mcp_asrama.server.features.write:keputusan_ajukan_izin",
            KONFIRMASI,
            "mcp_asrama.server.features.write:keputusan_akhiri_izin",
        )

        twice = error_text(await client.call_tool("akhiri_izin", back))  # the handle of an ended izin
        assert "sudah selesai" in twice and "daftar_izin(aktif=true)" in twice
        assert len(person.questions) == 3


@pytest.mark.parametrize("era", ERAS)
async def test_an_unknown_izin_handle_says_where_to_find_the_right_one(writes_env: dict[str, str], era: str) -> None:
    person = Person()
    async with host(writes_env, era, person) as client:
        result = await client.call_tool(
            "akhiri_izin", {"id_izin": "izin-yang-tidak-ada", "tanggal_kembali": date.today().isoformat()}
        )
        assert error_text(result) == (
            "Izin dengan id itu tidak ditemukan (atau di luar wewenang Anda). Lihat id izin yang berjalan dengan "
            "daftar_izin(aktif=true), lalu panggil lagi."
        )
        assert person.questions == []  # refused before anybody is asked


@pytest.mark.parametrize("era", ERAS)
async def test_a_musyrif_writes_only_his_room(writes_env: dict[str, str], live_service: str, era: str) -> None:
    person = Person()
    env = {**writes_env, "ASRAMA_STDIO_SCOPE": "kamar:Al-Fatih 1"}
    async with host(env, era, person) as client:
        arguments = {"tanggal": HARI, "entri": [{"id_anak": "A003", "status": "alpa"}]}  # Citra: Aisyah 2
        text = error_text(await client.call_tool("catat_absensi", arguments))
        assert "A003" in text and "di luar wewenang" in text and "Citra" not in text
        assert person.questions == []
    assert await recorded(live_service, HARI) == {}


@pytest.mark.parametrize("era", ERAS)
async def test_without_asrama_writes_there_are_no_write_tools(server_env: dict[str, str], era: str) -> None:
    person = Person()
    async with host(server_env, era, person) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "daftar_izin" in names and not names & WRITE_TOOLS
        calls: list[tuple[str, dict[str, Any]]] = [
            ("catat_absensi", {"tanggal": HARI, "entri": [{"id_anak": "A001", "status": "hadir"}]}),
            ("akhiri_izin", {"id_izin": "x", "tanggal_kembali": HARI}),
        ]
        for name, arguments in calls:
            with pytest.raises(MCPError) as caught:
                await client.call_tool(name, arguments)
            assert caught.value.error.code == -32602
        assert person.questions == []


def exchange(process: "subprocess.Popen[str]", message: dict[str, Any]) -> dict[str, Any]:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()
    answer: dict[str, Any] = json.loads(process.stdout.readline())
    return answer


def modern_call(number: int, arguments: dict[str, Any], **more: Any) -> dict[str, Any]:
    """A 2026-07-28 tools/call of catat_absensi, as a raw JSON-RPC line (the README's exchange)."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    }
    params = {"name": "catat_absensi", "arguments": arguments, **more, "_meta": meta}
    return {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params}


async def test_the_two_rounds_on_the_wire_and_a_replay(writes_env: dict[str, str], live_service: str) -> None:
    arguments = {
        "tanggal": HARI,
        "kamar": "Al-Fatih 1",
        "yang_lain": "hadir",
        "entri": [{"id_anak": "A002", "status": "izin", "keterangan": "Pulang, acara keluarga"}],
    }
    command = [EXECUTABLE, "serve"]
    with subprocess.Popen(
        command, env=writes_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    ) as process:
        first = exchange(process, modern_call(1, arguments))["result"]
        assert first["resultType"] == "input_required"
        assert "content" not in first and "isError" not in first
        assert list(first["inputRequests"]) == [KONFIRMASI]
        question = first["inputRequests"][KONFIRMASI]
        assert question["method"] == "elicitation/create"
        assert question["params"]["mode"] == "form"
        assert question["params"]["message"].splitlines() == [
            f"Catat absensi {HARI} — kamar Al-Fatih 1: 2 anak; 2 baru, 0 diubah, 0 tetap.",
            "Yang berubah:",
            "- Budi Santoso (A002): belum dicatat → izin (Pulang, acara keluarga)",
            "- Ahmad Fauzi (A001): belum dicatat → hadir",
            "Nilai lama tetap tersimpan di riwayat. Setujui untuk mencatat?",
        ]
        assert await recorded(live_service, HARI) == {}  # asking writes nothing

        yes = {KONFIRMASI: {"action": "accept", "content": {"setuju": True}}}
        retry = modern_call(2, arguments, inputResponses=yes, requestState=first["requestState"])
        second = exchange(process, retry)["result"]
        assert second["resultType"] == "complete" and second["isError"] is False
        assert second["structuredContent"]["hasil"] == "ditulis"
        assert await recorded(live_service, HARI) == {"A001": "hadir", "A002": "izin"}

        replay = exchange(process, {**retry, "id": 3})
        assert replay["error"]["code"] == -32602  # a confirmation is used once
        process.kill()


async def test_an_answer_to_a_question_the_data_has_outdated_is_asked_again(
    writes_env: dict[str, str], live_service: str
) -> None:
    arguments = {"tanggal": HARI, "entri": [{"id_anak": "A002", "status": "sakit"}]}
    with subprocess.Popen(
        [EXECUTABLE, "serve"],
        env=writes_env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as process:
        first = exchange(process, modern_call(1, arguments))["result"]
        assert "belum dicatat → sakit" in first["inputRequests"][KONFIRMASI]["params"]["message"]
        async with httpx2.AsyncClient(base_url=live_service, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
            meanwhile = await http.put(f"/absensi/{HARI}/A002", json={"status": "alpa"})  # another staff member
        assert meanwhile.status_code in (200, 201), meanwhile.text

        yes = {KONFIRMASI: {"action": "accept", "content": {"setuju": True}}}
        stale = exchange(process, modern_call(2, arguments, inputResponses=yes, requestState=first["requestState"]))
        again = stale["result"]
        assert again["resultType"] == "input_required"  # the person said yes to another question: ask again
        assert "alpa → sakit" in again["inputRequests"][KONFIRMASI]["params"]["message"]
        assert await recorded(live_service, HARI) == {"A002": "alpa"}
        process.kill()


@pytest.mark.parametrize("era", ERAS)
async def test_a_host_that_cannot_ask_the_person_gets_32021_and_nothing_is_written(
    writes_env: dict[str, str], live_service: str, era: str
) -> None:
    async with host(writes_env, era) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("catat_absensi", {"tanggal": HARI, "entri": [{"id_anak": "A001", "status": "alpa"}]})
        assert caught.value.error.code == -32021
    assert await recorded(live_service, HARI) == {}


@pytest.mark.parametrize("era", ERAS)
async def test_the_question_of_a_declined_roll_call_is_a_disclosure(
    writes_env: dict[str, str], tmp_path: Path, era: str
) -> None:
    person = Person(("decline", False))
    async with host(writes_env, era, person) as client:
        arguments = {"tanggal": HARI, "kamar": "Al-Fatih 1", "yang_lain": "hadir", "entri": []}
        assert body(await client.call_tool("catat_absensi", arguments))["hasil"] == "ditolak"
    [question] = person.questions
    assert "Ahmad Fauzi (A001)" in question and "Budi Santoso (A002)" in question
    assert {e["target"] for e in audit_check.who_saw(tmp_path / "audit.jsonl", "A001")} == {"catat_absensi"}
