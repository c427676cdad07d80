"""Leave (izin): list who is away, ask for a leave, end one when the student is back.

An izin is named by its handle: the random id `ajukan_izin` returns (never a counter), valid until the izin is
ended. Its reason (`alasan`) goes to the service and is never shown again: no output model here declares it.
Asking for a leave shows each day whose attendance it changes (old → izin) and carries those old records to the
service, which writes nothing when one changed meanwhile (another musyrif's roll call is never overwritten
unseen): the person is asked again.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from mcp_asrama.client import NotFound
from mcp_asrama.client.client import Values
from mcp_asrama.client.models import BELUM_DICATAT, Anak, DaftarIzin, Izin
from mcp_asrama.contract.izin import AbsensiLama, IzinIn
from mcp_asrama.privacy import RESULT_BUDGET, fitting_count
from mcp_asrama.server.arguments import Alasan, IdAnak, IdIzin, JenisIzin, Kamar, Kelas, Tanggal
from mcp_asrama.server.asrama_server import AsramaServer, tool_result
from mcp_asrama.server.features.anak import satu_anak
from mcp_asrama.server.features.common import NO_ACCESS, READ_ONLY, Result, add_tools
from mcp_asrama.server.features.write import Ditulis, HasilTulis, Penulisan, Pertanyaan, Tulis, tanya
from mcp_asrama.server.guard.scope_units import gather
from mcp_asrama.server.guard.scoped import ScopedReader, scoped_reader
from mcp_asrama.server.views import KONFIRMASI, link

RINGKASAN = "izin (daftar_izin)"
RINGKASAN_TULIS = "ajukan izin (ajukan_izin), akhiri izin (akhiri_izin)"

MAX_DAYS = 30
IZIN_PAGE = 500  # the service's largest page of izin
CREATES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)
ENDS = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)
UNKNOWN_HANDLE = (
    "Izin dengan id itu tidak ditemukan (atau di luar wewenang Anda). Lihat id izin yang berjalan dengan "
    "daftar_izin(aktif=true), lalu panggil lagi."
)
UNSUPPORTED = "Layanan data asrama ini tidak mendukung izin lewat asisten (butuh layanan mcp-asrama)."
CHANGED = (
    "Absensi anak pada hari-hari izin itu berubah sejak pengguna ditanya (ada yang mencatat lebih dulu); tidak ada "
    "yang dicatat. Panggil ajukan_izin lagi dengan argumen yang sama: pengguna akan ditanya ulang dengan data terbaru."
)


class DataIzin(Izin):
    """One izin, without its reason (never even read from the service)."""

    id: str = Field(description="Id izin (untuk akhiri_izin); berlaku sampai izin diakhiri")
    tanggal_kembali: date | None = Field(None, description="Kosong: anak belum kembali")
    aktif: bool = Field(description="Berjalan hari ini")


class HasilDaftarIzin(Result):
    """The izin of the filters that the caller may see, latest first."""

    jumlah: int
    data: list[DataIzin]
    catatan: str | None = None


class HasilIzin(HasilTulis):
    """What happened to an izin request: written (with the izin), declined, cancelled, or waiting (an usulan)."""

    izin: DataIzin | None = None


async def cari_izin(
    reader: ScopedReader, *, aktif: bool | None, kelas: str | None, kamar: str | None, tanggal: date | None = None
) -> tuple[list[Izin], bool]:
    """The visible izin of the filters, latest first, and whether that is all of them (each upstream request
    gives at most `IZIN_PAGE`)."""

    def fetch(k: Values, m: Values) -> Awaitable[DaftarIzin]:
        return reader.client.daftar_izin(aktif=aktif, kelas=k, kamar=m, tanggal=tanggal, limit=IZIN_PAGE)

    pages = await reader.per_unit(kelas, kamar, fetch)
    merged = {i.id: i for page in pages for i in reader.visible_rows(page.data)}
    ordered = sorted(merged.values(), key=lambda i: (i.dari, i.id), reverse=True)
    return ordered, all(page.total <= len(page.data) for page in pages)


def _data(izin: Izin) -> DataIzin:
    return DataIzin.model_validate(izin.model_dump())


async def daftar_izin(
    ctx: Context,
    aktif: Annotated[bool | None, Field(description="true: yang berjalan hari ini; false: yang tidak")] = None,
    kelas: Kelas = None,
    kamar: Kamar = None,
) -> Annotated[CallToolResult, HasilDaftarIzin]:
    """Daftar izin anak (pulang, sakit, keperluan), terbaru dulu: id izin, anak, tanggal dari–sampai, jenis,
    tanggal_kembali dan apakah berjalan hari ini. Filter opsional: aktif=true untuk yang sedang berjalan, kelas,
    kamar. Id izin dipakai untuk akhiri_izin."""
    reader = scoped_reader(ctx)
    found, complete = await cari_izin(reader, aktif=aktif, kelas=kelas, kamar=kamar)
    rows = [_data(i) for i in found]
    shown = fitting_count(rows, RESULT_BUDGET)
    notes = [NO_ACCESS] if reader.akses.kosong else []
    if shown < len(rows) or not complete:
        notes.append("Daftar dipotong agar ringkas; persempit dengan aktif, kelas atau kamar.")
    return tool_result(HasilDaftarIzin(jumlah=len(rows), data=rows[:shown], catatan=" ".join(notes) or None))


@dataclass(frozen=True)
class HariAbsensi:
    """One day of the leave as the student's attendance stands now (`status` None: not recorded)."""

    tanggal: date
    status: str | None
    keterangan: str | None


