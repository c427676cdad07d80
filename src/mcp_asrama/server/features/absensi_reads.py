"""Attendance as the caller may see it: one day of every visible student of a filter, the day's rows of students
named by id (`catatan_anak`: the subscription gate's check and a roll call's), and the counts over a range.

A day of one request is counted by our service (`ringkas`), the MCP server getting only the students it lists; a
day from a service without our `semua_anak` extension adds the `/anak` pages of the filter's students, to find
who has no record; a range takes the service's own counts when one request covers the scope.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date

from mcp.server.mcpserver.exceptions import ToolError

from mcp_asrama.client import NotFound
from mcp_asrama.client.client import Values
from mcp_asrama.client.models import BELUM_DICATAT, AbsensiHarian, CatatanAbsensi, JumlahStatus, RekapAbsensi
from mcp_asrama.names import fold
from mcp_asrama.privacy import RESULT_BUDGET
from mcp_asrama.server.features.anak_reads import everyone
from mcp_asrama.server.features.records import summary_rows
from mcp_asrama.server.guard.audit import SMALL_GROUP
from mcp_asrama.server.guard.scoped import PAGE, ScopedReader
from mcp_asrama.server.progress import pages_left

STATUSES = ("hadir", "izin", "sakit", "alpa")
# Listed students asked of a service that counts the day: more than ever fit a result (each is >= 31 characters).
LISTED = RESULT_BUDGET // 30 + 1


@dataclass(frozen=True)
class Hari:
    """One day's visible rows; `lengkap` when they include every visible student of the filter (those without a
    record as `belum_dicatat`), false when the service could not list the students (then only the records).
    `dihitung`: the service counted the day itself (its `per_status` and `jumlah_anak`); `rows` are then only the
    students it listed (of `daftar`, else not `hadir`), at most `LISTED`."""

    rows: list[CatatanAbsensi]
    lengkap: bool
    dihitung: AbsensiHarian | None = None


async def absensi(
    reader: ScopedReader,
    tanggal: date,
    kelas: str | None,
    kamar: str | None,
    daftar: str | None = None,
    *,
    setiap_anak: bool = False,
) -> Hari:
    """One day's visible rows matching kelas/kamar, each student once: the records, and every visible student
    of the filter without one as `belum_dicatat` — from our service in the same request (`semua_anak`), else
    listed through `/anak`. When a service cannot list them, only the records (`lengkap` false). When one request
    covers the scope, our service counts the day itself (`ringkas`): then only the listed students come
    (`dihitung`); a group of 1 to `SMALL_GROUP` - 1 (whose every student an aggregate discloses) is asked again
    whole. `setiap_anak`: every student's row, never counted at the service (a roll call writes them all)."""
    ringkas = LISTED if len(reader.units(kelas, kamar)) == 1 and not setiap_anak else None

    async def day(unit_kelas: Values, unit_kamar: Values) -> tuple[list[CatatanAbsensi], bool, AbsensiHarian | None]:
        found = await reader.client.absensi(
            tanggal, kelas=unit_kelas, kamar=unit_kamar, semua_anak=True, ringkas=ringkas, daftar=daftar
        )
        if found.per_status is not None and found.jumlah_anak is not None:
            small = 0 < found.jumlah_anak < SMALL_GROUP
            if not small and len(reader.visible_rows(found.data)) == len(found.data):
                return found.data, True, found
            found = await reader.client.absensi(tanggal, kelas=unit_kelas, kamar=unit_kamar, semua_anak=True)
        if found.semua_anak:
            return found.data, True, None
        # Not our extension: rows may lack kelas/kamar, and nobody unrecorded is in them.
        _require(reader, found.data, kelas=unit_kelas is not None, kamar=unit_kamar is not None)
        unrecorded = await _unrecorded(reader, found.data, unit_kelas, unit_kamar)
        return [*found.data, *(unrecorded or [])], unrecorded is not None, None

    days = await reader.per_unit(kelas, kamar, day)
    if len(days) == 1 and (counted := days[0][2]) is not None:
        return Hari(counted.data, True, counted)
    lengkap = all(complete for _, complete, _ in days)
    merged: dict[str, CatatanAbsensi] = {}
    for rows, _, _ in days:
        wanted = [r for r in rows if _matches(r.kelas, kelas) and _matches(r.kamar, kamar)]
        for record in reader.visible_rows(wanted):
            merged.setdefault(record.id_anak, record)
    return Hari([r for r in merged.values() if lengkap or r.status != BELUM_DICATAT], lengkap)


