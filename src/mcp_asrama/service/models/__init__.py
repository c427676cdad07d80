"""ORM tables, one module per domain; importing the package registers them all on `Base.metadata` (every module of
the package is imported, so a new `models/<name>.py` needs no edit here)."""

import importlib
import pkgutil

from mcp_asrama.service.models.absensi import Absensi, RiwayatAbsensi
from mcp_asrama.service.models.anak import Anak, Kamar
from mcp_asrama.service.models.base import Base
from mcp_asrama.service.models.hafalan import Hafalan
from mcp_asrama.service.models.idempotensi import Idempotensi
from mcp_asrama.service.models.izin import Izin
from mcp_asrama.service.models.kesehatan import KunjunganKlinik
from mcp_asrama.service.models.pelanggaran import JenisPelanggaran, Pelanggaran
from mcp_asrama.service.models.perubahan import Perubahan

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

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


def table_class(name: str) -> type[Base] | None:
    """The ORM class of the table `name` (None: no such table)."""
    for mapper in Base.registry.mappers:
        if getattr(mapper.class_, "__tablename__", None) == name:
            return mapper.class_
    return None
