"""MCP Apps views (`io.modelcontextprotocol/ui`): `ui://asrama/...` HTML documents that draw a tool's
`structuredContent` for hosts that render Apps; the tool's text stays complete for every other host.

`build_apps()` makes the SDK's `Apps` extension holding the views (passed to `MCPServer(extensions=[...])`, which
advertises it and serves them as `text/html;profile=mcp-app` resources). The tools themselves are registered by
their domain modules in the fixed order hosts cache; `link(uri)` is the `_meta` that points one at its view, the
same `_meta.ui.resourceUri` that `Apps.tool` stamps.
"""

from typing import Any

from mcp.server.apps import Apps

from mcp_asrama.server.views.page import page

ABSENSI_HARIAN = "ui://asrama/absensi-harian"
REKAP_ABSENSI = "ui://asrama/rekap-absensi"
PROGRES_HAFALAN = "ui://asrama/progres-hafalan"
KONFIRMASI = "ui://asrama/konfirmasi"

# uri → (renderer in page.py, title, description), in the order resources/list shows them
VIEWS = {
    ABSENSI_HARIAN: (
        "absensi-harian",
        "Grafik absensi harian",
        "Jumlah per status satu hari dan anak yang tidak hadir",
    ),
    REKAP_ABSENSI: ("rekap-absensi", "Grafik rekap absensi", "Jumlah per status dan anak yang paling sering absen"),
    PROGRES_HAFALAN: ("progres-hafalan", "Grafik progres hafalan", "Juz yang sudah dihafal per anak dan rata-ratanya"),
    KONFIRMASI: ("konfirmasi", "Persetujuan pencatatan", "Pertanyaan sebuah usulan tulis dengan tombol setuju/tolak"),
}


def link(uri: str) -> dict[str, Any]:
    """The tool `_meta` that links a tool to the view at `uri`."""
    if uri not in VIEWS:
        raise ValueError(f"no view registered at {uri!r}")
    return {"ui": {"resourceUri": uri}}


def build_apps() -> Apps:
    """The Apps extension with every view; no CSP given, so the host allows no network (the views need none)."""
    apps = Apps()
    for uri, (view, title, description) in VIEWS.items():
        apps.add_html_resource(uri, page(view), name=view, title=title, description=description, prefers_border=True)
    return apps