async def _unrecorded(
    reader: ScopedReader, records: list[CatatanAbsensi], kelas: Values, kamar: Values
) -> list[CatatanAbsensi] | None:
    """The students of one upstream filter without a row in `records`, listed through `/anak`; None when the
    service cannot list them all."""
    try:
        students = await everyone(reader, None, kelas, kamar, None)
    except NotFound:
        return None
    if students is None:
        return None
    recorded = {r.id_anak for r in records}
    return [
        CatatanAbsensi(id_anak=a.id, status=BELUM_DICATAT, nama=a.nama, kelas=a.kelas, kamar=a.kamar)
        for a in students
        if a.id not in recorded
    ]


def _require(reader: ScopedReader, records: list[CatatanAbsensi], *, kelas: bool, kamar: bool) -> None:
    """Rows must say which class and room they belong to whenever we must filter or scope on them."""
    semua = reader.akses.semua
    needed = [name for name, wanted in (("kelas", kelas), ("kamar", kamar)) if wanted or not semua]
    for name in needed:
        if any(getattr(r, name) is None for r in records):
            raise ToolError(
                f"Layanan data asrama tidak menyertakan {name} pada data absensi, jadi filter {name} atau "
                f"batas wewenang tidak bisa diterapkan. Panggil tanpa filter {name}, lalu cocokkan dengan "
                f"cari_anak({name}=...)."
                if semua
                else "Layanan data asrama tidak menyertakan kelas/kamar pada data absensi, jadi data tidak bisa "
                "dibatasi sesuai wewenang Anda. Minta admin memakai layanan yang menyertakannya."
            )


def _matches(value: str | None, wanted: str | None) -> bool:
    return wanted is None or (value is not None and fold(value) == fold(wanted))


async def rekap(
    reader: ScopedReader,
    dari: date,
    sampai: date,
    *,
    kelas: str | None,
    kamar: str | None,
    id_anak: str | None,
    top: int,
) -> RekapAbsensi:
    """Counts over a range for the visible students, with per-student rows (most absent first, at least the
    first `top`): the service's own when one request covers the scope, else merged from one per unit."""

    def fetch(limit: int | None) -> Callable[[Values, Values], Awaitable[RekapAbsensi]]:
        return lambda k, m: reader.client.rekap(dari, sampai, kelas=k, kamar=m, id_anak=id_anak, limit=limit)

    whole, merged = await summary_rows(reader, kelas, kamar, fetch, lambda r: r.per_anak, top=top)
    if whole is not None:
        return whole
    rows = sorted(merged, key=lambda r: r.tidak_hadir, reverse=True)
    total = JumlahStatus(**{s: sum(getattr(r, s) for r in rows) for s in STATUSES})
    return RekapAbsensi(dari=dari, sampai=sampai, total=total, jumlah_anak=len(rows), per_anak=rows)


async def catatan_anak(reader: ScopedReader, tanggal: date, ids: list[str]) -> dict[str, CatatanAbsensi] | None:
    """The day's row of each of `ids` the reader's principal may see (`belum_dicatat` without a record), by id:
    which named students are visible, one request per `PAGE` ids. An unknown or invisible id is absent; None when
    the service cannot look students up by id (not ours)."""
    found: dict[str, CatatanAbsensi] = {}
    reader.progress.expect(pages_left(len(ids), 0, PAGE))
    for start in range(0, len(ids), PAGE):
        await reader.progress.step()
        day = await reader.client.absensi(tanggal, semua_anak=True, ids=ids[start : start + PAGE])
        if not day.semua_anak:
            return None
        wanted = set(ids[start : start + PAGE])
        found.update((r.id_anak, r) for r in reader.visible_rows(day.data) if r.id_anak in wanted)
    await reader.progress.done()
    return found
