"""Recording a roll call: one day for up to 300 students, confirmed by a person, written all or nothing, once.

The plan (`rencana`) is built from the data on every round: the named students (each must exist and be within the
caller's scope), and with `kamar`/`kelas` and `yang_lain` every other visible student of that room or class without
a record that day or recorded `hadir` — `izin` instead for a student whose izin runs that day; one recorded `sakit`,
`izin` or `alpa` (by the clinic, the office, another musyrif) keeps it. The question lists the counts (and how many
were kept), then each change.
"""

from collections import Counter
from dataclasses import dataclass
from datetime import date
from typing import Annotated

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from mcp_asrama.client.models import BELUM_DICATAT, CatatanAbsensi
from mcp_asrama.contract.absensi import EntriAbsensi as Entri
from mcp_asrama.server.arguments import IdAnak, Kamar, Kelas, Keterangan, Status, StatusCatat, Tanggal
from mcp_asrama.server.asrama_server import AsramaServer
from mcp_asrama.server.features import absensi_reads
from mcp_asrama.server.features.common import NO_ACCESS, add_tools
from mcp_asrama.server.features.izin import cari_izin
from mcp_asrama.server.features.write import Ditulis, HasilTulis, Penulisan, Pertanyaan, Tulis
from mcp_asrama.server.guard.scoped import ScopedReader
from mcp_asrama.server.views import KONFIRMASI, link

RINGKASAN_TULIS = "catat absensi (catat_absensi)"

MAX_ROWS = 300
MAX_NOTE_SHOWN = 80
ABSENT = ("sakit", "izin", "alpa")  # a record `yang_lain` never overwrites
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)
UNSUPPORTED = (
    "Layanan data asrama ini tidak mendukung pencatatan absensi lewat asisten (butuh layanan mcp-asrama). "
    "Tidak ada yang dicatat."
)
CHANGED = (
    "Absensi berubah sejak pengguna ditanya (ada yang mencatat lebih dulu); tidak ada yang dicatat. Panggil "
    "catat_absensi lagi dengan argumen yang sama: pengguna akan ditanya ulang dengan data terbaru."
)


class EntriAbsensi(BaseModel):
    """One student's line of a roll call."""

    model_config = ConfigDict(extra="forbid")

    id_anak: IdAnak
    status: StatusCatat
    keterangan: Keterangan = None


@dataclass(frozen=True)
class Baris:
    """One student's record of the day: as it is (`lama`, None without one) and as it will be."""

    id_anak: str
    nama: str | None
    lama: str | None
    keterangan_lama: str | None
    baru: str
    keterangan: str | None

    @property
    def berubah(self) -> bool:
        return (self.lama, self.keterangan_lama) != (self.baru, self.keterangan)


@dataclass(frozen=True)
class Rencana:
    """The whole roll call as it will be written."""

    tanggal: date
    cakupan: str
    baris: list[Baris]
    dipertahankan: int = 0  # other students whose sakit/izin/alpa record `yang_lain` leaves as it is

    @property
    def berubah(self) -> list[Baris]:
        return [b for b in self.baris if b.berubah]

    def jumlah(self) -> tuple[int, int, int]:
        """(new records, changed records, unchanged records)."""
        baru = sum(b.berubah and b.lama is None for b in self.baris)
        diubah = sum(b.berubah and b.lama is not None for b in self.baris)
        return baru, diubah, len(self.baris) - baru - diubah


def _ids(ids: list[str], limit: int = 20) -> str:
    more = f" (dan {len(ids) - limit} lainnya)" if len(ids) > limit else ""
    return ", ".join(ids[:limit]) + more


def _cakupan(kelas: str | None, kamar: str | None) -> str:
    parts = [f"kamar {kamar}" if kamar else "", f"kelas {kelas}" if kelas else ""]
    return ", ".join(p for p in parts if p)


def _baris(record: CatatanAbsensi, status: str, keterangan: str | None) -> Baris:
    recorded = record.status != BELUM_DICATAT
    return Baris(
        id_anak=record.id_anak,
        nama=record.nama,
        lama=record.status if recorded else None,
        keterangan_lama=record.keterangan if recorded else None,
        baru=status,
        keterangan=keterangan,
    )


YangLain = Annotated[
    Status | None,
    Field(description="Status untuk anak lain di kamar/kelas itu yang belum dicatat atau tercatat hadir, mis. 'hadir'"),
]


