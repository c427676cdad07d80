"""The confirm view in a real browser (issue 20): `mcp-asrama serve` over HTTP on 127.0.0.1 with ASRAMA_WRITES=on
and a real data service; a client that declares only MCP Apps (no elicitation) calls `catat_absensi` and gets an
usulan. Headless Chromium opens a host page that plays the MCP Apps host: it draws our view (from the server's
`resources/read`) under the host's default CSP, forwards the real tool result, records what the view tells the
conversation, and hands the view's `tools/call` to the test, which relays it to the server as the host's backend
does. The buttons are pressed with real mouse events; the data service's own records say what was written.

Without Chromium, the app-only tool called by the model (no key, a guessed key, a guessed id) is refused over HTTP.
"""

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp_types import CallToolResult, ElicitRequestParams, ElicitResult, TextResourceContents

from mcp_asrama.server.features.write import META
from mcp_asrama.server.views import KONFIRMASI
from tests.conftest import TOKEN
from tests.e2e.chromium import Browser, browser
from tests.e2e.conftest import http_mcp
from tests.e2e.test_views_chromium import CSP, DOCS, script_json
from tests.server.test_views import AppsHost

CHROMIUM = os.environ.get("ASRAMA_TEST_CHROMIUM")
needs_chromium = pytest.mark.skipif(
    not CHROMIUM, reason="ASRAMA_TEST_CHROMIUM is not set (scripts/chromium-for-tests.sh installs it)"
)
pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

DAY = "2026-10-21"  # no records in the tutorial's data
ROLL_CALL = {"tanggal": DAY, "entri": [{"id_anak": "A002", "status": "sakit"}], "kamar": "Al-Fatih 1",
             "yang_lain": "hadir"}  # fmt: skip
SERVICE = {"Authorization": f"Bearer {TOKEN}"}
# What a host that takes both ways of telling the model declares (ext-apps McpUiHostCapabilities).
TELLS: dict[str, Any] = {"serverTools": {}, "updateModelContext": {"text": {}}, "message": {"text": {}}}

HOST = """<!DOCTYPE html>
<html lang="id"><head><meta charset="utf-8"><title>host</title>
<style>body { margin: 0; background: #f1f3f5; } iframe { border: 0; width: 720px; height: 200px; background: #fff; }
</style></head>
<body><iframe id="view" sandbox="allow-scripts"></iframe>
<script>
"use strict";
const VIEW = __VIEW__, CALL = __CALL__, CSP = __CSP__, CAPS = __CAPS__;
const frame = document.getElementById("view");
window.calls = [];  // the view's tools/call requests, for the host's backend (the test) to relay
window.told = [];  // what the view told the conversation: [method, params]
function post(message) { frame.contentWindow.postMessage(Object.assign({ jsonrpc: "2.0" }, message), "*"); }
window.answer = function (id, result) { post({ id: id, result: result }); };
window.addEventListener("message", function (event) {
  if (event.source !== frame.contentWindow) return;
  const msg = event.data;
  if (msg.method === "ui/initialize") {
    post({ id: msg.id, result: { protocolVersion: msg.params.protocolVersion,
      hostInfo: { name: "asrama-test-host", version: "1" }, hostCapabilities: CAPS,
      hostContext: { theme: "light", displayMode: "inline", locale: "id-ID" } } });
  } else if (msg.method === "ui/notifications/initialized") {
    post({ method: "ui/notifications/tool-input", params: { arguments: CALL.arguments } });
    post({ method: "ui/notifications/tool-result", params: CALL.result });
    window.ready = true;
  } else if (msg.method === "ui/notifications/size-changed") {
    frame.style.height = msg.params.height + "px";
  } else if (msg.method === "tools/call") {
    window.calls.push({ id: msg.id, params: msg.params });
  } else if (msg.method === "ui/update-model-context" && !CAPS.updateModelContext) {
    post({ id: msg.id, error: { code: -32601, message: "Method not found" } });
  } else if (msg.method === "ui/update-model-context" || msg.method === "ui/message") {
    window.told.push([msg.method, msg.params]);
    post({ id: msg.id, result: {} });
  }
});
const csp = '<meta http-equiv="Content-Security-Policy" content="' + CSP + '">';
frame.srcdoc = VIEW.replace("<head>", "<head>" + csp);
</script></body></html>
"""

