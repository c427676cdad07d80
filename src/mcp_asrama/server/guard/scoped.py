"""The scope engine: what the asking principal may see, in the upstream query and on the result (policy only; the
reads of each domain built on it live in `features/`).

With full access a read is one upstream request. A scope such as `kamar:Al-Fatih 1, kamar:Al-Fatih 2, kelas:7A` is
two *sides*: its rooms and its classes, each intersected with the caller's own filters. Our service takes every room
(or class) of a side in one request (`kamar=A&kamar=B`, marked `filter-ganda` in its answer); a service of the
tutorial's contract gets one request per room or class instead (found out from its first answer, then remembered).
So the usual musyrif or wali kelas (rooms only, or classes only) costs one request, as the office does; several
requests run concurrently, each a step of progress.

Every row is still checked against the scope (`visible`, `visible_rows`, `reveal`), so a student outside the
scope never counts, is never named and never listed. What a role adds is asked here too: violations of every student
for `peran:bk` (`pelanggaran_view`, `reads_wider_than_writes`), the clinic's details for `peran:kesehatan`
(`clinic_only`, `sees_health_details`), and which rooms and classes a report may name (`may_report`): no tool
checks a role itself.
"""

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from mcp_asrama.client import AsramaClient, NoMultiFilter, NotFound
from mcp_asrama.client.client import Values
from mcp_asrama.names import fold
from mcp_asrama.server.asrama_server import state_of
from mcp_asrama.server.guard.access import Akses
from mcp_asrama.server.guard.scope_units import Unit, as_filter, gather
from mcp_asrama.server.progress import UpstreamProgress

# Gathering every match of a filter (a fallback, or a day's students listed through `/anak`) stops here.
MAX_SCOPED_ROWS = 5_000
PAGE = 100  # students per upstream request when a read walks them page by page (or looks them up by id)
CLINIC_ONLY = (
    "Rincian kesehatan anak hanya dapat dilihat dan dicatat petugas klinik (wewenang peran:kesehatan). Untuk "
    "jumlah kunjungan per kategori gunakan rekap_kesehatan; untuk hari sakit gunakan rekap_absensi dengan id_anak."
)

T = TypeVar("T")


class Placed(Protocol):
    """A row that says where its student is: what the scope is checked on."""

    @property
    def kelas(self) -> str | None: ...
    @property
    def kamar(self) -> str | None: ...


R = TypeVar("R", bound=Placed)


class OutOfReach(NotFound):
    """The record exists or not; either way this principal may not know."""


