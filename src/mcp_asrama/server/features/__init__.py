"""What the model sees, one module per domain; `register` adds every domain's tools in a fixed order (hosts cache
the list; a stable order keeps prompt caches warm)."""

from mcp_asrama.server.core import AsramaServer
from mcp_asrama.server.features import absensi, anak, catat_absensi, izin, kamar


def register(server: AsramaServer) -> None:
    """Add the tools of every domain."""
    for domain in (anak, kamar, absensi, catat_absensi, izin):
        domain.register(server)
