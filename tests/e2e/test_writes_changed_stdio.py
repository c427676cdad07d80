"""Another writer between the question and the answer, as a host meets it: `mcp-asrama serve` over stdio against a real
data service process, the other writer a REST client on the service's socket. On the handshake the question is asked
mid-call and the confirmed write carries the old records shown: the service refuses it, the tool says so, nothing is
overwritten, and the next call asks again (keeping the colleague's record). On 2026-07-28 the retry rebuilds the
plan, so the same call asks again with the new question before anything is written."""

import json
from pathlib import Path

import httpx2
import pytest
from mcp.client.session import ClientRequestContext
from mcp_types import ElicitRequestParams, ElicitResult

from mcp_asrama.server.features.catat_absensi import CHANGED
from tests.conftest import TOKEN
from tests.e2e.test_writes_stdio import HARI, Person, body, error_text, host, recorded

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

KEPT = "1 anak yang sudah tercatat sakit, izin atau alpa tidak diubah."  # the colleague's alpa
ROLL_CALL = {
    "tanggal": HARI,
    "kamar": "Al-Fatih 1",
    "yang_lain": "hadir",
    "entri": [{"id_anak": "A002", "status": "sakit"}],
}


class Hurried(Person):
    """A person who, before answering the first question, lets a colleague record A001 `alpa` at the service."""

    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    async def __call__(self, context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        if not self.questions:
            async with httpx2.AsyncClient(base_url=self.service, headers={"Authorization": f"Bearer {TOKEN}"}) as rest:
                put = await rest.put(f"/absensi/{HARI}/A001", json={"status": "alpa"})
            assert put.status_code == 200, put.text
        return await super().__call__(context, params)


@pytest.fixture
def writes_env(server_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    return {**server_env, "ASRAMA_WRITES": "on", "ASRAMA_AUDIT_LOG": str(tmp_path / "audit.jsonl")}


async def test_on_the_handshake_the_confirmed_write_is_refused_and_asked_again(
    writes_env: dict[str, str], live_service: str, tmp_path: Path
) -> None:
    person = Hurried(live_service)
    async with host(writes_env, "legacy", person) as client:
        assert error_text(await client.call_tool("catat_absensi", ROLL_CALL)) == CHANGED
        assert await recorded(live_service, HARI) == {"A001": "alpa"}
        done = body(await client.call_tool("catat_absensi", ROLL_CALL))
    assert done["hasil"] == "ditulis"
    assert await recorded(live_service, HARI) == {"A001": "alpa", "A002": "sakit"}
    first, second = person.questions
    assert "(A001): belum dicatat → hadir" in first and "(A001)" not in second and KEPT in second
    lines = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    writes = [line["write"]["confirmation"] for line in lines if line.get("target") == "catat_absensi"]
    assert writes == ["changed", "accepted"]


async def test_on_2026_07_28_the_same_call_asks_again_with_the_new_question(
    writes_env: dict[str, str], live_service: str
) -> None:
    person = Hurried(live_service)
    async with host(writes_env, "2026-07-28", person) as client:
        done = body(await client.call_tool("catat_absensi", ROLL_CALL))
    assert done["hasil"] == "ditulis"
    assert await recorded(live_service, HARI) == {"A001": "alpa", "A002": "sakit"}
    first, second = person.questions
    assert "(A001): belum dicatat → hadir" in first and "(A001)" not in second and KEPT in second
