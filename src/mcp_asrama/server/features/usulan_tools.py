"""Deciding an usulan: `putuskan` (shared by the confirm view's app-only tool and the browser page), `cek_usulan`
(read-only: how an usulan stands) and `putuskan_usulan` (the view's button; `_meta.ui.visibility: ["app"]`).

A decision needs the secret of its channel — the view's `kunci` (only ever in a result's `_meta`, which is not for
the model) or the page's secret (only in the URL's fragment the server opened itself) — and the usulan's own
subject: anyone else is told "not found", exactly as for an id that never existed. It is claimed once, atomically;
`setuju` builds the plan again from the data as it is then: a different question writes nothing, marks the usulan
`berubah` and makes a new one with the new question for the person to decide again; the same question is written
once, under an Idempotency-Key derived from the usulan. Every decision is audited with its channel and subject.
"""

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from mcp_asrama.client import AsramaError
from mcp_asrama.server.asrama_server import AsramaServer, tool_result
from mcp_asrama.server.features.common import READ_ONLY, Result, add_tools
from mcp_asrama.server.features.write import META, Konfirmasi, Pertanyaan, Tulis, konfirmasi_of
from mcp_asrama.server.features.write_url import reshown
from mcp_asrama.server.guard import audit, writes
from mcp_asrama.server.guard.scoped import ScopedReader, scoped_reader
from mcp_asrama.server.guard.usulan import Putusan, Status, Usulan, baru, digest, matches
from mcp_asrama.server.settings import Saluran
from mcp_asrama.server.views import KONFIRMASI, link

IdUsulan = Annotated[str, Field(pattern=r"^[A-Za-z0-9_\-]{16,64}$", description="Id usulan dari hasil tool tulis")]
Kunci = Annotated[str, Field(pattern=r"^[A-Za-z0-9_\-]{16,64}$", description="Kunci sekali pakai milik tampilan")]
DECIDES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)
NOT_FOUND = "Usulan tidak ditemukan (atau bukan milik Anda). Panggil lagi tool tulisnya untuk usulan baru."
WRONG_KEY = "Kunci usulan tidak cocok; tidak ada yang dicatat."
PESAN: dict[Status, str] = {
    "menunggu": "Masih menunggu keputusan pengguna; jangan panggil tool tulisnya lagi.",
    "ditulis": "Disetujui pengguna dan sudah dicatat.",
    "ditolak": "Ditolak pengguna; tidak ada yang dicatat. Tanyakan apa yang perlu diubah.",
    "kedaluwarsa": "Usulan kedaluwarsa sebelum diputuskan; tidak ada yang dicatat. Panggil lagi bila masih perlu.",
    "berubah": "Data berubah sebelum disetujui; tidak ada yang dicatat. Pengguna diminta memutuskan usulan baru.",
}


class HasilUsulan(Result):
    """How an usulan stands: its status, the write's result once written, or the new usulan after a change."""

    id_usulan: str
    status: Status
    tool: str
    pesan: str
    hasil: dict[str, Any] | None = Field(None, description="Hasil tool tulis bila sudah dicatat")
    id_usulan_baru: str | None = Field(None, description="Usulan baru dengan pertanyaan terbaru (status berubah)")
    pertanyaan: str | None = Field(None, description="Pertanyaan terbaru yang kini diajukan (status berubah)")


def _answer(usulan: Usulan, putusan: Putusan | None, **more: Any) -> HasilUsulan:
    status: Status = putusan.status if putusan else "kedaluwarsa" if usulan.kedaluwarsa() else "menunggu"
    hasil = putusan.hasil if putusan else None
    return HasilUsulan(id_usulan=usulan.id, status=status, tool=usulan.tool, pesan=PESAN[status], hasil=hasil, **more)


async def _again(book: Konfirmasi, usulan: Usulan, question: Pertanyaan) -> tuple[Usulan, str]:
    """A new usulan for the new question (same subject, tool, arguments, channel, lifetime), and its secret."""
    fresh, secret = baru(
        subject=usulan.subject,
        tool=usulan.tool,
        arguments=usulan.arguments,
        pertanyaan=question.teks,
        saluran=usulan.saluran,
        sampai=usulan.sampai,
    )
    await book.store.simpan(fresh)
    return fresh, secret


