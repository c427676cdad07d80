"""The browser page (`ASRAMA_KONFIRMASI=halaman`) as Claude Desktop's local server uses it: `mcp-asrama serve` over
stdio with $BROWSER set to a recorder (a script that writes down the URL it is given), a real data service, the
SDK's client as the host (no form, no views). The write answers `menunggu` and the server opens the page itself;
headless Chromium opens the recorded URL and clicks (`ASRAMA_TEST_CHROMIUM`; those tests skip without it), and
plain HTTP requests try what a foreign page, a missing or wrong secret and a replay can do. The secret never
reaches the tool result, the server's stderr or the audit log."""

import json
import os
import socket
import stat
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import CallToolResult

from mcp_asrama.server.features.write import META
from tests.conftest import TOKEN
from tests.e2e.chromium import browser
from tests.e2e.conftest import EXECUTABLE
from tests.e2e.test_writes_stdio import ERAS, body, recorded

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

CHROMIUM = os.environ.get("ASRAMA_TEST_CHROMIUM")
needs_chromium = pytest.mark.skipif(
    not CHROMIUM, reason="ASRAMA_TEST_CHROMIUM is not set (scripts/chromium-for-tests.sh installs it)"
)
HARI = "2026-10-07"  # a school day without records in the tutorial's data
ROLL_CALL = {"tanggal": HARI, "kamar": "Al-Fatih 1", "yang_lain": "hadir",
             "entri": [{"id_anak": "A002", "status": "sakit"}]}  # fmt: skip
WRITTEN = {"A001": "hadir", "A002": "sakit"}
# What the page shows: the question (its heading, its changes), the buttons, the outcome.
SHOWN = """(() => ({
  heading: (document.querySelector("#pertanyaan h1") || {}).textContent,
  changes: Array.from(document.querySelectorAll("#pertanyaan li")).map((li) => li.textContent),
  buttons: Array.from(document.querySelectorAll("button[data-keputusan]"))
    .map((b) => [b.dataset.keputusan, b.disabled]),
  status: document.getElementById("hasil").dataset.status,
  outcome: document.getElementById("hasil").textContent,
  address: location.href,
}))()"""


@pytest.fixture
def page_env(server_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """The server's environment: writes on, confirmed on the page, audited, and a 'browser' that records."""
    recorder = tmp_path / "browser.sh"
    recorder.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> "{tmp_path / "opened.txt"}"\n')
    recorder.chmod(recorder.stat().st_mode | stat.S_IXUSR)
    return {
        **server_env,
        "ASRAMA_WRITES": "on",
        "ASRAMA_KONFIRMASI": "halaman",
        "ASRAMA_AUDIT_LOG": str(tmp_path / "audit.jsonl"),
        "BROWSER": str(recorder),
    }


class Host:
    """A host session with a fresh `mcp-asrama serve` (its stderr kept in a file), and the URLs its browser got."""

    def __init__(self, env: dict[str, str], tmp_path: Path, era: str) -> None:
        self.env, self.era = env, era
        self.opened_file = tmp_path / "opened.txt"
        self.stderr = tmp_path / "server.stderr"

    @asynccontextmanager
    async def session(self) -> AsyncIterator[Client]:
        params = StdioServerParameters(command=EXECUTABLE, args=["serve"], env=self.env)
        with self.stderr.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode=self.era, cache=None) as client:
                yield client

    def opened(self) -> list[str]:
        return self.opened_file.read_text().splitlines() if self.opened_file.exists() else []


def text_of(result: CallToolResult) -> str:
    return json.dumps([c.model_dump() for c in result.content]) + json.dumps(result.structured_content)


async def propose(client: Client, host: Host) -> tuple[dict[str, Any], str, str]:
    """catat_absensi answered `menunggu`, the page's URL the browser was given, and its secret."""
    before = len(host.opened())
    result = await client.call_tool("catat_absensi", ROLL_CALL)
    waiting = body(result)
    *_, url = host.opened()
    assert len(host.opened()) == before + 1
    secret = urlsplit(url).fragment
    assert (waiting["hasil"], urlsplit(url).path) == ("menunggu", f"/usulan/{waiting['id_usulan']}")
    assert "halaman yang dibuka di peramban" in waiting["pesan"] and "cek_usulan" in waiting["pesan"]
    assert "- Budi Santoso (A002): belum dicatat → sakit" in waiting["pertanyaan"]
    assert len(secret) >= 16 and secret not in text_of(result) + json.dumps(result.meta)
    assert META not in (result.meta or {})  # no key for a view either
    return waiting, url, secret


