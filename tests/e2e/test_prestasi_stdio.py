"""prestasi as a host meets it: `mcp-asrama serve` over stdio with ASRAMA_WRITES=on against a real data service
process (a fresh database migrated to revision 0006 by the service itself), in each era: an achievement confirmed
by the person is written once, then read back by its tools, its resource and the parents' monthly report."""

import json
from datetime import date
from pathlib import Path

import httpx2
import pytest

from tests.conftest import TOKEN
from tests.e2e.test_writes_stdio import ERAS, Person, asked_the_era_way, body, host

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

ASKED = {"id_anak": "A001", "bidang": "tahfidz", "tingkat": "kabupaten", "keterangan": "Juara 2 MTQ hifzil Qur'an"}


@pytest.mark.parametrize("era", ERAS)
async def test_an_achievement_confirmed_is_written_once_and_told_everywhere(
    server_env: dict[str, str], live_service: str, tmp_path: Path, era: str
) -> None:
    today = date.today()
    env = {**server_env, "ASRAMA_WRITES": "on", "ASRAMA_AUDIT_LOG": str(tmp_path / "audit.jsonl")}
    person = Person(("decline", False), ("accept", True))
    async with host(env, era, person) as client:
        asked = {**ASKED, "tanggal": today.isoformat()}
        declined = body(await client.call_tool("catat_prestasi", asked))
        assert declined["hasil"] == "ditolak" and "prestasi" not in declined
        made = body(await client.call_tool("catat_prestasi", asked))
        assert made["hasil"] == "ditulis", made
        assert made["prestasi"]["keterangan"] == ASKED["keterangan"]
        assert "tahfidz" in person.questions[1] and "kabupaten" in person.questions[1]
        key = "mcp_asrama.server.features.write:keputusan_catat_prestasi"
        asked_the_era_way(person, era, key, key)

        mine = body(await client.call_tool("prestasi_anak", {"id_anak": "A001"}))
        assert [p["id_prestasi"] for p in mine["data"]] == [made["prestasi"]["id_prestasi"]]
        assert (mine["jumlah"], mine["per_tingkat"]["kabupaten"], mine["per_bidang"]["tahfidz"]) == (1, 1, 1)
        rekap = body(await client.call_tool("rekap_prestasi", {"dari": today.isoformat(), "sampai": today.isoformat()}))
        assert (rekap["jumlah_anak"], rekap["total"]["jumlah"]) == (1, 1)
        read = await client.read_resource("asrama://anak/A001/prestasi")
        assert json.loads(read.contents[0].text)["jumlah"] == 1
        report = await client.get_prompt("laporan_bulanan_wali", {"id_anak": "A001", "bulan": today.strftime("%Y-%m")})
        assert 'prestasi_anak(id_anak="A001"' in report.messages[0].content.text

    async with httpx2.AsyncClient(base_url=live_service, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        stored = (await http.get("/prestasi", params={"id_anak": "A001"})).json()
    assert stored["total"] == 1 and stored["data"][0]["dicatat_oleh"]