# What the view shows: the question's parts, the buttons (and whether they are enabled), the outcome.
DRAWN = """(() => ({
  title: document.querySelector("h1") && document.querySelector("h1").textContent,
  ringkas: Array.from(document.querySelectorAll("p.ringkas")).map((p) => p.textContent),
  changes: Array.from(document.querySelectorAll("ul.perubahan li")).map((li) => li.textContent),
  buttons: Array.from(document.querySelectorAll("button")).map((b) => [b.dataset.keputusan, b.disabled]),
  hasil: document.querySelector("p.hasil") && document.querySelector("p.hasil").dataset.status,
  text: document.getElementById("view").textContent,
}))()"""


def dump(result: CallToolResult) -> dict[str, Any]:
    """A tool result as the host forwards it to a view (JSON, `_meta` and `structuredContent` by their wire names)."""
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


def key_of(result: dict[str, Any]) -> tuple[str, str]:
    """The usulan's id and key from the result's `_meta`; the key is in nothing the model reads."""
    usulan = result["_meta"][META]
    seen_by_model = json.dumps(result["content"]) + json.dumps(result["structuredContent"])
    assert usulan["kunci"] not in seen_by_model and len(usulan["kunci"]) >= 16
    return usulan["id"], usulan["kunci"]


def recorded(service_url: str) -> dict[str, str]:
    """id_anak → status of every attendance record of DAY, read from the data service itself."""
    answer = httpx2.get(f"{service_url}/absensi", params={"tanggal": DAY}, headers=SERVICE, timeout=10)
    assert answer.status_code == 200, answer.text
    return {row["id_anak"]: row["status"] for row in answer.json()["data"]}


def changes_of(service_url: str, id_anak: str) -> int:
    """How many times the service changed `id_anak`'s record of DAY (its history)."""
    answer = httpx2.get(f"{service_url}/absensi/{DAY}/{id_anak}/riwayat", headers=SERVICE, timeout=10)
    assert answer.status_code == 200, answer.text
    return len(answer.json()["data"])


