"""The remote page (`--auth sekolah`, channel `halaman`) as a URL-mode elicitation, for a host that declares one.

On 2026-07-28 a write whose usulan waits on `/usulan/<id>` answers an `InputRequiredResult` whose one input request
is an `elicitation/create` with `mode: "url"`: the page's URL (no secret in it: the page answers only the session
of the usulan's own subject; 2026-07-28 has no `elicitationId`) and a message naming no one. Its `requestState`
(sealed by the SDK, bound to the tool, its arguments and the caller's token, claimed once by `guard.confirm`) only
carries the usulan's id. The retry writes nothing — the page writes, once — and answers how the usulan stands:
written (the write's own result), declined, expired or changed on the page, or still waiting (the link, and
`cek_usulan`). A host that declined or cancelled opening it is told that nothing is written yet, and that the page
can still decide the usulan until it expires. Any other host gets the link in the result (`REMOTE_PAGE`); a
handshake-era request over our stateless HTTP cannot be asked anything in the middle of a call.
"""

import json
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, ElicitRequest, ElicitRequestURLParams, ElicitResult, InputRequiredResult

from mcp_asrama.server.asrama_server import AsramaServer, state_of, tool_result
from mcp_asrama.server.guard import audit, writes
from mcp_asrama.server.guard.usulan import Usulan

if TYPE_CHECKING:
    from mcp_asrama.server.features.write import HasilTulis, Konfirmasi, Penulisan

KEY = "mcp_asrama:halaman"  # the input request's key
STATE = "asrama/halaman"  # the requestState's one field: the usulan's id
REMOTE_PAGE = (
    "pada halaman {url} (berikan tautan ini kepada pengguna: ia membukanya di peramban dan masuk dengan akun "
    "sekolahnya)"
)
MESSAGE = (
    "Asisten mengusulkan pencatatan ({tool}). Buka halaman ini dan masuk dengan akun sekolah Anda untuk melihatnya, "
    "lalu setujui atau tolak. Tidak ada yang dicatat tanpa keputusan Anda di halaman itu."
)
CHECK = "Periksa dengan cek_usulan(id_usulan) setelah pengguna memutuskan; jangan panggil tool tulis ini lagi."
WAITING = (
    "Halaman persetujuan sudah diberikan kepada pengguna; belum ada yang dicatat. Menunggu keputusannya di {url}. "
)
NOT_OPENED = (
    "Pengguna {how} halaman persetujuan; belum ada yang dicatat. Usulan ini masih bisa diputuskan di {url} sampai "
    "kedaluwarsa: bila pengguna memutuskannya di sana, periksa dengan cek_usulan(id_usulan). Jangan panggil tool "
    "tulis ini lagi kecuali pengguna memintanya."
)
DECIDED = {
    "ditolak": "Ditolak pengguna di halaman persetujuan; tidak ada yang dicatat. Tanyakan apa yang perlu diubah.",
    "kedaluwarsa": "Usulan kedaluwarsa sebelum diputuskan; tidak ada yang dicatat. Panggil lagi bila masih perlu.",
    "berubah": "Data berubah sebelum disetujui; tidak ada yang dicatat.",
}
WRITTEN = "Disetujui pengguna dan sudah dicatat."
CHANGED = "Data berubah sebelum disetujui; tidak ada yang dicatat. Pengguna diminta memutuskan usulan baru di {url}. "
UNKNOWN = "Usulan tidak ditemukan (atau bukan milik Anda). Panggil lagi tool tulisnya untuk usulan baru."


def page_of(book: "Konfirmasi", id_usulan: str) -> str:
    """The usulan's page on this server."""
    return f"{book.alamat}/usulan/{id_usulan}"