async def rencana(
    reader: ScopedReader,
    tanggal: Tanggal,
    entri: Annotated[list[EntriAbsensi], Field(max_length=MAX_ROWS)],
    kamar: Kamar = None,
    kelas: Kelas = None,
    yang_lain: YangLain = None,
) -> Rencana:
    """The roll call as it will be written, from the data as it is now; a ToolError names every problem row."""
    if yang_lain is not None and not (kamar or kelas):
        raise ToolError("Argumen tidak valid: yang_lain perlu kamar atau kelas (siapa 'yang lain').")
    if not entri and yang_lain is None:
        raise ToolError("Argumen tidak valid: isi entri, atau kamar/kelas dengan yang_lain.")
    twice = sorted(i for i, n in Counter(e.id_anak for e in entri).items() if n > 1)
    if twice:
        raise ToolError(f"Argumen tidak valid: id_anak lebih dari sekali di entri: {_ids(twice)}.")
    if reader.akses.kosong:
        raise ToolError(NO_ACCESS)
    others: list[CatatanAbsensi] = []
    if yang_lain is not None:
        hari = await absensi_reads.absensi(reader, tanggal, kelas, kamar, setiap_anak=True)
        if not hari.lengkap:
            raise ToolError(UNSUPPORTED)
        others = hari.rows
        if not others:
            raise ToolError(
                f"Tidak ada anak di {_cakupan(kelas, kamar)} yang boleh Anda catat. Periksa namanya dengan "
                "daftar_kamar atau cari_anak. Tidak ada yang dicatat."
            )
    known = {r.id_anak: r for r in others}
    missing = [e.id_anak for e in entri if e.id_anak not in known]
    found = await absensi_reads.catatan_anak(reader, tanggal, missing) if missing else {}
    if found is None:
        raise ToolError(UNSUPPORTED)
    known.update(found)
    problems = [i for i in missing if i not in known]
    if problems:
        raise ToolError(
            f"Anak tidak ditemukan atau di luar wewenang Anda: {_ids(problems)}. Tidak ada yang dicatat; periksa "
            "id dengan cari_anak lalu panggil lagi."
        )
    named = {e.id_anak for e in entri}
    rest = [r for r in others if r.id_anak not in named]
    if len(entri) + len(rest) > MAX_ROWS:
        raise ToolError(
            f"Terlalu banyak anak sekaligus ({len(entri) + len(rest)}); paling banyak {MAX_ROWS} per panggilan. "
            "Bagi per kamar atau kelas. Tidak ada yang dicatat."
        )
    on_leave: set[str] = set()
    if rest:
        running, _ = await cari_izin(reader, aktif=None, kelas=kelas, kamar=kamar, tanggal=tanggal)
        on_leave = {i.id_anak for i in running}
    baris = [_baris(known[e.id_anak], e.status, e.keterangan) for e in entri]
    for record in rest:
        if record.status in ABSENT:
            baris.append(_baris(record, record.status, record.keterangan))
        elif record.id_anak in on_leave:
            kept = record.keterangan if record.status == "izin" else None
            baris.append(_baris(record, "izin", kept))
        else:
            baris.append(_baris(record, yang_lain or "hadir", None))
    return Rencana(
        tanggal=tanggal,
        cakupan=_cakupan(kelas, kamar),
        baris=baris,
        dipertahankan=sum(r.status in ABSENT for r in rest),
    )


def _status(status: str | None, keterangan: str | None) -> str:
    text = status or "belum dicatat"
    if keterangan:
        shown = keterangan if len(keterangan) <= MAX_NOTE_SHOWN else keterangan[: MAX_NOTE_SHOWN - 1] + "…"
        text += f" ({shown})"
    return text


def pertanyaan(plan: Rencana) -> Pertanyaan | None:
    """The question the person answers: counts first, then each change (name and id, old → new); None when
    nothing would change (nobody is asked)."""
    if not plan.berubah:
        return None
    baru, diubah, tetap = plan.jumlah()
    where = f" — {plan.cakupan}" if plan.cakupan else ""
    lines = [
        f"Catat absensi {plan.tanggal.isoformat()}{where}: {len(plan.baris)} anak; {baru} baru, {diubah} diubah, "
        f"{tetap} tetap.",
        "Yang berubah:",
    ]
    if plan.dipertahankan:
        lines.insert(1, f"{plan.dipertahankan} anak yang sudah tercatat sakit, izin atau alpa tidak diubah.")
    for b in plan.berubah:
        before, after = _status(b.lama, b.keterangan_lama), _status(b.baru, b.keterangan)
        lines.append(f"- {b.nama or b.id_anak} ({b.id_anak}): {before} → {after}")
    lines.append("Nilai lama tetap tersimpan di riwayat. Setujui untuk mencatat?")
    return Pertanyaan("\n".join(lines), tuple(b.id_anak for b in plan.berubah))