@pytest.fixture
def writes_mcp(server_env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    """`mcp-asrama serve --transport http` (stateless, loopback, no auth: the local operator) with writes on."""
    with http_mcp({**server_env, "ASRAMA_WRITES": "on"}, tmp_path / "mcp-writes.log") as url:
        yield url


def apps_client(url: str, era: str) -> Client:
    """A host's connection that declares only MCP Apps (claude.ai, ChatGPT): no elicitation."""
    return Client(url, mode=era, cache=None, extensions=[AppsHost()])


async def propose(url: str, era: str) -> tuple[str, dict[str, Any]]:
    """The confirm view's HTML (read as the host reads it: via the write tool's link) and a real `catat_absensi`
    result from a client in `era`."""
    async with apps_client(url, era) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        uri = (tools["catat_absensi"].meta or {})["ui"]["resourceUri"]
        contents = (await client.read_resource(uri)).contents[0]
        result = await client.call_tool("catat_absensi", ROLL_CALL)
    assert uri == KONFIRMASI and isinstance(contents, TextResourceContents)
    assert not result.is_error and result.structured_content and result.structured_content["hasil"] == "menunggu"
    return contents.text, dump(result)


class Host:
    """The host page in Chromium around our view, and the host's backend: `relay` sends the view's next
    `tools/call` to the server over `client` and answers the view with the real result."""

    def __init__(self, chrome: Browser, page: Path, html: str, result: dict[str, Any], caps: dict[str, Any]) -> None:
        self.chrome = chrome
        call = {"arguments": ROLL_CALL, "result": result}
        page.write_text(
            HOST.replace("__VIEW__", script_json(html))
            .replace("__CALL__", script_json(call))
            .replace("__CSP__", script_json(CSP))
            .replace("__CAPS__", script_json(caps))
        )
        chrome.send("Emulation.setDeviceMetricsOverride", session=chrome.session, width=760, height=520,
                    deviceScaleFactor=1, mobile=False)  # fmt: skip
        chrome.send("Page.navigate", session=chrome.session, url=page.as_uri())
        chrome.wait_for("window.ready")  # the view is initialized: its document's context exists
        (frame,) = chrome.child_frames()
        self.frame = chrome.frame_context(frame)
        chrome.wait_for("!!document.querySelector('h1')", context=self.frame)

    def drawn(self) -> dict[str, Any]:
        return dict(self.chrome.evaluate(DRAWN, context=self.frame))

    def press(self, keputusan: str) -> None:
        """A mouse click on the view's button `keputusan`, at the place the browser drew it."""
        where = f"""(() => {{ const r = document.querySelector('button[data-keputusan="{keputusan}"]')
          .getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()"""
        x, y = self.chrome.evaluate(where, context=self.frame)
        left, top = self.chrome.evaluate("(() => { const r = document.getElementById('view').getBoundingClientRect();"
                                         " return [r.x, r.y]; })()")  # fmt: skip
        self.chrome.click(left + x, top + y)

    async def relay(self, client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        """The view's next `tools/call` (checking that both buttons were disabled while it was out), sent to the
        server; the view gets the real result. Returns the call's params and the result."""
        call = self.chrome.wait_for("window.calls.length && window.calls.shift()")
        assert all(disabled for _, disabled in self.drawn()["buttons"])
        params = call["params"]
        result = dump(await client.call_tool(params["name"], params["arguments"]))
        self.chrome.evaluate(f"window.answer({json.dumps(call['id'])}, {script_json(result)})")
        return params, result

    def outcome(self) -> str:
        """The status the view shows once the decision came back."""
        shown = "document.querySelector('p.hasil') && document.querySelector('p.hasil').dataset.status"
        return str(self.chrome.wait_for(shown, context=self.frame))

    def told(self, count: int) -> list[list[Any]]:
        """What the view told the conversation, once it told `count` things."""
        return list(self.chrome.wait_for(f"window.told.length >= {count} && window.told"))


def said(told: list[list[Any]]) -> list[str]:
    return [" ".join(c["text"] for c in params["content"]) for _, params in told]


@needs_chromium
@pytest.mark.parametrize(
    ("call_era", "view_era"),
    [
        ("2026-07-28", "2026-07-28"),
        ("2026-07-28", "legacy"),  # a host whose backend still speaks the handshake relays the view's call
        ("legacy", "2026-07-28"),
    ],
)
async def test_a_click_on_setuju_writes_the_roll_call_once(
    writes_mcp: str, server_env: dict[str, str], tmp_path: Path, call_era: str, view_era: str
) -> None:
    service = server_env["ASRAMA_API_URL"]
    html, result = await propose(writes_mcp, call_era)
    id_usulan, kunci = key_of(result)
    question = result["structuredContent"]["pertanyaan"].splitlines()
    assert recorded(service) == {}
    assert CHROMIUM is not None
    async with apps_client(writes_mcp, view_era) as backend:
        with browser(CHROMIUM, tmp_path / "profile") as chrome:
            host = Host(chrome, tmp_path / "host.html", html, result, TELLS)
            before = host.drawn()
            if call_era == view_era == "2026-07-28":
                chrome.screenshot(DOCS / "view-konfirmasi.png")
            host.press("setuju")
            params, decided = await host.relay(backend)
            status, after, told, errors = host.outcome(), host.drawn(), host.told(1), chrome.errors
        replayed = await backend.call_tool("putuskan_usulan", params["arguments"])
    assert (before["title"], before["ringkas"]) == ("Persetujuan pencatatan", [question[0]])
    assert before["changes"] == [line[2:] for line in question if line.startswith("- ")] != []
    assert "Budi Santoso (A002): belum dicatat → sakit" in before["changes"]
    assert before["buttons"] == [["setuju", False], ["tolak", False]]
    assert params == {"name": "putuskan_usulan",
                      "arguments": {"id_usulan": id_usulan, "kunci": kunci, "keputusan": "setuju"}}  # fmt: skip
    assert decided["structuredContent"]["status"] == status == "ditulis" and after["buttons"] == []
    assert told[0][0] == "ui/update-model-context" and len(told) == 1
    assert id_usulan in said(told)[0] and "ditulis" in said(told)[0] and kunci not in json.dumps(told)
    assert errors == []
    assert replayed.is_error and "sudah diputuskan" in replayed.content[0].text  # type: ignore[union-attr]
    assert recorded(service) == {"A001": "hadir", "A002": "sakit"}
    assert changes_of(service, "A001") == changes_of(service, "A002") == 1


@needs_chromium
async def test_tolak_writes_nothing_and_a_host_without_model_context_gets_a_message(
    writes_mcp: str, server_env: dict[str, str], tmp_path: Path
) -> None:
    html, result = await propose(writes_mcp, "2026-07-28")
    id_usulan, kunci = key_of(result)
    assert CHROMIUM is not None
    async with apps_client(writes_mcp, "2026-07-28") as backend:
        with browser(CHROMIUM, tmp_path / "profile") as chrome:
            host = Host(chrome, tmp_path / "host.html", html, result, {"serverTools": {}})
            host.press("tolak")
            params, decided = await host.relay(backend)
            status, told, errors = host.outcome(), host.told(1), chrome.errors
        checked = await backend.call_tool("cek_usulan", {"id_usulan": id_usulan})
    assert params["arguments"]["keputusan"] == "tolak" and status == decided["structuredContent"]["status"] == "ditolak"
    assert [method for method, _ in told] == ["ui/message"] and told[0][1]["role"] == "user"
    assert id_usulan in said(told)[0] and "ditolak" in said(told)[0] and kunci not in json.dumps(told)
    assert errors == []
    assert (checked.structured_content or {})["status"] == "ditolak"
    assert recorded(server_env["ASRAMA_API_URL"]) == {}


@needs_chromium
async def test_the_view_drawn_again_cannot_decide_twice(
    writes_mcp: str, server_env: dict[str, str], tmp_path: Path
) -> None:
    service = server_env["ASRAMA_API_URL"]
    html, result = await propose(writes_mcp, "2026-07-28")
    _, kunci = key_of(result)
    assert CHROMIUM is not None
    async with apps_client(writes_mcp, "2026-07-28") as backend:
        with browser(CHROMIUM, tmp_path / "profile") as chrome:
            once = Host(chrome, tmp_path / "host.html", html, result, TELLS)
            once.press("setuju")
            _, first = await once.relay(backend)
            once.told(1)
            again = Host(chrome, tmp_path / "again.html", html, result, TELLS)  # the conversation drawn again
            again.press("setuju")
            _, replayed = await again.relay(backend)
            refusal = chrome.wait_for("document.querySelector('p.galat') && "
                                      "document.querySelector('p.galat').textContent", context=again.frame)  # fmt: skip
            drawn, told, errors = again.drawn(), again.told(1), chrome.errors
    assert first["structuredContent"]["status"] == "ditulis" and replayed["isError"] is True
    assert "sudah diputuskan" in refusal and drawn["buttons"] == [["setuju", False], ["tolak", False]]
    assert "tidak diterima" in said(told)[0] and kunci not in json.dumps(told) and errors == []
    assert recorded(service) == {"A001": "hadir", "A002": "sakit"} and changes_of(service, "A002") == 1


@needs_chromium
async def test_data_changed_before_the_click_writes_nothing_and_the_view_asks_again(
    writes_mcp: str, server_env: dict[str, str], tmp_path: Path
) -> None:
    service = server_env["ASRAMA_API_URL"]
    html, result = await propose(writes_mcp, "2026-07-28")
    id_usulan, _ = key_of(result)
    colleague = httpx2.put(f"{service}/absensi/{DAY}/A001", json={"status": "alpa"},
                           headers={**SERVICE, "X-Asrama-Actor": "ust-halimah"}, timeout=10)  # fmt: skip
    assert colleague.status_code in (200, 201), colleague.text
    assert CHROMIUM is not None
    async with apps_client(writes_mcp, "2026-07-28") as backend:
        with browser(CHROMIUM, tmp_path / "profile") as chrome:
            host = Host(chrome, tmp_path / "host.html", html, result, TELLS)
            host.press("setuju")
            _, changed = await host.relay(backend)
            first = host.outcome()
            asked_again = host.drawn()
            written_then = recorded(service)
            host.press("setuju")
            params, decided = await host.relay(backend)
            chrome.wait_for("document.querySelectorAll('button').length === 0", context=host.frame)
            told, errors = host.told(2), chrome.errors
    new_id, new_key = key_of(changed)
    fresh = changed["structuredContent"]
    assert first == fresh["status"] == "berubah" and fresh["id_usulan_baru"] == new_id != id_usulan
    assert written_then == {"A001": "alpa"}  # the click on the old question wrote nothing
    assert asked_again["changes"] == [line[2:] for line in fresh["pertanyaan"].splitlines() if line.startswith("- ")]
    assert asked_again["buttons"] == [["setuju", False], ["tolak", False]]
    assert params["arguments"] == {"id_usulan": new_id, "kunci": new_key, "keputusan": "setuju"}
    assert decided["structuredContent"]["status"] == "ditulis"
    assert new_id in said(told)[0] and "berubah" in said(told)[0] and "ditulis" in said(told)[1]
    assert new_key not in json.dumps(told) and errors == []
    assert recorded(service) == {"A001": "alpa", "A002": "sakit"} and changes_of(service, "A002") == 1


@needs_chromium
async def test_a_result_without_an_usulan_is_shown_as_text_without_buttons(
    writes_mcp: str, server_env: dict[str, str], tmp_path: Path
) -> None:
    async def person(_ctx: ClientRequestContext, _params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(action="accept", content={"setuju": True})

    async with Client(writes_mcp, mode="2026-07-28", cache=None, elicitation_callback=person) as client:
        contents = (await client.read_resource(KONFIRMASI)).contents[0]
        written = dump(await client.call_tool("catat_absensi", ROLL_CALL))  # confirmed by a form: no usulan
    assert isinstance(contents, TextResourceContents) and META not in written.get("_meta", {})
    assert written["structuredContent"]["hasil"] == "ditulis"
    assert CHROMIUM is not None
    with browser(CHROMIUM, tmp_path / "profile") as chrome:
        host = Host(chrome, tmp_path / "host.html", contents.text, written, TELLS)
        drawn, errors = host.drawn(), chrome.errors
    assert drawn["buttons"] == [] and written["structuredContent"]["pesan"] in drawn["text"]
    assert errors == []


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
async def test_the_model_calling_the_app_only_tool_without_the_key_writes_nothing(
    writes_mcp: str, server_env: dict[str, str], era: str
) -> None:
    _, result = await propose(writes_mcp, "2026-07-28")  # (the handshake era cannot propose here: see above)
    id_usulan, kunci = key_of(result)
    async with apps_client(writes_mcp, era) as model:
        no_key = await model.call_tool("putuskan_usulan", {"id_usulan": id_usulan, "keputusan": "setuju"})
        guessed = await model.call_tool("putuskan_usulan", {"id_usulan": id_usulan, "kunci": "K" * 32,
                                                            "keputusan": "setuju"})  # fmt: skip
        other_id = await model.call_tool("putuskan_usulan", {"id_usulan": "U" * 32, "kunci": kunci,
                                                             "keputusan": "setuju"})  # fmt: skip
        checked = await model.call_tool("cek_usulan", {"id_usulan": id_usulan})
    assert no_key.is_error and guessed.is_error and other_id.is_error
    assert "tidak cocok" in guessed.content[0].text  # type: ignore[union-attr]
    assert "tidak ditemukan" in other_id.content[0].text  # type: ignore[union-attr]
    assert (checked.structured_content or {})["status"] == "menunggu"
    assert recorded(server_env["ASRAMA_API_URL"]) == {}