def asks_url(ctx: Context[Any, Any]) -> bool:
    """Whether this request can be asked to open a URL: 2026-07-28 (an `InputRequiredResult`, no back-channel needed)
    from a host that declared URL-mode elicitation (in the request's `_meta`)."""
    declared = ctx.client_capabilities
    elicitation = declared.elicitation if declared is not None else None
    return writes.modern(ctx) and elicitation is not None and elicitation.url is not None


def ask(tool: str, url: str, id_usulan: str) -> InputRequiredResult:
    """The URL-mode elicitation of the usulan's page; the retry carries the usulan's id back."""
    params = ElicitRequestURLParams(message=MESSAGE.format(tool=tool), url=url)
    return InputRequiredResult(
        input_requests={KEY: ElicitRequest(params=params)}, request_state=json.dumps({STATE: id_usulan})
    )


def resumed(ctx: Context[Any, Any]) -> str | None:
    """The usulan whose page a retry answers: the id our own `requestState` carries (verified by the SDK's boundary,
    which hands on only what it sealed), or None for any other round."""
    if not writes.modern(ctx) or not ctx.request_state:
        return None
    try:
        state = json.loads(ctx.request_state)
    except ValueError:
        return None
    found = state.get(STATE) if isinstance(state, dict) else None
    return found if isinstance(found, str) else None


def reshown(ctx: Context[Any, Any], usulan: Usulan) -> None:
    """An usulan's written result shown again (`cek_usulan`, a page's retry): a clinic tool's carries the visit's
    health details, so the line is a health disclosure of its student, as the write's own was."""
    server = ctx.mcp_server
    if isinstance(server, AsramaServer) and "clinic" in server.needs_of(usulan.tool):
        audit.disclose_health([str(v) for k, v in usulan.arguments.items() if k == "id_anak"])


async def report(
    ctx: Context[Any, Any], spec: "Penulisan[Any]", id_usulan: str
) -> CallToolResult | InputRequiredResult:
    """The retry of a page's URL elicitation: how the usulan stands, for its own subject only. Writes nothing."""
    book: Konfirmasi = state_of(ctx).konfirmasi
    usulan = await book.store.ambil(id_usulan)
    if usulan is None or usulan.subject != writes.actor(ctx) or (usulan.tool, usulan.saluran) != (spec.tool, "halaman"):
        audit.note_write("refused", saluran="halaman")
        raise ToolError(UNKNOWN)
    audit.note_write("proposed", saluran="halaman")
    answer = (ctx.input_responses or {}).get(KEY)
    action = answer.action if isinstance(answer, ElicitResult) else None
    decided = await book.store.putusan(id_usulan)
    url = page_of(book, id_usulan)
    status = decided.status if decided else "kedaluwarsa" if usulan.kedaluwarsa() else "menunggu"
    result: HasilTulis
    if decided is not None and status == "ditulis":  # the write's own result, as cek_usulan gives it
        reshown(ctx, usulan)
        result = spec.hasil.model_validate(
            {"hasil": "ditulis", "pesan": WRITTEN, **(decided.hasil or {}), "id_usulan": id_usulan}
        )
    elif decided is not None and status == "berubah" and decided.pengganti:
        pesan = CHANGED.format(url=page_of(book, decided.pengganti)) + CHECK
        result = spec.hasil(hasil="menunggu", pesan=pesan, id_usulan=decided.pengganti)
    elif status != "menunggu":
        result = spec.hasil(hasil="dibatalkan" if status != "ditolak" else "ditolak", pesan=DECIDED[status])
    elif action is None:  # retried without the answer: ask again
        return ask(spec.tool, url, id_usulan)
    elif action == "accept":
        result = spec.hasil(hasil="menunggu", pesan=WAITING.format(url=url) + CHECK, id_usulan=id_usulan)
    else:
        pesan = NOT_OPENED.format(how="menolak membuka" if action == "decline" else "batal membuka", url=url)
        result = spec.hasil(hasil="ditolak" if action == "decline" else "dibatalkan", pesan=pesan, id_usulan=id_usulan)
    return tool_result(result)
