"""What a subscription may hold and what its check costs: caps on open listens, on URIs, and family reads.

- **Open listens.** One subject holds at most `ASRAMA_LISTEN_MAKS` (4) open `subscriptions/listen` streams, and a
  process at most `total_listens(ASRAMA_MAX_CONNECTIONS)`: three quarters of its connections (192 of the default
  256), so that a quarter is always left for calls and `/healthz` however many subjects listen. A listen beyond
  either cap is refused before anything is read (`-32600`, saying how many are allowed).
- **URIs.** One listen, and one handshake-era connection, names at most `MAX_URIS` (50) resources (`-32602`).
- **Cost.** A listen is checked by reading what it names (`Gate.check`), one rate-limit token per read (the
  request itself paid the first: `Gate.reads` says how many more). Resources of one family are checked together:
  every day of a resource keyed by `{tanggal}` alone (`asrama://absensi/{tanggal}`) by one read (its answer never
  depends on the date: a valid date is checked here, without the service), and the students of a resource keyed
  by `{id_anak}` alone (`asrama://anak/{id_anak}`, `.../hafalan`, `.../pelanggaran`) by one real read of the
  family's first resource plus one lookup per 100 of the others' ids (`catatan_anak`: who exists and is visible;
  violations in the view `peran:bk` widens). Anything else, and every family of a service that cannot look
  students up by id, is read resource by resource.

The subscribable resources are the domains' (`PUBLISHED`, from `contract.DOMAINS`): a new domain with a resource
is subscribed to, checked by family and told of its changes (`live.touched`) without an edit here.
"""

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, INVALID_REQUEST

from mcp_asrama.client import AsramaError
from mcp_asrama.contract.domains import DOMAINS
from mcp_asrama.server.arguments import is_id, parse_tanggal
from mcp_asrama.server.asrama_server import AsramaServer
from mcp_asrama.server.features.absensi_reads import catatan_anak
from mcp_asrama.server.guard.scoped import PAGE, ScopedReader, scoped_reader

MAX_URIS = 50
_PARAMETER = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class Published:
    """A domain's resource: its URI template, the parameters in it, and the URIs it names."""

    kind: str
    template: str

    @property
    def parameters(self) -> tuple[str, ...]:
        return tuple(_PARAMETER.findall(self.template))

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """The URIs of this template, each parameter one path segment (a group named after it)."""
        parts = _PARAMETER.split(self.template)
        body = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>[^/]+)" for i, p in enumerate(parts))
        return re.compile(rf"\A{body}\Z")

    def uri(self, values: object) -> str | None:
        """The template filled from the attributes of `values` named like its parameters (a date in ISO form),
        or None when one is missing."""
        filled: dict[str, str] = {}
        for name in self.parameters:
            value = getattr(values, name, None)
            if value is None:
                return None
            filled[name] = value.isoformat() if isinstance(value, date) else str(value)
        return self.template.format(**filled)

    def among(self, uris: Iterable[str]) -> set[str]:
        """Those of `uris` this template names."""
        return {uri for uri in uris if self.pattern.match(uri)}


PUBLISHED = {d.name: Published(d.name, d.resource) for d in DOMAINS if d.resource is not None}
LISTS = frozenset(p.template for p in PUBLISHED.values() if not p.parameters)  # whole lists, cut by each scope
# The domains a change of a kind also shows in (each domain's `shown_in`).
SHOWN_IN = {d.name: d.shown_in for d in DOMAINS if d.shown_in}
_BY_DAY = tuple(p.pattern for p in PUBLISHED.values() if p.parameters == ("tanggal",))
_BY_STUDENT = tuple(p for p in PUBLISHED.values() if p.parameters == ("id_anak",))