@dataclass(frozen=True)
class RencanaIzin:
    """A leave as it will be asked for, with the attendance of its days as read."""

    anak: Anak
    dari: date
    sampai: date
    jenis: str
    alasan: str
    absensi: tuple[HariAbsensi, ...] = ()

    @property
    def hari(self) -> int:
        return (self.sampai - self.dari).days + 1


def _days(dari: date, sampai: date) -> list[date]:
    return [dari + timedelta(days=n) for n in range((sampai - dari).days + 1)]


async def _absensi(reader: ScopedReader, id_anak: str, dari: date, sampai: date) -> tuple[HariAbsensi, ...]:
    """The student's record of each day (at most 30): one request per day, concurrently, each a step of progress
    (the service reads attendance one day at a time; the student's visibility is already checked)."""
    days = _days(dari, sampai)
    reader.progress.expect(len(days))

    def read(day: date) -> Callable[[], Awaitable[HariAbsensi]]:
        async def one() -> HariAbsensi:
            await reader.progress.step()
            rows = (await reader.client.absensi(day, ids=[id_anak])).data
            found = next((r for r in rows if r.id_anak == id_anak and r.status != BELUM_DICATAT), None)
            return HariAbsensi(day, found.status, found.keterangan) if found else HariAbsensi(day, None, None)

        return one

    found = await gather([read(day) for day in days])
    await reader.progress.done()
    return tuple(found)


def _last_day(izin: Izin) -> date:
    """The last day an izin covers: `sampai`, or the day before the student came back."""
    return min(izin.sampai, izin.tanggal_kembali - timedelta(days=1)) if izin.tanggal_kembali else izin.sampai


async def rencana_izin(
    reader: ScopedReader, id_anak: IdAnak, dari: Tanggal, sampai: Tanggal, jenis: JenisIzin, alasan: Alasan
) -> RencanaIzin:
    """The leave, checked against the student (visible to the caller) and the student's other izin."""
    if sampai < dari:
        raise ToolError("Argumen tidak valid: sampai harus sama dengan atau sesudah dari.")
    if (sampai - dari).days >= MAX_DAYS:
        raise ToolError(f"Argumen tidak valid: izin paling lama {MAX_DAYS} hari; bagi menjadi beberapa izin.")
    anak = await satu_anak(reader, id_anak)
    try:
        others = (await reader.client.daftar_izin(id_anak=anak.id, limit=500)).data
    except NotFound:
        raise ToolError(UNSUPPORTED) from None
    clash = next((i for i in others if i.dari <= sampai and _last_day(i) >= dari), None)
    if clash is not None:
        raise ToolError(
            f"Anak {anak.id} sudah punya izin {clash.jenis} {clash.dari.isoformat()} s.d. {clash.sampai.isoformat()} "
            f"(id {clash.id}) yang bertabrakan. Pilih tanggal lain, atau akhiri izin itu dulu dengan akhiri_izin."
        )
    absensi = await _absensi(reader, anak.id, dari, sampai)
    return RencanaIzin(anak=anak, dari=dari, sampai=sampai, jenis=jenis, alasan=alasan, absensi=absensi)


