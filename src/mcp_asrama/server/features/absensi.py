"""Attendance: one day (a tool and a resource), a summary over a range."""

from collections import Counter
from datetime import date
from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp_types import CallToolResult
from pydantic import Field

from mcp_asrama.client import NotFound
from mcp_asrama.client.models import BELUM_DICATAT, CatatanAbsensi, JumlahStatus, RekapAnak
from mcp_asrama.privacy import RESULT_BUDGET, fitting_count, json_text
from mcp_asrama.server import views
from mcp_asrama.server.arguments import MAX_RANGE_DAYS, IdAnak, Kamar, Kelas, StatusAbsensi, Tanggal, parse_tanggal
from mcp_asrama.server.asrama_server import AsramaServer, tool_result
from mcp_asrama.server.features import absensi_reads
from mcp_asrama.server.features.absensi_reads import STATUSES, Hari
from mcp_asrama.server.features.anak import satu_anak
from mcp_asrama.server.features.common import READ_ONLY, Result, add_tools, publish, totals
from mcp_asrama.server.guard import audit
from mcp_asrama.server.guard.scoped import ScopedReader, scoped_reader

RINGKASAN = "absensi satu hari (absensi_harian), rekap absensi (rekap_absensi)"

TOP_ABSENT = 10


class JumlahHarian(JumlahStatus):
    """Counts per status of one day, with the students who have no record yet."""

    belum_dicatat: int | None = Field(
        None, description="Anak tanpa catatan absensi pada tanggal itu; kosong bila layanan tidak bisa mendaftarnya"
    )


class HasilAbsensiHarian(Result):
    """One day's attendance of every visible student of the filter: counts per status, then who was not `hadir`."""

    tanggal: date
    jumlah_anak: int = Field(description="Jumlah semua anak pada filter itu (sesuai wewenang), dicatat atau belum")
    per_status: JumlahHarian
    tidak_hadir: list[CatatanAbsensi] = Field(
        description="Anak yang izin, sakit atau alpa, lalu yang belum_dicatat (dengan filter status: hanya status itu)"
    )
    catatan: str | None = None


class HasilRekapAbsensi(Result):
    """Counts per status over a date range and the students with the most absences."""

    dari: date
    sampai: date
    jumlah_anak: int
    total: JumlahStatus
    paling_sering_tidak_hadir: list[RekapAnak] = Field(description="Maksimal 10 anak, yang paling sering absen")


def _per_status(hari: Hari) -> JumlahHarian:
    """Counts per status; `belum_dicatat` only when the service could list the students without a record."""
    if hari.dihitung is not None and hari.dihitung.per_status is not None:
        return JumlahHarian(**hari.dihitung.per_status.model_dump())
    tally = Counter(r.status for r in hari.rows)
    return JumlahHarian(**{s: tally[s] for s in STATUSES}, belum_dicatat=tally[BELUM_DICATAT] if hari.lengkap else None)


def _listed(hari: Hari, per_status: JumlahHarian, status: str | None) -> tuple[int, list[CatatanAbsensi], int]:
    """(jumlah_anak, the students of `status` — else not `hadir` — recorded first, how many of them in all): from
    the service's own count, its listed rows (as many as ever fit); else every visible row, sorted here."""
    if hari.dihitung is not None:
        jumlah_anak = hari.dihitung.jumlah_anak or 0
        return jumlah_anak, hari.rows, getattr(per_status, status) if status else jumlah_anak - per_status.hadir
    wanted = [r for r in hari.rows if (r.status == status if status else r.status != "hadir")]
    return len(hari.rows), sorted(wanted, key=lambda r: r.status == BELUM_DICATAT), len(wanted)


async def ringkas_absensi(
    reader: ScopedReader,
    tanggal: date,
    kelas: str | None = None,
    kamar: str | None = None,
    status: str | None = None,
) -> HasilAbsensiHarian:
    """One day's attendance of every visible student of the filter, aggregated first: counts per status, then who
    was not `hadir` (recorded absences first, then `belum_dicatat`), or who had `status`."""
    hari = await absensi_reads.absensi(reader, tanggal, kelas, kamar, status)
    per_status = _per_status(hari)
    jumlah_anak, listed, all_listed = _listed(hari, per_status, status)
    audit.disclose_aggregate(jumlah_anak, (r.id_anak for r in hari.rows))
    shown = fitting_count(listed, RESULT_BUDGET)
    notes = []
    if (per_status.belum_dicatat or 0) == jumlah_anak:
        notes.append("Belum ada data absensi untuk tanggal dan filter ini.")
    if not hari.lengkap:
        notes.append(
            "Layanan data asrama tidak bisa mendaftar semua anak untuk filter ini, jadi anak yang belum dicatat "
            "tidak dihitung: jumlah_anak hanya anak yang sudah dicatat. Bandingkan dengan total cari_anak."
        )
    if shown < all_listed:
        notes.append(
            f"Daftar dipotong: {shown} dari {all_listed} anak. Persempit dengan kelas, kamar atau status "
            "(mis. 'alpa' atau 'belum_dicatat')."
        )
    if any(r.nama is None for r in listed[:shown]):
        notes.append("Layanan tidak menyertakan nama/kelas/kamar; gunakan detail_anak untuk id yang perlu.")
    return HasilAbsensiHarian(
        tanggal=tanggal,
        jumlah_anak=jumlah_anak,
        per_status=per_status,
        tidak_hadir=listed[:shown],
        catatan=" ".join(notes) or None,
    )


