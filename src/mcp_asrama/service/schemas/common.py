"""The service's wire shapes, in families per domain (this module: the types they share): what comes in (`...In`,
the contract's, used as they are), what goes out (`...Public`: the contract's shape a client keeps, extended with
what only the service returns, narrowing a type where the service guarantees more: a page's `data: list[...Public]`
is ignored by mypy, as a list of the narrower items is not a list of the shape's).

Response models are a second privacy layer: a column added to a table never leaves unless declared here.
"""

from mcp_asrama.contract.types import (
    BELUM_DICATAT,
    ID_PATTERN,
    STATUS_ABSENSI,
    AnakId,
    Cari,
    Catatan,
    JenisKelamin,
    Rapi,
    StatusAbsensi,
    StatusAnak,
    StatusHarian,
    Strict,
    Tanggal,
    TanpaNul,
    Teks,
)

__all__ = [
    "BELUM_DICATAT",
    "ID_PATTERN",
    "STATUS_ABSENSI",
    "AnakId",
    "Cari",
    "Catatan",
    "JenisKelamin",
    "Rapi",
    "StatusAbsensi",
    "StatusAnak",
    "StatusHarian",
    "Strict",
    "Tanggal",
    "TanpaNul",
    "Teks",
]
