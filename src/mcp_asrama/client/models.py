"""What we read from the service, and nothing more: the contract's shapes (`mcp_asrama.contract`), re-exported.

Unknown fields are dropped on parse (allowlist): no shape declares `nik`, `no_hp_wali`, `alamat` or
`tanggal_lahir`, so personal data is never even kept. Every shape is frozen.
"""

from mcp_asrama.contract.absensi import (
    AbsensiHarian,
    CatatanAbsensi,
    HasilAbsensi,
    JumlahStatus,
    PerubahanAbsensi,
    RekapAbsensi,
    RekapAnak,
)
from mcp_asrama.contract.anak import Anak, AnakRingkas, DaftarAnak, DaftarKamar, DaftarKelas, Kamar, Kelas
from mcp_asrama.contract.hafalan import DaftarSetoran, ProgresAnak, ProgresHafalan, RataRata, Setoran
from mcp_asrama.contract.izin import DaftarIzin, Izin
from mcp_asrama.contract.kesehatan import (
    DaftarKunjungan,
    DaftarKunjunganKlinik,
    KategoriKesehatan,
    Kunjungan,
    KunjunganKlinik,
    RekapKesehatan,
)
from mcp_asrama.contract.pelanggaran import (
    DaftarJenisPelanggaran,
    DaftarPelanggaran,
    JenisPelanggaran,
    JumlahKategori,
    Pelanggaran,
    RekapPelanggaran,
    RekapPelanggaranAnak,
)
from mcp_asrama.contract.types import BELUM_DICATAT

__all__ = [
    "BELUM_DICATAT",
    "AbsensiHarian",
    "Anak",
    "AnakRingkas",
    "CatatanAbsensi",
    "DaftarAnak",
    "DaftarIzin",
    "DaftarJenisPelanggaran",
    "DaftarKamar",
    "DaftarKelas",
    "DaftarKunjungan",
    "DaftarKunjunganKlinik",
    "DaftarPelanggaran",
    "DaftarSetoran",
    "HasilAbsensi",
    "Izin",
    "JenisPelanggaran",
    "JumlahKategori",
    "JumlahStatus",
    "Kamar",
    "KategoriKesehatan",
    "Kelas",
    "Kunjungan",
    "KunjunganKlinik",
    "Pelanggaran",
    "PerubahanAbsensi",
    "ProgresAnak",
    "ProgresHafalan",
    "RataRata",
    "RekapAbsensi",
    "RekapAnak",
    "RekapKesehatan",
    "RekapPelanggaran",
    "RekapPelanggaranAnak",
    "Setoran",
]
