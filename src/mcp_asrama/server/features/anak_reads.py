"""Students as the caller may see them: a search (one page and the total of the visible matches) and one student.

A one-sided scope (rooms only, or classes only) passes `limit`/`offset` upstream and takes the service's `total`, as
the office does. A two-sided one asks each side for only its first `offset + limit` rows, concurrently, merges them
by name and id, and counts the overlap of the two sides (a student in a room *and* a class in scope) once. When a
row fails the scope (an upstream that ignored a filter) the search falls back to gathering every match and
filtering it, so a student outside the scope never counts, is never named and never listed.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from mcp.server.mcpserver.exceptions import ToolError

from mcp_asrama.client import NoMultiFilter
from mcp_asrama.client.client import Values
from mcp_asrama.client.models import Anak
from mcp_asrama.server.guard.scope_units import Unit, gather, overlap
from mcp_asrama.server.guard.scoped import MAX_SCOPED_ROWS, PAGE, ScopedReader
from mcp_asrama.server.progress import pages_left

TOO_MANY = "Terlalu banyak anak yang cocok untuk didaftar; persempit dengan nama, kelas atau kamar."


async def cari_anak(
    reader: ScopedReader,
    *,
    nama: str | None,
    kelas: str | None,
    kamar: str | None,
    status: str | None,
    limit: int,
    offset: int,
) -> tuple[int, list[Anak]]:
    """(total visible matches, one page), ordered by name then id."""
    if reader.akses.semua:
        found = await reader.client.cari_anak(
            nama=nama, kelas=kelas, kamar=kamar, status=status, limit=limit, offset=offset
        )
        return found.total, found.data
    search = _Search(reader, nama, status, limit, offset)
    try:
        return await search.page(reader.sides(kelas, kamar))
    except NoMultiFilter:
        return await search.page(reader.sides(kelas, kamar, single=True))


@dataclass(frozen=True)
class _Search:
    """One scoped search: its name and status filters and its page, over the sides of the scope."""

    reader: ScopedReader
    nama: str | None
    status: str | None
    limit: int
    offset: int

    async def page(self, sides: tuple[list[Unit], list[Unit]]) -> tuple[int, list[Anak]]:
        reader, limit, offset = self.reader, self.limit, self.offset
        rooms, classes = sides
        units = [*rooms, *classes]
        if len(set(units)) == 1:  # one request, the page as the service cuts it
            (unit_kelas, unit_kamar), *_ = units
            page = await reader.client.cari_anak(
                nama=self.nama, kelas=unit_kelas, kamar=unit_kamar, status=self.status, limit=limit, offset=offset
            )
            if len(reader.visible_rows(page.data)) == len(page.data):
                return page.total, page.data
        elif units:
            overlaps = [o for room in rooms for klass in classes if (o := overlap(room, klass)) is not None]
            reader.progress.expect(len(units) + len(overlaps))
            heads = [self._head(u, offset + limit) for u in units]
            counted = [self._head(u, 1) for u in overlaps]  # only their totals count
            found = await gather([*heads, *counted])
            await reader.progress.done()
            if all(h is not None for h in found):
                pages = [h for h in found if h is not None]
                merged = {a.id: a for _, rows in pages[: len(units)] for a in rows}
                if len(reader.visible_rows(merged.values())) == len(merged):
                    # The rooms' side and the classes' side are each disjoint; their overlaps were counted twice.
                    total = sum(t for t, _ in pages[: len(units)]) - sum(t for t, _ in pages[len(units) :])
                    ordered = sorted(merged.values(), key=lambda a: (a.nama, a.id))
                    return total, ordered[offset : offset + limit]
        else:
            return 0, []
        return await self._gathered(list(dict.fromkeys(units)))

    def _head(self, unit: Unit, rows: int) -> Callable[[], Awaitable[tuple[int, list[Anak]] | None]]:
        """(total, its first `rows` matches) of one unit, page by page; None when its pages overlap (a service that
        ignores `offset`)."""
        reader = self.reader

        async def head() -> tuple[int, list[Anak]] | None:
            found: dict[str, Anak] = {}
            while True:
                await reader.progress.step()
                page = await reader.client.cari_anak(
                    nama=self.nama,
                    kelas=unit[0],
                    kamar=unit[1],
                    status=self.status,
                    limit=min(PAGE, rows - len(found)),
                    offset=len(found),
                )
                if not found:
                    reader.progress.expect(pages_left(min(page.total, rows), len(page.data), PAGE))
                fresh = {a.id: a for a in page.data if a.id not in found}
                if len(fresh) < len(page.data):
                    return None
                found.update(fresh)
                if len(found) >= min(page.total, rows) or not page.data:
                    return page.total, list(found.values())

        return head

    async def _gathered(self, units: list[Unit]) -> tuple[int, list[Anak]]:
        """The fallback: every match of each unit, filtered on the rows themselves."""
        merged: dict[str, Anak] = {}
        self.reader.progress.expect(len(units))
        for unit_kelas, unit_kamar in units:
            matches = await everyone(self.reader, self.nama, unit_kelas, unit_kamar, self.status)
            if matches is None:
                raise ToolError(TOO_MANY)
            merged.update((a.id, a) for a in self.reader.visible_rows(matches))
        await self.reader.progress.done()
        ordered = sorted(merged.values(), key=lambda a: (a.nama, a.id))
        return len(ordered), ordered[self.offset : self.offset + self.limit]


async def everyone(
    reader: ScopedReader, nama: str | None, kelas: Values, kamar: Values, status: str | None
) -> list[Anak] | None:
    """Every match of one upstream filter, page by page; None when the service cannot give them all: more than
    `MAX_SCOPED_ROWS`, or pages that do not add up to its total (a tutorial-contract service ignores `offset`)."""
    found: dict[str, Anak] = {}
    while True:
        await reader.progress.step()
        page = await reader.client.cari_anak(
            nama=nama, kelas=kelas, kamar=kamar, status=status, limit=PAGE, offset=len(found)
        )
        if not found:
            reader.progress.expect(pages_left(min(page.total, MAX_SCOPED_ROWS), len(page.data), PAGE))
        fresh = {a.id: a for a in page.data if a.id not in found}
        if len(fresh) < len(page.data):
            return None  # a row repeated: the pages overlap
        found.update(fresh)
        if len(found) >= page.total:
            return list(found.values())
        if not page.data or len(found) >= MAX_SCOPED_ROWS:
            return None


async def detail_anak(reader: ScopedReader, id_anak: str) -> Anak:
    """One student, or `OutOfReach` (a NotFound) when outside the scope."""
    return reader.reveal(await reader.client.detail_anak(id_anak))
