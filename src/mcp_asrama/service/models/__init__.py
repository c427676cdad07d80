"""ORM tables, one module per domain; importing the package registers them all on `Base.metadata`."""

from mcp_asrama.service.models.absensi import Absensi, RiwayatAbsensi
from mcp_asrama.service.models.anak import Anak, Kamar
from mcp_asrama.service.models.base import Base
from mcp_asrama.service.models.hafalan import Hafalan
from mcp_asrama.service.models.idempotensi import Idempotensi
from mcp_asrama.service.models.izin import Izin
from mcp_asrama.service.models.kesehatan import KunjunganKlinik
from mcp_asrama.service.models.pelanggaran import JenisPelanggaran, Pelanggaran
from mcp_asrama.service.models.perubahan import Perubahan

__all__ = [
    "Absensi",
    "Anak",
    "Base",
    "Hafalan",
    "Idempotensi",
    "Izin",
    "JenisPelanggaran",
    "Kamar",
    "KunjunganKlinik",
    "Pelanggaran",
    "Perubahan",
    "RiwayatAbsensi",
]
