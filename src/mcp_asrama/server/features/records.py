"""Scoped reads of the dated student records (pelanggaran, hafalan, kesehatan) and of per-student summaries, the
same way for every domain: one upstream request per side of the scope (per room or class from a tutorial-contract
service), concurrently, every row checked again, each request a progress step; a summary of a one-sided scope is the
service's own.

- `records`: every visible record of the filters, page by page, latest first (a domain passes its one-page fetch);
- `summary_rows`: a range summary with one row per student (`id_anak`), the service's own answer when one request
  covers the scope, else the visible rows of one request per unit, each student once.
"""

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

from mcp_asrama.client.client import Values
from mcp_asrama.server.guard.scoped import MAX_SCOPED_ROWS, Terbatas
from mcp_asrama.server.progress import pages_left

RECORD_PAGE = 500  # the service's largest page of pelanggaran, hafalan and kesehatan records
A = TypeVar("A")  # a summary as the service answers it


class Page(Protocol):
    """One page of records as the service sends it."""

    @property
    def total(self) -> int: ...
    @property
    def data(self) -> Any: ...


Fetch = Callable[[Values, Values, int], Awaitable[Page]]  # (kelas, kamar, offset) -> one page
Summary = Callable[[int | None], Callable[[Values, Values], Awaitable[A]]]  # rows wanted -> (kelas, kamar) -> answer


async def records(
    reader: Terbatas, fetch: Fetch, kelas: str | None, kamar: str | None, *, one_student: bool = False
) -> tuple[list[Any], bool]:
    """Every visible record of the filters, each once, latest first; and whether that is all of them (each
    upstream filter gives at most `MAX_SCOPED_ROWS`). `one_student`: the fetch names one student, so one
    upstream filter, whatever the scope (its rows are still checked)."""
    progress = reader.kemajuan

    async def walk(unit_kelas: Values, unit_kamar: Values) -> tuple[list[Any], bool]:
        rows: list[Any] = []
        while True:
            if rows:
                await progress.step()
            page = await fetch(unit_kelas, unit_kamar, len(rows))
            if not rows:
                progress.expect(pages_left(min(page.total, MAX_SCOPED_ROWS), len(page.data), RECORD_PAGE))
            rows.extend(page.data)
            if len(rows) >= page.total or not page.data:
                return rows, True
            if len(rows) >= MAX_SCOPED_ROWS:
                return rows, False

    if one_student:
        progress.expect(1)
        await progress.step()
        walks = [await walk(kelas, kamar)]
        await progress.done()
    else:
        walks = await reader.per_unit(kelas, kamar, walk)
    merged = {r.id: r for rows, _ in walks for r in reader.visible_rows(rows)}
    ordered = sorted(merged.values(), key=lambda r: (r.tanggal, r.id), reverse=True)
    return ordered, all(complete for _, complete in walks)


async def summary_rows(
    reader: Terbatas,
    kelas: str | None,
    kamar: str | None,
    fetch: Summary[A],
    rows: Callable[[Any], Sequence[Any]],
    *,
    top: int | None = None,
) -> tuple[A | None, list[Any]]:
    """(the service's own answer, []) when one request covers the scope and names only visible students (asking
    for at least `top` rows); else (None, the visible rows of one request per unit, each student once)."""
    whole = await reader.whole(kelas, kamar, fetch(top), rows)
    if whole is not None:
        return whole, []
    merged: dict[str, Any] = {}
    for answer in await reader.per_unit(kelas, kamar, fetch(None)):
        for row in reader.visible_rows(rows(answer)):
            merged.setdefault(row.id_anak, row)
    return None, list(merged.values())
