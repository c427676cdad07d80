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
    usulan_tools,
)
from mcp_asrama.server.features.write import Konfirmasi


def register(server: AsramaServer, book: Konfirmasi) -> None:
    """Add the tools, resources and prompts of every domain; each write tool's declaration joins `book`, so that
    an usulan of it can be decided later."""
    for domain in (anak, kamar, absensi, pelanggaran, hafalan, kesehatan, catat_absensi, izin, usulan_tools, laporan):
        domain.register(server)
    for domain in (pelanggaran, hafalan, kesehatan, catat_absensi, izin):
        for spec in domain.PENULISAN:
            book.tambah(spec)
