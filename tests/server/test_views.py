"""MCP Apps views: the three charting tools point at their `ui://asrama/...` view and every write tool at the
confirm view, the views are self-contained HTML served as `text/html;profile=mcp-app`, the extension is advertised,
and the tool results are the same whether or not the host renders Apps (their text stays complete)."""

import re
from typing import Any

import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.client.extension import ClientExtension
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID
from mcp_types import TextResourceContents

from mcp_asrama.server import views
from tests.server.conftest import server_for
from tests.server.support import call_ok

pytestmark = pytest.mark.anyio

LINKED = {
    "absensi_harian": "ui://asrama/absensi-harian",
    "rekap_absensi": "ui://asrama/rekap-absensi",
    "progres_hafalan": "ui://asrama/progres-hafalan",
}
CALLS: dict[str, dict[str, Any]] = {
    "absensi_harian": {"tanggal": "2026-10-06"},
    "rekap_absensi": {"dari": "2026-10-01", "sampai": "2026-10-31"},
    "progres_hafalan": {},
}


class AppsHost(ClientExtension):
    """A host that renders MCP Apps views, as it advertises them."""

    identifier = EXTENSION_ID

    def settings(self) -> dict[str, Any]:
        return {"mimeTypes": [APP_MIME_TYPE]}


async def test_the_charting_tools_link_their_views_and_no_other_tool_does(mcp: Client) -> None:
    tools = {t.name: t for t in (await mcp.list_tools()).tools}
    linked = {name: (t.meta or {}).get("ui", {}).get("resourceUri") for name, t in tools.items()}
    assert {name: uri for name, uri in linked.items() if uri} == LINKED
    assert list(tools)[3:5] == ["absensi_harian", "rekap_absensi"]  # the fixed order hosts cache is kept


async def test_each_view_is_self_contained_html_for_apps(mcp: Client) -> None:
    listed = {str(r.uri): r for r in (await mcp.list_resources()).resources if str(r.uri).startswith("ui://")}
    views = [*LINKED.values(), "ui://asrama/konfirmasi"]  # the confirm view: linked by the write tools
    assert sorted(listed) == sorted(views)
    for uri in views:
        assert listed[uri].mime_type == APP_MIME_TYPE and listed[uri].title
        contents = (await mcp.read_resource(uri)).contents
        assert len(contents) == 1 and isinstance(contents[0], TextResourceContents)
        assert contents[0].mime_type == APP_MIME_TYPE
        html = contents[0].text
        assert f'data-view="{uri.removeprefix("ui://asrama/")}"' in html
        assert "ui/initialize" in html and "ui/notifications/tool-result" in html
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", html), "a view loads nothing from the network"
        assert not re.search(r"\b(fetch|XMLHttpRequest|WebSocket|innerHTML)\b", html)


async def test_every_write_tool_links_the_confirm_view(service_app: FastAPI, era: str) -> None:
    async with Client(server_for(service_app, writes=True), mode=era, cache=None) as client:
        tools = (await client.list_tools()).tools
    writing = {
        t.name: (t.meta or {}).get("ui", {}) for t in tools if t.annotations and not t.annotations.read_only_hint
    }
    listed = {"catat_absensi", "ajukan_izin", "akhiri_izin", "catat_pelanggaran", "catat_setoran_hafalan"}
    assert {*listed, "putuskan_usulan"} <= set(writing)  # the writes this caller sees, and the view's decision
    assert {ui.get("resourceUri") for ui in writing.values()} == {views.KONFIRMASI}
    assert [name for name, ui in writing.items() if ui.get("visibility")] == ["putuskan_usulan"]
    assert writing["putuskan_usulan"]["visibility"] == ["app"]


async def test_only_the_confirm_view_carries_the_buttons_and_the_decision(mcp: Client) -> None:
    html = {uri: (await mcp.read_resource(uri)).contents[0] for uri in [*LINKED.values(), views.KONFIRMASI]}
    texts = {uri: c.text for uri, c in html.items() if isinstance(c, TextResourceContents)}
    confirm = texts.pop(views.KONFIRMASI)
    for needed in ('"data-keputusan"', '"putuskan_usulan"', '"asrama/usulan"', "ui/update-model-context"):
        assert needed in confirm
    assert texts and not any("putuskan_usulan" in text or "data-keputusan" in text for text in texts.values())


async def test_the_apps_extension_is_advertised_on_2026_07_28(service_app: FastAPI) -> None:
    async with Client(server_for(service_app), mode="2026-07-28", cache=None) as client:
        discovered = await client.session.send_discover("2026-07-28")
    assert discovered["capabilities"]["extensions"] == {EXTENSION_ID: {}}


@pytest.mark.parametrize("tool", list(CALLS))
async def test_results_are_the_same_for_hosts_with_and_without_apps(service_app: FastAPI, era: str, tool: str) -> None:
    server = server_for(service_app)
    async with Client(server, mode=era, cache=None) as plain:
        without = await call_ok(plain, tool, CALLS[tool])
    async with Client(server, mode=era, cache=None, extensions=[AppsHost()]) as host:
        with_apps = await call_ok(host, tool, CALLS[tool])
    assert with_apps == without and without["jumlah_anak"] > 0


def test_a_link_to_a_view_that_does_not_exist_is_refused() -> None:
    with pytest.raises(ValueError, match="no view"):
        views.link("ui://asrama/tidak-ada")