async def absensi_harian(
    ctx: Context,
    tanggal: Tanggal,
    kelas: Kelas = None,
    kamar: Kamar = None,
    status: StatusAbsensi = None,
) -> Annotated[CallToolResult, HasilAbsensiHarian]:
    """Absensi anak asrama pada satu tanggal (YYYY-MM-DD) untuk SEMUA anak pada filter: jumlah per status (hadir,
    izin, sakit, alpa, dan belum_dicatat = anak yang belum punya catatan absensi tanggal itu), lalu daftar anak yang
    TIDAK hadir beserta keterangannya, disusul anak yang belum dicatat. jumlah_anak sama dengan total cari_anak
    untuk filter yang sama: setiap anak terdaftar dihitung, juga yang status anaknya izin, sakit atau pulang (tetap
    perlu dicatat). Filter opsional: kelas (mis. '7A'), kamar, dan status (mis. 'izin' untuk hanya yang izin,
    'belum_dicatat' untuk hanya yang belum dicatat). Untuk rentang tanggal gunakan rekap_absensi."""
    return tool_result(await ringkas_absensi(scoped_reader(ctx), tanggal, kelas, kamar, status))


def _most_absent(per_anak: list[RekapAnak]) -> list[RekapAnak]:
    """The `TOP_ABSENT` students with most absences, whatever order the service sent (stable on ties)."""
    return sorted(per_anak, key=lambda r: r.tidak_hadir, reverse=True)[:TOP_ABSENT]


async def rekap_absensi(
    ctx: Context,
    dari: Tanggal,
    sampai: Tanggal,
    kelas: Kelas = None,
    kamar: Kamar = None,
    id_anak: IdAnak | None = None,
) -> Annotated[CallToolResult, HasilRekapAbsensi]:
    """Rekap absensi dari tanggal `dari` sampai `sampai` (YYYY-MM-DD, inklusif, paling panjang 366 hari): jumlah per
    status dan 10 anak yang paling sering tidak hadir. Filter opsional: kelas, kamar, atau satu anak (id_anak)."""
    if sampai < dari:
        raise ToolError("Argumen tidak valid: sampai harus sama dengan atau sesudah dari.")
    if (sampai - dari).days >= MAX_RANGE_DAYS:
        raise ToolError(f"Argumen tidak valid: rentang paling panjang {MAX_RANGE_DAYS} hari.")
    reader = scoped_reader(ctx)
    try:
        rekap = await absensi_reads.rekap(
            reader, dari, sampai, kelas=kelas, kamar=kamar, id_anak=id_anak, top=TOP_ABSENT
        )
    except NotFound:
        raise ToolError(
            "Layanan data asrama ini tidak menyediakan rekap absensi (/absensi/rekap). "
            "Gunakan absensi_harian per tanggal."
        ) from None
    if id_anak is not None and rekap.jumlah_anak == 0:
        await satu_anak(reader, id_anak)  # no records: say so only of a student who exists and is visible
    # Rows come most absent first, at least TOP_ABSENT of them: a group under SMALL_GROUP is listed whole.
    audit.disclose_aggregate(rekap.jumlah_anak, (r.id_anak for r in rekap.per_anak))
    return tool_result(
        HasilRekapAbsensi(
            **totals(rekap),
            paling_sering_tidak_hadir=[r for r in _most_absent(rekap.per_anak) if r.tidak_hadir > 0],
        )
    )


async def absensi_resource(tanggal: str, ctx: Context) -> str:
    """Absensi satu tanggal: jumlah per status dan anak yang tidak hadir, mis. asrama://absensi/2026-10-06."""
    day = parse_tanggal(tanggal)
    if day is None:
        raise ResourceNotFoundError("tanggal tidak valid: gunakan tanggal yang ada, format YYYY-MM-DD")
    return json_text(await ringkas_absensi(scoped_reader(ctx), day))


def register(server: AsramaServer) -> None:
    """Add the attendance tools and one day's attendance as a resource."""
    add_tools(server, {absensi_harian: "Absensi harian"}, READ_ONLY, views.link(views.ABSENSI_HARIAN))
    add_tools(server, {rekap_absensi: "Rekap absensi"}, READ_ONLY, views.link(views.REKAP_ABSENSI))
    publish(server, "absensi", "Absensi harian", absensi_resource)