class PerubahanAnak(BaseModel):
    """One student whose record changed."""

    id_anak: str
    nama: str | None = None
    status_lama: str | None = Field(None, description="Kosong: belum ada catatan sebelumnya")
    status_baru: str | None = None


class HasilCatatAbsensi(HasilTulis):
    """What happened to a roll call: written (with counts and each change), declined, cancelled, unchanged, or
    waiting (an usulan)."""

    tanggal: date | None = None
    jumlah: int | None = Field(None, description="Anak yang tercatat pada panggilan ini")
    baru: int | None = None
    diubah: int | None = None
    tetap: int | None = None
    perubahan: list[PerubahanAnak] = Field(default_factory=list)


def _row(b: Baris) -> Entri:
    """One student's line as sent: the new record and the old one the person was shown (the service refuses the
    whole roll call when a stored record is no longer that one: someone else recorded meanwhile)."""
    return Entri(
        id_anak=b.id_anak,
        status=b.baru,
        keterangan=b.keterangan,
        status_lama=b.lama or BELUM_DICATAT,
        keterangan_lama=b.keterangan_lama,
    )


def tetap(plan: Rencana) -> HasilCatatAbsensi:
    """The result when every record is already as asked: nothing written, nobody asked."""
    return HasilCatatAbsensi(
        hasil="tetap",
        pesan="Tidak ada yang berubah: semua catatan sudah seperti itu. Tidak ada yang ditulis.",
        tanggal=plan.tanggal,
        jumlah=len(plan.baris),
        baru=0,
        diubah=0,
        tetap=len(plan.baris),
    )


async def tulis(tulis: Tulis, plan: Rencana) -> Ditulis:
    """Write the whole roll call once, carrying the old records the person was shown."""
    done = await tulis.reader.client.catat_absensi(
        plan.tanggal, [_row(b) for b in plan.baris], actor=tulis.actor, key=tulis.key
    )
    names = {b.id_anak: b.nama for b in plan.baris}
    planned = {b.id_anak for b in plan.berubah}
    changed = [c for c in done.data if c.id_anak in planned or c.status_lama != c.status_baru]
    written = HasilCatatAbsensi(
        hasil="ditulis",
        pesan=f"Tercatat: {done.jumlah} anak ({done.baru} baru, {done.diubah} diubah, {done.tetap} tetap).",
        tanggal=done.tanggal,
        jumlah=done.jumlah,
        baru=done.baru,
        diubah=done.diubah,
        tetap=done.tetap,
        perubahan=[
            PerubahanAnak(
                id_anak=c.id_anak, nama=names.get(c.id_anak), status_lama=c.status_lama, status_baru=c.status_baru
            )
            for c in changed
        ],
    )
    return written, [{"id": c.id_anak, "old": c.status_lama, "new": c.status_baru} for c in changed]


CATAT = Penulisan(
    "catat_absensi",
    rencana,
    pertanyaan,
    tulis,
    HasilCatatAbsensi,
    tetap=tetap,
    conflict="Konfirmasi ini sudah dipakai untuk permintaan lain; panggil catat_absensi lagi.",
    not_found=UNSUPPORTED,
    changed=CHANGED,
)
PENULISAN = (CATAT,)


catat_absensi = CATAT.as_tool(
    """Catat absensi satu tanggal (YYYY-MM-DD) untuk sampai 300 anak sekaligus: entri berisi id_anak, status
    (hadir, izin, sakit, alpa) dan keterangan opsional. Dengan kamar atau kelas dan yang_lain (mis. 'hadir'),
    semua anak lain di kamar/kelas itu (sesuai wewenang Anda) dicatat yang_lain, kecuali anak yang sedang izin
    (tetap izin) dan yang sudah tercatat sakit, izin atau alpa (tetap; sebut di entri untuk mengubahnya):
    "semua hadir kecuali Citra izin" adalah satu panggilan. Semua atau tidak sama sekali: satu id yang tidak ada
    atau di luar wewenang berarti tidak ada yang dicatat. Sebelum menulis, pengguna diminta menyetujui daftar
    perubahannya; bila menolak, jangan ulangi tanpa diminta — tanyakan apa yang perlu diubah. Catatan yang
    ditimpa tetap tersimpan di riwayat; bila orang lain mencatat lebih dulu, tidak ada yang ditimpa: panggil
    lagi agar pengguna ditanya ulang."""
)


def register(server: AsramaServer) -> None:
    """Add the roll-call tool."""
    add_tools(server, {catat_absensi: "Catat absensi"}, WRITES, link(KONFIRMASI))
