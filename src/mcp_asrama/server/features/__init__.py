"""What the model sees, one module per domain with its tools, resources and prompts; `register` adds them all in a
fixed order (hosts cache the lists; a stable order keeps prompt caches warm). `laporan` holds the report prompts
that span domains."""

from mcp_asrama.server.core import AsramaServer
from mcp_asrama.server.features import (
    absensi,
    anak,
    catat_absensi,
    hafalan,
    izin,
    kamar,
    kesehatan,
    laporan,
    pelanggaran,
)


def register(server: AsramaServer) -> None:
    """Add the tools, resources and prompts of every domain."""
    for domain in (anak, kamar, absensi, pelanggaran, hafalan, kesehatan, catat_absensi, izin, laporan):
        domain.register(server)