def gone(url: str, seconds: float = 5.0) -> bool:
    """Whether the page's port stops listening within `seconds`."""
    parts = urlsplit(url)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection((parts.hostname, parts.port), timeout=1).close()
        except ConnectionRefusedError:
            return True
        time.sleep(0.1)
    return False


def never_leaked(secrets: list[str], *files: Path) -> None:
    for path in files:
        text = path.read_text()
        assert text and not [s for s in secrets if s in text], path


def page_lines(audit: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    return [line for line in lines if line.get("method") == "usulan/halaman"]


@needs_chromium
@pytest.mark.parametrize("keputusan", ["setuju", "tolak"])
async def test_a_click_on_the_page_decides_once(
    page_env: dict[str, str], live_service: str, tmp_path: Path, keputusan: str
) -> None:
    host = Host(page_env, tmp_path, "2026-07-28")
    async with host.session() as client:
        waiting, url, secret = await propose(client, host)
        assert CHROMIUM is not None
        with browser(CHROMIUM, tmp_path / "profile") as chrome:
            chrome.send("Page.navigate", session=chrome.session, url=url)
            chrome.wait_for("""!!document.querySelector('button[data-keputusan="setuju"]:not(:disabled)')""")
            shown = chrome.evaluate(SHOWN)
            chrome.evaluate(f"""document.querySelector('button[data-keputusan="{keputusan}"]').click()""")
            chrome.wait_for("['ditulis', 'ditolak', 'gagal'].includes(document.getElementById('hasil').dataset.status)")
            after = chrome.evaluate(SHOWN)
            errors = chrome.errors
        checked = body(await client.call_tool("cek_usulan", {"id_usulan": waiting["id_usulan"]}))
        assert gone(url)  # decided: nothing waits, the port is closed
    assert shown["heading"] == f"Catat absensi {HARI} — kamar Al-Fatih 1: 2 anak; 2 baru, 0 diubah, 0 tetap."
    assert shown["changes"] == [
        "Budi Santoso (A002): belum dicatat → sakit",
        "Ahmad Fauzi (A001): belum dicatat → hadir",
    ]
    assert shown["buttons"] == [["setuju", False], ["tolak", False]]
    assert secret not in shown["address"] and errors == []  # the secret left the address bar; no CSP violation
    status = "ditulis" if keputusan == "setuju" else "ditolak"
    assert (after["status"], checked["status"]) == (status, status)
    assert after["buttons"] == [["setuju", True], ["tolak", True]]
    assert await recorded(live_service, HARI) == (WRITTEN if keputusan == "setuju" else {})
    [line] = page_lines(tmp_path / "audit.jsonl")
    confirmation = "accepted" if keputusan == "setuju" else "declined"
    assert (line["subject"], line["target"], line["outcome"]) == ("local", "catat_absensi", "ok")
    assert (line["write"]["confirmation"], line["write"]["channel"]) == (confirmation, "halaman")
    assert len(line["write"]["changes"]) == (2 if keputusan == "setuju" else 0)
    never_leaked([secret], host.stderr, tmp_path / "audit.jsonl")


@pytest.mark.parametrize("era", ERAS)
async def test_a_foreign_page_no_secret_a_wrong_one_and_a_replay_write_nothing(
    page_env: dict[str, str], live_service: str, tmp_path: Path, era: str
) -> None:
    host = Host(page_env, tmp_path, era)
    async with host.session() as client:
        waiting, url, secret = await propose(client, host)
        other, other_url, other_secret = await propose(client, host)  # a second one keeps the page bound
        assert urlsplit(other_url).netloc == urlsplit(url).netloc
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        decide = f"{origin}{parts.path}/keputusan"
        yes = {"rahasia": secret, "keputusan": "setuju"}
        async with httpx2.AsyncClient(headers={"Origin": origin}) as http:
            page = await http.get(f"{origin}{parts.path}")
            asked = await http.post(f"{origin}{parts.path}/pertanyaan", json={"rahasia": secret})
            foreign = await http.post(decide, json=yes, headers={"Origin": "http://evil.example"})
            other_port = await http.post(decide, json=yes, headers={"Origin": "http://127.0.0.1:1"})
            rebound = await http.post(decide, json=yes, headers={"Host": f"evil.example:{parts.port}"})
            no_secret = await http.post(decide, json={"keputusan": "setuju"})
            wrong = await http.post(decide, json={**yes, "rahasia": "A" * len(secret)})
            wrong_question = await http.post(f"{origin}{parts.path}/pertanyaan", json={"rahasia": "A" * len(secret)})
            assert await recorded(live_service, HARI) == {}  # nothing refused wrote anything
            decided = await http.post(decide, json=yes)
            replay = await http.post(decide, json=yes)
            declined_after = await http.post(decide, json={**yes, "keputusan": "tolak"})
            assert not gone(url, 0.5)  # the other one still waits
            no = {"rahasia": other_secret, "keputusan": "tolak"}
            declined = await http.post(f"{origin}{urlsplit(other_url).path}/keputusan", json=no)
        checked = body(await client.call_tool("cek_usulan", {"id_usulan": waiting["id_usulan"]}))
        assert body(await client.call_tool("cek_usulan", {"id_usulan": other["id_usulan"]}))["status"] == "ditolak"
        assert gone(url)  # nothing waits any more
    assert page.status_code == 200 and "default-src 'none'" in page.headers["content-security-policy"]
    assert secret not in page.text
    assert asked.status_code == 200 and asked.json()["pertanyaan"] == waiting["pertanyaan"]
    assert (foreign.status_code, other_port.status_code, rebound.status_code) == (403, 403, 421)
    assert (no_secret.status_code, wrong.status_code, wrong_question.status_code) == (400, 403, 403)
    assert "tidak cocok" in wrong.json()["pesan"]
    assert decided.status_code == 200 and decided.json()["status"] == "ditulis"
    assert "rahasia_baru" not in decided.json() and "hasil" not in decided.json()
    assert (replay.status_code, declined_after.status_code, declined.status_code) == (409, 409, 200)
    assert "sudah diputuskan" in replay.json()["pesan"]
    assert checked["status"] == "ditulis" and checked["hasil"]["baru"] == 2
    assert await recorded(live_service, HARI) == WRITTEN  # written once
    lines = page_lines(tmp_path / "audit.jsonl")
    assert [(x["outcome"], x["write"]["confirmation"]) for x in lines] == [
        ("refused", "refused"),
        ("ok", "accepted"),
        ("refused", "replayed"),
        ("refused", "replayed"),
        ("ok", "declined"),
    ]
    assert {x["write"]["channel"] for x in lines} == {"halaman"} and lines[1]["target"] == "catat_absensi"
    never_leaked([secret, other_secret], host.stderr, tmp_path / "audit.jsonl")


@needs_chromium
async def test_data_changed_before_the_click_shows_the_new_question_on_the_page(
    page_env: dict[str, str], live_service: str, tmp_path: Path
) -> None:
    host = Host(page_env, tmp_path, "legacy")
    async with host.session() as client:
        waiting, url, secret = await propose(client, host)
        async with httpx2.AsyncClient(base_url=live_service, headers={"Authorization": f"Bearer {TOKEN}"}) as rest:
            meanwhile = await rest.put(f"/absensi/{HARI}/A001", json={"status": "alpa"})  # a colleague, meanwhile
        assert meanwhile.status_code in (200, 201), meanwhile.text
        assert CHROMIUM is not None
        with browser(CHROMIUM, tmp_path / "profile") as chrome:
            chrome.send("Page.navigate", session=chrome.session, url=url)
            chrome.wait_for("""!!document.querySelector('button[data-keputusan="setuju"]:not(:disabled)')""")
            chrome.evaluate("""document.querySelector('button[data-keputusan="setuju"]').click()""")
            chrome.wait_for("document.getElementById('hasil').dataset.status === 'berubah'")
            changed = chrome.evaluate(SHOWN)
            assert await recorded(live_service, HARI) == {"A001": "alpa"}  # nothing written on the old question
            chrome.evaluate("""document.querySelector('button[data-keputusan="setuju"]').click()""")
            chrome.wait_for("document.getElementById('hasil').dataset.status === 'ditulis'")
            errors = chrome.errors
        first = body(await client.call_tool("cek_usulan", {"id_usulan": waiting["id_usulan"]}))
        second = body(await client.call_tool("cek_usulan", {"id_usulan": first["id_usulan_baru"]}))
        assert gone(url)
    assert changed["buttons"] == [["setuju", False], ["tolak", False]] and errors == []
    assert changed["changes"] == ["Budi Santoso (A002): belum dicatat → sakit"]  # A001's alpa is kept
    assert (first["status"], second["status"]) == ("berubah", "ditulis")
    assert await recorded(live_service, HARI) == {"A001": "alpa", "A002": "sakit"}
    lines = page_lines(tmp_path / "audit.jsonl")
    assert [x["write"]["confirmation"] for x in lines] == ["changed", "accepted"]
    assert lines[0]["disclosed"] == ["A002"]  # the new question went to the page
    never_leaked([secret], host.stderr, tmp_path / "audit.jsonl")