def _runs_today(dari: date, sampai: date) -> bool:
    return dari <= date.today() <= sampai


def pertanyaan_izin(plan: RencanaIzin) -> Pertanyaan:
    """The question for a new leave: who, when, why, then what changes: each day's attendance that is not `izin`
    yet (old status → izin; notes are not shown) and the student's status."""
    anak = plan.anak
    lines = [
        f"Ajukan izin {plan.jenis} untuk {anak.nama} ({anak.id}): {plan.dari.isoformat()} s.d. "
        f"{plan.sampai.isoformat()} ({plan.hari} hari).",
        f"Alasan: {plan.alasan}",
        "Yang berubah:",
    ]
    lines += [
        f"- {h.tanggal.isoformat()}: {h.status or 'belum dicatat'} → izin" for h in plan.absensi if h.status != "izin"
    ]
    if _runs_today(plan.dari, plan.sampai):
        lines.append(f"- status anak {anak.status or 'aktif'} → izin selama izin berjalan")
    kept = sum(h.status == "izin" for h in plan.absensi)
    if kept:
        lines.append(f"Absensi {kept} tanggal yang sudah tercatat izin tetap izin.")
    lines.append("Absensi lama tetap tersimpan di riwayat. Setujui untuk mencatat?")
    return Pertanyaan("\n".join(lines), (anak.id,))


async def tulis_izin(tulis: Tulis, plan: RencanaIzin) -> Ditulis:
    """Record the leave once, carrying each day's record as the person was shown it (the service refuses the whole
    izin when one is no longer so: someone else recorded meanwhile)."""
    old = [
        AbsensiLama(tanggal=h.tanggal, status_lama=h.status or BELUM_DICATAT, keterangan_lama=h.keterangan)
        for h in plan.absensi
    ]
    body = IzinIn(
        id_anak=plan.anak.id,
        dari=plan.dari,
        sampai=plan.sampai,
        jenis=plan.jenis,
        alasan=plan.alasan,
        absensi_lama=old,
    )
    made = await tulis.reader.client.ajukan_izin(body, actor=tulis.actor, key=tulis.key)
    new = "izin" if made.aktif else plan.anak.status
    pesan = f"Izin tercatat dengan id {made.id}; pakai id ini untuk akhiri_izin saat anak kembali."
    changes = [{"id": made.id_anak, "old": plan.anak.status, "new": new, "izin": made.id}]
    return HasilIzin(hasil="ditulis", pesan=pesan, izin=_data(made)), changes


AJUKAN = Penulisan(
    "ajukan_izin",
    rencana_izin,
    pertanyaan_izin,
    tulis_izin,
    HasilIzin,
    conflict="Anak sudah punya izin pada sebagian tanggal itu; lihat daftar_izin lalu pilih tanggal lain.",
    not_found=UNSUPPORTED,
    changed=CHANGED,
)


ajukan_izin = AJUKAN.as_tool(
    """Ajukan izin untuk satu anak dari tanggal `dari` sampai `sampai` (YYYY-MM-DD, paling lama 30 hari), jenis
    pulang, sakit atau keperluan, dengan alasan. Absensi hari-hari itu dicatat izin dan status anak menjadi izin
    selama izin berjalan. Sebelum menulis, pengguna diminta menyetujui (dengan absensi tiap hari yang berubah);
    bila menolak, jangan ulangi tanpa diminta. Bila orang lain mencatat absensi hari-hari itu lebih dulu, tidak ada
    yang ditimpa: panggil lagi agar pengguna ditanya ulang. Hasilnya id izin (acak) untuk akhiri_izin saat anak
    kembali."""
)


