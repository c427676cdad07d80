"""The change feed (`GET /perubahan`, Server-Sent Events): an event's kind and keys, never personal data."""

from datetime import date

from mcp_asrama.contract.domains import FeedKind
from mcp_asrama.contract.types import Shape


class Perubahan(Shape):
    """One committed change: its kind and keys, never personal data (`id_anak` None: any student may have changed;
    `kelas`/`kamar`: where that student is, when the service says)."""

    id: int
    jenis: FeedKind
    tanggal: date | None = None
    id_anak: str | None = None
    kamar: str | None = None
    kelas: str | None = None


class Posisi(Shape):
    """The `data` of a `mulai` or `reset` frame: the head's id."""

    id: int