async def putuskan(
    book: Konfirmasi,
    reader: ScopedReader,
    subject: str,
    id_usulan: str,
    rahasia: str | None,
    keputusan: Literal["setuju", "tolak"],
    saluran: Saluran,
) -> tuple[HasilUsulan, str | None]:
    """Decide an usulan on `saluran` with its secret: the outcome, and the new usulan's secret when the question
    changed (for the view or the page to ask again). A ToolError for anything that may not decide it.
    `rahasia` None: the page of a remote server (`--auth sekolah`), whose caller has checked that the signed-in
    person is `subject`; that page's usulan carry no secret anyone is told."""
    usulan = await book.store.ambil(id_usulan)
    if usulan is None or usulan.subject != subject:
        audit.note_write("refused", saluran=saluran)
        raise ToolError(NOT_FOUND)
    secret = usulan.kunci if saluran == "tampilan" else usulan.halaman
    if usulan.saluran != saluran or not (saluran == "halaman" if rahasia is None else matches(rahasia, secret)):
        audit.note_write("refused", saluran=saluran)
        raise ToolError(WRONG_KEY)
    if not await book.store.klaim(id_usulan):
        audit.note_write("replayed", saluran=saluran)
        done = await book.store.putusan(id_usulan)
        raise ToolError(f"Usulan ini sudah diputuskan ({done.status if done else 'sedang diproses'}).")
    if usulan.kedaluwarsa():
        await book.store.putus(id_usulan, Putusan("kedaluwarsa", saluran))
        audit.note_write("expired", saluran=saluran)
        raise ToolError(PESAN["kedaluwarsa"])
    if keputusan == "tolak":
        await book.store.putus(id_usulan, Putusan("ditolak", saluran))
        audit.note_write("declined", saluran=saluran)
        return _answer(usulan, Putusan("ditolak", saluran)), None
    spec = book.spesifikasi[usulan.tool]
    try:
        plan = await spec.plan_of(reader, **spec.arguments(usulan.arguments))
    except (ToolError, AsramaError):
        await book.store.lepas(id_usulan)  # the data no longer allows it (or the service failed): decide again
        raise
    question = spec.question_of(plan)
    if question is None or digest(question.teks) != usulan.fingerprint:
        fresh, secret = await _again(book, usulan, question) if question is not None else (None, None)
        await book.store.putus(id_usulan, Putusan("berubah", saluran, pengganti=fresh.id if fresh else None))
        audit.note_write("changed", saluran=saluran)
        if question is not None:
            question.disclosed()
        more = {"id_usulan_baru": fresh.id, "pertanyaan": fresh.pertanyaan} if fresh else {}
        return _answer(usulan, Putusan("berubah", saluran), **more), secret
    try:
        result, changes = await spec.write(Tulis(reader, subject, "asrama-usulan-" + digest(id_usulan)[:40]), plan)
    except ToolError:
        await book.store.lepas(id_usulan)  # nothing written (or unknown: the key makes a retry safe)
        raise
    done = Putusan("ditulis", saluran, hasil=result.model_dump(mode="json", exclude_none=True))
    await book.store.putus(id_usulan, done)
    audit.note_write("accepted", changes, saluran=saluran)
    return _answer(usulan, done), None


async def cek_usulan(ctx: Context, id_usulan: IdUsulan) -> Annotated[CallToolResult, HasilUsulan]:
    """Periksa usulan tulis yang menunggu keputusan pengguna (id_usulan dari hasil tool tulis): status menunggu,
    ditulis (dengan hasilnya), ditolak, kedaluwarsa, atau berubah (data berubah; pengguna diminta memutuskan usulan
    baru). Jangan panggil tool tulisnya lagi selama masih menunggu."""
    book = konfirmasi_of(ctx)
    usulan = await book.store.ambil(id_usulan)
    if usulan is None or usulan.subject != writes.actor(ctx):
        raise ToolError(NOT_FOUND)
    putusan = await book.store.putusan(id_usulan)
    if putusan is None and usulan.kedaluwarsa() and await book.store.klaim(id_usulan):  # seen expired: once
        putusan = Putusan("kedaluwarsa", usulan.saluran)
        await book.store.putus(id_usulan, putusan)
        audit.note_write("expired", saluran=usulan.saluran)
    if putusan is not None and putusan.hasil is not None:
        reshown(ctx, usulan)
    more = {}
    if putusan is not None and putusan.pengganti:
        fresh = await book.store.ambil(putusan.pengganti)
        more = {"id_usulan_baru": putusan.pengganti, "pertanyaan": fresh.pertanyaan if fresh else None}
    return tool_result(_answer(usulan, putusan, **more))


async def putuskan_usulan(
    ctx: Context,
    id_usulan: IdUsulan,
    kunci: Kunci,
    keputusan: Annotated[Literal["setuju", "tolak"], Field(description="Keputusan pengguna")],
) -> Annotated[CallToolResult, HasilUsulan]:
    """Keputusan pengguna atas satu usulan, dari tombol pada tampilan persetujuan (hanya untuk tampilan, bukan
    untuk model): setuju mencatatnya, tolak membatalkannya."""
    book = konfirmasi_of(ctx)
    answer, secret = await putuskan(
        book, scoped_reader(ctx), writes.actor(ctx), id_usulan, kunci, keputusan, "tampilan"
    )
    result = tool_result(answer)
    if secret is not None and answer.id_usulan_baru:
        result.meta = {META: {"id": answer.id_usulan_baru, "kunci": secret}}
    return result


def register(server: AsramaServer) -> None:
    """Add the usulan tools: the read (for the model), then the view's decision (app-only)."""
    add_tools(server, {cek_usulan: "Cek usulan"}, READ_ONLY, needs="writes")
    app_only = {**link(KONFIRMASI), "ui": {**link(KONFIRMASI)["ui"], "visibility": ["app"]}}
    add_tools(server, {putuskan_usulan: "Putuskan usulan"}, DECIDES, meta=app_only)
