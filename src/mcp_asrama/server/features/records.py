"""Scoped reads of the dated student records (pelanggaran, hafalan, kesehatan) and of per-student summaries, the
same way for every domain: one upstream request per side of the scope (per room or class from a tutorial-contract
service), concurrently, every row checked again, each request a progress step; a summary of a one-sided scope is the
service's own.

- `records`: every visible record of the filters, page by page, latest first (a domain passes its one-page fetch);
- `summary_rows`: a range summary with one row per student (`id_anak`), the service's own answer when one request
  covers the scope, else the visible rows of one request per unit, each student once.

Any dated domain of the contract reads through the client's generic calls: `dated_records` (one visible student's
records, or those of the scope's rooms and classes, over a period) and `rekap_rows` (its `/rekap`); a service
without the domain's routes is the domain's tool error.
"""

from collections.abc import Awaitable, Callable, Sequence
from datetime import date
from typing import Any, Protocol, TypeVar, cast

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

from mcp_asrama.client import NotFound
from mcp_asrama.client.client import Values
from mcp_asrama.client.models import Anak
from mcp_asrama.server.guard.scoped import MAX_SCOPED_ROWS, ScopedReader
from mcp_asrama.server.progress import pages_left

RECORD_PAGE = 500  # the service's largest page of pelanggaran, hafalan and kesehatan records
A = TypeVar("A")  # a summary as the service answers it
S = TypeVar("S", bound=BaseModel)  # a summary of a dated domain (`per_anak`: one row per student)


class Page(Protocol):
    """One page of records as the service sends it."""

    @property
    def total(self) -> int: ...
    @property
    def data(self) -> Any: ...


Fetch = Callable[[Values, Values, int], Awaitable[Page]]  # (kelas, kamar, offset) -> one page
Summary = Callable[[int | None], Callable[[Values, Values], Awaitable[A]]]  # rows wanted -> (kelas, kamar) -> answer


async def records(
    reader: ScopedReader, fetch: Fetch, kelas: str | None, kamar: str | None, *, one_student: bool = False
) -> tuple[list[Any], bool]:
    """Every visible record of the filters, each once, latest first; and whether that is all of them (each
    upstream filter gives at most `MAX_SCOPED_ROWS`). `one_student`: the fetch names one student, so one
    upstream filter, whatever the scope (its rows are still checked)."""
    progress = reader.progress

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
    reader: ScopedReader,
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


async def dated_records(
    reader: ScopedReader,
    domain: str,
    model: type[BaseModel],
    unsupported: str,
    *,
    anak: Anak | None = None,
    kelas: str | None = None,
    kamar: str | None = None,
    dari: date | None = None,
    sampai: date | None = None,
) -> tuple[list[Any], bool]:
    """The visible records of the dated `domain` (its list parsed as `model`) over [dari, sampai], latest first, of
    student `anak` (one that `reader` may see) or of the filters; and whether that is all of them."""

    async def fetch(k: Values, m: Values, offset: int) -> Page:
        one = anak.id if anak else None
        page = await reader.client.records(
            domain, model, id_anak=one, kelas=k, kamar=m, dari=dari, sampai=sampai, limit=RECORD_PAGE, offset=offset
        )
        return cast(Page, page)

    try:
        if anak is None:
            return await records(reader, fetch, kelas, kamar)
        found, complete = await records(reader, fetch, None, None, one_student=True)
    except NotFound:
        raise ToolError(unsupported) from None
    return [r for r in found if r.id_anak == anak.id], complete


async def rekap_rows(
    reader: ScopedReader,
    domain: str,
    model: type[S],
    unsupported: str,
    dari: date,
    sampai: date,
    *,
    kelas: str | None,
    kamar: str | None,
    merge: bool = True,
    top: int | None = None,
) -> tuple[S | None, list[Any]]:
    """`summary_rows` of the dated `domain`'s `/rekap` over [dari, sampai] (parsed as `model`, its rows
    `per_anak`; the service's own answer with only its first `top` rows when given). Without `merge`: only the
    service's own answer (or None), for a summary whose other parts cannot be merged from its students' rows (the
    domain then counts its `dated_records`)."""

    def fetch(limit: int | None) -> Callable[[Values, Values], Awaitable[S]]:
        return lambda k, m: reader.client.summary(domain, model, dari, sampai, kelas=k, kamar=m, limit=limit)

    try:
        if not merge:
            return await reader.whole(kelas, kamar, fetch(None), lambda r: r.per_anak), []
        return await summary_rows(reader, kelas, kamar, fetch, lambda r: r.per_anak, top=top)
    except NotFound:
        raise ToolError(unsupported) from None