def total_listens(max_connections: int) -> int:
    """Open listens one process holds at most: all but a quarter of its connections (at least one kept free)."""
    return max(0, max_connections - max(1, max_connections // 4))


def too_many_uris(count: int) -> MCPError | None:
    """The refusal of a subscription naming `count` resources, if over the cap."""
    if count <= MAX_URIS:
        return None
    message = f"Terlalu banyak sumber dalam satu langganan: paling banyak {MAX_URIS}, diminta {count}."
    return MCPError(code=INVALID_PARAMS, message=message, data={"maks": MAX_URIS})


class Slots:
    """Open listens per subject and in all, each held while its stream is open."""

    def __init__(self, per_subject: int, total: int) -> None:
        self.per_subject = per_subject
        self.total = total
        self._held: Counter[str] = Counter()

    @contextmanager
    def hold(self, subject: str) -> Iterator[None]:
        """One slot for `subject` while the block runs, or `-32600` when a cap is reached."""
        if self._held[subject] >= self.per_subject:
            raise MCPError(
                code=INVALID_REQUEST,
                message=f"Terlalu banyak langganan terbuka: paling banyak {self.per_subject} subscriptions/listen "
                "sekaligus per pengguna. Tutup langganan lain dulu.",
                data={"maks": self.per_subject},
            )
        if self._held.total() >= self.total:
            raise MCPError(
                code=INVALID_REQUEST,
                message=f"Server sedang melayani langganan sebanyak batasnya ({self.total}); coba lagi nanti.",
                data={"maks": self.total},
            )
        self._held[subject] += 1
        try:
            yield
        finally:
            self._held[subject] -= 1
            if self._held[subject] <= 0:
                del self._held[subject]


@dataclass
class Plan:
    """How a set of URIs is checked: URIs read one by one, and families (the first read, the rest by id/date)."""

    single: list[str] = field(default_factory=list)
    days: dict[str, list[str]] = field(default_factory=dict)  # pattern -> URIs, in order
    students: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # kind -> (uri, id), in order

    @classmethod
    def of(cls, uris: list[str]) -> "Plan":
        plan = cls()
        for uri in uris:
            day = next((m for p in _BY_DAY if (m := p.match(uri))), None)
            kind, student = next(((r.kind, m) for r in _BY_STUDENT if (m := r.pattern.match(uri))), ("", None))
            if day and parse_tanggal(day["tanggal"]) is not None:
                plan.days.setdefault(day.re.pattern, []).append(uri)
            elif student and is_id(student["id_anak"]):
                plan.students.setdefault(kind, []).append((uri, student["id_anak"]))
            else:
                plan.single.append(uri)  # read alone: an invalid one fails without the service
        return plan

    @property
    def reads(self) -> int:
        """Service reads the check makes at most (a family: its first resource, then one lookup per PAGE ids)."""
        families = [len(members) for members in self.students.values()]
        lookups = sum(1 + -(-(n - 1) // PAGE) for n in families if n > 1)
        return len(self.single) + len(self.days) + sum(1 for n in families if n == 1) + lookups


def refusal(uri: str, reason: str) -> MCPError:
    """A subscription refused: the caller may not read `uri` right now."""
    return MCPError(code=INVALID_PARAMS, message=f"Tidak dapat berlangganan {uri}: {reason}", data={"uri": uri})


class Gate:
    """Checks that the caller may read every resource a subscription names, by `Plan`."""

    def __init__(self, server: AsramaServer) -> None:
        self.server = server

    async def check(self, ctx: Context[Any, Any], uris: list[str]) -> None:
        """Refuse (`-32602`) a subscription to anything the caller may not read right now."""
        plan = Plan.of(uris)
        for uri in plan.single + [days[0] for days in plan.days.values()]:
            await self._read(ctx, uri)
        reader = scoped_reader(ctx)
        for kind, members in plan.students.items():
            (first, _), rest = members[0], members[1:]
            await self._read(ctx, first)
            view = reader.pelanggaran_view() if kind == "pelanggaran" else reader
            if rest and not await self._visible(view, rest):
                for uri, _ in rest:
                    await self._read(ctx, uri)

    async def _read(self, ctx: Context[Any, Any], uri: str) -> None:
        try:
            await self.server.read_resource(uri, ctx)
        except ResourceError as exc:
            raise refusal(uri, str(exc)) from None

    @staticmethod
    async def _visible(view: ScopedReader, members: list[tuple[str, str]]) -> bool:
        """Whether every member's student exists and is visible in `view`, refusing the first that is not; False
        when the service cannot look students up by id (then each is read)."""
        ids = list(dict.fromkeys(id_anak for _, id_anak in members))
        try:
            found = await catatan_anak(view, date.today(), ids)
        except AsramaError:  # a service without the lookup: each is read, and says what failed
            return False
        if found is None:
            return False
        for uri, id_anak in members:
            if id_anak not in found:
                raise refusal(uri, f"Anak dengan id '{id_anak}' tidak ditemukan; cari id-nya dengan cari_anak")
        return True
