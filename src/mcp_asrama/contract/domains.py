"""The school's domains, each declared once: what the data service serves, the change feed names, the importer
accepts and the MCP server publishes are all derived from `DOMAINS`.

A domain is named by its Indonesian word (the wire contract): the service's route prefix is `/<name>`, its change
feed kind is `<name>` (when `feed`), and its records of one student are the resource `resource` (when published).
"""

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from mcp_asrama.contract.hafalan import HafalanIn
from mcp_asrama.contract.izin import IzinIn
from mcp_asrama.contract.kesehatan import KunjunganIn
from mcp_asrama.contract.pelanggaran import PelanggaranIn
from mcp_asrama.contract.pengurus import PengurusIn
from mcp_asrama.contract.prestasi import CONTOH, PrestasiIn


@dataclass(frozen=True)
class Domain:
    """One part of pesantren life as both sides see it.

    `dated`: a dated record of one student (a violation, a deposit, a visit, an izin): listed by student, class,
    room and period, created idempotently, through the shared kits of each side. `imports`: the kinds
    `mcp-asrama import` accepts for it. `resource`: the URI template of one student's records (None: not published,
    or published under another domain's URI). `shown_in`: the other domains whose resources show its records too
    (a day's attendance and an izin change the student's resource; a student's move changes the room list, and so does
    a staff change: the room list names each room's musyrif from the staff list).
    `body`: the write body of one dated record (`POST /<name>`; of one staff member, `PUT /pengurus/{email}`), which
    a row of its import kind also is.
    `contoh`: examples of a record's own fields (a demo school spreads a few a month over its students).
    """

    name: str
    feed: bool = True
    dated: bool = False
    imports: tuple[str, ...] = ()
    resource: str | None = None
    shown_in: tuple[str, ...] = ()
    body: type[BaseModel] | None = None
    contoh: tuple[dict[str, Any], ...] = ()

    @property
    def path(self) -> str:
        return f"/{self.name}"


DOMAINS: tuple[Domain, ...] = (
    Domain("anak", imports=("anak",), resource="asrama://anak/{id_anak}", shown_in=("kamar",)),
    Domain("kamar", imports=("kamar",), resource="asrama://kamar"),
    Domain("kelas", feed=False),
    Domain("absensi", resource="asrama://absensi/{tanggal}", shown_in=("anak",)),
    Domain("izin", dated=True, shown_in=("anak",), body=IzinIn),
    Domain(
        "pelanggaran",
        dated=True,
        imports=("jenis_pelanggaran", "pelanggaran"),
        resource="asrama://anak/{id_anak}/pelanggaran",
        body=PelanggaranIn,
    ),
    Domain("hafalan", dated=True, imports=("hafalan",), resource="asrama://anak/{id_anak}/hafalan", body=HafalanIn),
    Domain("kesehatan", dated=True, imports=("kesehatan",), body=KunjunganIn),
    Domain(
        "prestasi",
        dated=True,
        imports=("prestasi",),
        resource="asrama://anak/{id_anak}/prestasi",
        body=PrestasiIn,
        contoh=CONTOH,
    ),
    Domain("pengurus", feed=False, imports=("pengurus",), shown_in=("kamar",), body=PengurusIn),
)
"""In the order the service mounts their routers and the importer lists their kinds."""

FeedKind = Literal["absensi", "izin", "anak", "kamar", "pelanggaran", "hafalan", "kesehatan", "prestasi"]
"""A change feed's `jenis`: the name of a domain with `feed` (a test keeps the two equal)."""
FEED_KINDS: tuple[str, ...] = tuple(d.name for d in DOMAINS if d.feed)
IMPORT_KINDS: tuple[str, ...] = tuple(kind for d in DOMAINS for kind in d.imports)
BY_NAME = {d.name: d for d in DOMAINS}