@dataclass(frozen=True)
class ScopedReader:
    """The data-service client seen through one principal's `Akses`, counting its requests in `progress`."""

    client: AsramaClient
    akses: Akses
    progress: UpstreamProgress = field(default_factory=UpstreamProgress)

    def sides(self, kelas: str | None, kamar: str | None, *, single: bool = False) -> tuple[list[Unit], list[Unit]]:
        """The upstream filters of the visible part of (kelas, kamar): the rooms' side and the classes' side. One
        unit per side, unless `single` or the service is known to take one value per filter: one per room/class."""
        if self.akses.semua:
            return [(kelas, kamar)], []
        rooms = [room for room in sorted(self.akses.kamar) if kamar is None or fold(kamar) == fold(room)]
        classes = [klass for klass in sorted(self.akses.kelas) if kelas is None or fold(kelas) == fold(klass)]
        if single or self.client.filter_ganda is False:
            return [(kelas, room) for room in rooms], [(klass, kamar) for klass in classes]
        return ([(kelas, as_filter(rooms))] if rooms else []), ([(as_filter(classes), kamar)] if classes else [])

    def units(self, kelas: str | None, kamar: str | None, *, single: bool = False) -> list[Unit]:
        """Upstream filters that together cover exactly the visible part of (kelas, kamar)."""
        rooms, classes = self.sides(kelas, kamar, single=single)
        return list(dict.fromkeys([*rooms, *classes]))

    async def per_unit(
        self, kelas: str | None, kamar: str | None, fetch: Callable[[Values, Values], Awaitable[T]]
    ) -> list[T]:
        """One upstream request per unit, concurrently, each a step of progress; one per room or class when the
        service turns out to take one value per filter."""
        try:
            return await self._each(self.units(kelas, kamar), fetch)
        except NoMultiFilter:
            return await self._each(self.units(kelas, kamar, single=True), fetch)

    async def _each(self, units: list[Unit], fetch: Callable[[Values, Values], Awaitable[T]]) -> list[T]:
        self.progress.expect(len(units))

        def call(unit: Unit) -> Callable[[], Awaitable[T]]:
            async def one() -> T:
                await self.progress.step()
                return await fetch(*unit)

            return one

        found = await gather([call(unit) for unit in units])
        await self.progress.done()
        return found

    async def whole(
        self, kelas: str | None, kamar: str | None, fetch: Callable[[Values, Values], Awaitable[T]], rows: Any
    ) -> T | None:
        """The service's own answer for (kelas, kamar) when one request covers all this principal may see of it
        (full access, or a scope of one side) and every row it names (`rows(answer)`) is visible; else None."""
        units = self.units(kelas, kamar)
        if len(units) != 1:
            return None
        try:
            (found,) = await self._each(units, fetch)
        except NoMultiFilter:
            return None
        if self.akses.semua or all(self.visible(kelas=r.kelas, kamar=r.kamar) for r in rows(found)):
            return found
        return None

    def visible(self, *, kelas: str | None, kamar: str | None) -> bool:
        """Whether a row of `kelas`/`kamar` may be shown."""
        return self.akses.melihat(kelas=kelas, kamar=kamar)

    def visible_rows(self, rows: Iterable[R]) -> list[R]:
        """The rows that may be shown, in order."""
        return [r for r in rows if self.visible(kelas=r.kelas, kamar=r.kamar)]

    def reveal(self, row: R) -> R:
        """One row, or `OutOfReach` (a NotFound) when outside the scope."""
        if not self.visible(kelas=row.kelas, kamar=row.kamar):
            raise OutOfReach("not visible")
        return row

    @property
    def sees_health_details(self) -> bool:
        """Whether clinic visits' details (complaint, treatment) and exact health counts may go out: clinic staff
        (`peran:kesehatan`) only."""
        return self.akses.klinik

    @property
    def reads_wider_than_writes(self) -> bool:
        """Whether violations may be read beyond the room/class scope writes keep to (`peran:bk`)."""
        return self.akses.bk

    def clinic_only(self) -> None:
        """Refuse, before the service is asked, what only clinic staff (`peran:kesehatan`) may see or record."""
        if not self.sees_health_details:
            raise ToolError(CLINIC_ONLY)

    def may_report(self, *, kamar: str | None = None, kelas: str | None = None, rooms_of_class: bool = False) -> bool:
        """Whether a report may name room `kamar`, or class `kelas` whole (`rooms_of_class`: or its part living in
        the caller's rooms); with neither, whatever the caller sees. Never for a principal who sees nothing."""
        if self.akses.kosong:
            return False
        if kamar is not None:
            return self.akses.boleh_kamar(kamar)
        if kelas is None:
            return True
        return self.akses.boleh_kelas(kelas) or (rooms_of_class and bool(self.akses.kamar))

    def pelanggaran_view(self) -> "ScopedReader":
        """The same service as this principal may see violations: every student with `peran:bk`."""
        return ScopedReader(self.client, self.akses.untuk_pelanggaran(), self.progress)


def scoped_reader(ctx: Context[Any, Any]) -> ScopedReader:
    """The data service as the principal of this request may see it."""
    state = state_of(ctx)
    return ScopedReader(state.client, state.principal().akses, UpstreamProgress(ctx))