@dataclass(frozen=True)
class RencanaAkhir:
    """A running izin and the day its student came back."""

    izin: Izin
    tanggal_kembali: date


Kembali = Annotated[Tanggal, Field(description="Tanggal anak kembali (YYYY-MM-DD), paling lambat hari ini")]


async def rencana_akhir(reader: ScopedReader, id_izin: IdIzin, tanggal_kembali: Kembali) -> RencanaAkhir:
    """The running izin to end, visible to the caller, and a return date it allows."""
    try:
        izin = reader.reveal(await reader.client.izin(id_izin))
    except NotFound:
        raise ToolError(UNKNOWN_HANDLE) from None
    if izin.tanggal_kembali is not None:
        raise ToolError(
            f"Izin ini sudah selesai (anak kembali {izin.tanggal_kembali.isoformat()}); tidak ada yang perlu "
            "diakhiri. Lihat izin yang masih berjalan dengan daftar_izin(aktif=true)."
        )
    if tanggal_kembali < izin.dari:
        raise ToolError(f"Argumen tidak valid: tanggal_kembali harus sama dengan atau sesudah {izin.dari.isoformat()}.")
    if tanggal_kembali > date.today():
        raise ToolError("Argumen tidak valid: tanggal_kembali tidak boleh sesudah hari ini.")
    return RencanaAkhir(izin, tanggal_kembali)


def pertanyaan_akhir(plan: RencanaAkhir) -> Pertanyaan:
    """The question for ending a leave: which one, when the student is back, then what changes."""
    izin, tanggal_kembali = plan.izin, plan.tanggal_kembali
    early = (izin.sampai - tanggal_kembali).days + 1
    when = f"lebih awal {early} hari" if early > 0 else "tepat waktu" if early == 0 else f"terlambat {-early} hari"
    lines = [
        f"Akhiri izin {izin.jenis} {izin.nama} ({izin.id_anak}), {izin.dari.isoformat()} s.d. "
        f"{izin.sampai.isoformat()}: kembali {tanggal_kembali.isoformat()} ({when}).",
        "Yang berubah:",
        "- status anak izin → aktif",
    ]
    if early > 0:
        lines.append(
            f"- absensi izin {tanggal_kembali.isoformat()} s.d. {izin.sampai.isoformat()} dihapus "
            "(tetap tersimpan di riwayat)"
        )
    return tanya(lines, izin.id_anak)


async def tulis_akhir(tulis: Tulis, plan: RencanaAkhir) -> Ditulis:
    """End the leave once."""
    ended = await tulis.reader.client.akhiri_izin(plan.izin.id, plan.tanggal_kembali, actor=tulis.actor, key=tulis.key)
    written = HasilIzin(hasil="ditulis", pesan="Izin diakhiri; anak kembali aktif.", izin=_data(ended))
    return written, [{"id": ended.id_anak, "old": "izin", "new": "aktif", "izin": ended.id}]


AKHIRI = Penulisan(
    "akhiri_izin",
    rencana_akhir,
    pertanyaan_akhir,
    tulis_akhir,
    HasilIzin,
    conflict="Izin ini sudah selesai; lihat daftar_izin(aktif=true).",
    not_found=UNKNOWN_HANDLE,
)
PENULISAN = (AJUKAN, AKHIRI)


akhiri_izin = AKHIRI.as_tool(
    """Akhiri izin (id dari ajukan_izin atau daftar_izin) saat anak kembali pada tanggal_kembali — lebih awal atau
    terlambat: status anak kembali aktif, dan pada kepulangan lebih awal absensi izin sejak tanggal itu dihapus
    (tetap di riwayat). Sebelum menulis, pengguna diminta menyetujui; bila menolak, jangan ulangi tanpa diminta."""
)


def register(server: AsramaServer) -> None:
    """Add the izin tools: the list (read-only), then the two writes."""
    add_tools(server, {daftar_izin: "Daftar izin"}, READ_ONLY)
    add_tools(server, {ajukan_izin: "Ajukan izin"}, CREATES, link(KONFIRMASI))
    add_tools(server, {akhiri_izin: "Akhiri izin"}, ENDS, link(KONFIRMASI))
