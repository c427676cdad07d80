"""The MCP Apps views in a real browser: headless Chromium opens a host page that plays the host's side of the Apps
postMessage protocol (answers `ui/initialize`, sends `ui/notifications/tool-input` and `-/tool-result`, follows
`size-changed`) around the view read from a real `mcp-asrama serve`, with a real tool result of it, under the host's
default CSP (no network). The charts' elements and labels are checked, no console error is allowed, and a screenshot
of each view is saved to docs/."""

import json
import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_types import TextResourceContents

from tests.conftest import insert_rows
from tests.e2e.chromium import browser
from tests.server.conftest import MORE_ABSENSI, make_service
from tests.server.support_records import seed_hafalan

CHROMIUM = os.environ.get("ASRAMA_TEST_CHROMIUM")
DOCS = Path(__file__).resolve().parents[2] / "docs"

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        not CHROMIUM, reason="ASRAMA_TEST_CHROMIUM is not set (scripts/chromium-for-tests.sh installs it)"
    ),
]

# The host's default CSP of the Apps spec for a view that declares no domains (injected as hosts do).
CSP = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; media-src 'self' data:; connect-src 'none'"
)

HOST = """<!DOCTYPE html>
<html lang="id"><head><meta charset="utf-8"><title>host</title>
<style>body { margin: 0; background: #f1f3f5; } iframe { border: 0; width: 720px; height: 200px; background: #fff; }
</style></head>
<body><iframe id="view" sandbox="allow-scripts"></iframe>
<script>
"use strict";
const VIEW = __VIEW__, CALL = __CALL__, CSP = __CSP__;
const frame = document.getElementById("view");
window.hostLog = [];
function post(message) { frame.contentWindow.postMessage(Object.assign({ jsonrpc: "2.0" }, message), "*"); }
window.addEventListener("message", function (event) {
  if (event.source !== frame.contentWindow) return;
  const msg = event.data;
  window.hostLog.push(msg);
  if (msg.method === "ui/initialize") {
    post({ id: msg.id, result: { protocolVersion: msg.params.protocolVersion,
      hostInfo: { name: "asrama-test-host", version: "1" }, hostCapabilities: {},
      hostContext: { theme: "light", displayMode: "inline", locale: "id-ID" } } });
  } else if (msg.method === "ui/notifications/initialized") {
    post({ method: "ui/notifications/tool-input", params: { arguments: CALL.arguments } });
    post({ method: "ui/notifications/tool-result", params: CALL.result });
  } else if (msg.method === "ui/notifications/size-changed") {
    frame.style.height = msg.params.height + "px";
  }
});
const csp = '<meta http-equiv="Content-Security-Policy" content="' + CSP + '">';
frame.srcdoc = VIEW.replace("<head>", "<head>" + csp);
</script></body></html>
"""

CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("absensi_harian", {"tanggal": "2026-10-07"}, ["Hadir", "Izin", "Sakit", "Alpa", "Belum dicatat"]),
    ("rekap_absensi", {"dari": "2026-10-01", "sampai": "2026-10-31"}, ["Hadir", "Izin", "Sakit", "Alpa"]),
    ("progres_hafalan", {}, []),
]

# What the view drew: the title, each chart's bars (label, value) and the table rows.
DRAWN = """(() => ({
  title: document.querySelector("h1") && document.querySelector("h1").textContent,
  charts: Array.from(document.querySelectorAll("svg.chart")).map((svg) => ({
    name: svg.dataset.chart,
    bars: Array.from(svg.querySelectorAll("rect.bar")).map((r) => [r.dataset.label, Number(r.dataset.value)]),
    labels: Array.from(svg.querySelectorAll("text.label")).map((t) => t.textContent),
  })),
  rows: Array.from(document.querySelectorAll("table tr")).slice(1).map((tr) => tr.cells[0].textContent),
}))()"""


def script_json(value: Any) -> str:
    """`value` as a JavaScript literal safe inside a <script> element."""
    return json.dumps(value, ensure_ascii=False).replace("</", "<\\/")


async def view_and_result(mcp_url: str, tool: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The HTML of `tool`'s view and one real result of it, from the MCP server over HTTP."""
    async with Client(mcp_url, mode="2026-07-28", cache=None) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        uri = (listed[tool].meta or {})["ui"]["resourceUri"]
        contents = (await client.read_resource(uri)).contents[0]
        assert isinstance(contents, TextResourceContents)
        result = await client.call_tool(tool, arguments)
    assert not result.is_error
    return contents.text, result.model_dump(by_alias=True, mode="json", exclude_none=True)


@pytest.fixture
def school(live_service: str, tmp_path: Path) -> str:
    """The live service's school with more days of attendance and some hafalan deposits."""
    db_url = f"sqlite:///{tmp_path / 'asrama.db'}"
    insert_rows(db_url, kamar=[], anak=[], absensi=MORE_ABSENSI)
    return db_url


@pytest.mark.parametrize(("tool", "arguments", "statuses"), CASES)
async def test_view_draws_a_real_tool_result_in_chromium(
    school: str, mcp_url: str, tmp_path: Path, tool: str, arguments: dict[str, Any], statuses: list[str]
) -> None:
    app = make_service(school)
    await seed_hafalan(app)
    app.state.engine.dispose()
    html, result = await view_and_result(mcp_url, tool, arguments)
    body = result["structuredContent"]
    host = tmp_path / "host.html"
    call = {"arguments": arguments, "result": result}
    host.write_text(
        HOST.replace("__VIEW__", script_json(html))
        .replace("__CALL__", script_json(call))
        .replace("__CSP__", script_json(CSP))
    )
    assert CHROMIUM is not None
    with browser(CHROMIUM, tmp_path / "profile") as chrome:
        chrome.send("Emulation.setDeviceMetricsOverride", session=chrome.session, width=760, height=520,
                    deviceScaleFactor=1, mobile=False)  # fmt: skip
        chrome.send("Page.navigate", session=chrome.session, url=host.as_uri())
        sizes = chrome.wait_for(
            "window.hostLog && window.hostLog.filter((m) => m.method === 'ui/notifications/size-changed').length"
        )
        methods = chrome.evaluate("window.hostLog.map((m) => m.method || 'response')")
        (frame,) = chrome.child_frames()
        drawn = chrome.evaluate(DRAWN, context=chrome.frame_context(frame))
        chrome.screenshot(DOCS / f"view-{tool.replace('_', '-')}.png")
        errors = chrome.errors
    assert methods[:2] == ["ui/initialize", "ui/notifications/initialized"] and sizes == 1
    assert errors == []
    charts = {chart["name"]: chart for chart in drawn["charts"]}
    if tool == "progres_hafalan":
        assert drawn["title"] == "Progres hafalan"
        expected = [[r["nama"] + f" ({r['kelas']})", r["juz"]] for r in body["data"]]
        assert charts["juz"]["bars"] == expected and any(juz > 0 for _, juz in expected)
        return
    counts = body["per_status"] if tool == "absensi_harian" else body["total"]
    assert [label for label, _ in charts["status"]["bars"]] == statuses == charts["status"]["labels"]
    assert [value for _, value in charts["status"]["bars"]] == [counts[k] for k in counts]
    if tool == "absensi_harian":
        assert drawn["title"] == "Absensi 2026-10-07"
        assert drawn["rows"] == [f"{r['nama']} ({r['kelas']})" for r in body["tidak_hadir"]] != []
    else:
        top = body["paling_sering_tidak_hadir"]
        assert charts["tidak-hadir"]["bars"] == [[f"{r['nama']} ({r['kelas']})", r["tidak_hadir"]] for r in top] != []
