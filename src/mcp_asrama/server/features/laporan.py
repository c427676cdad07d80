"""Prompts the user picks from the host's menu: report templates that tell the model which tools to use."""

import calendar
import re
from datetime import date
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import Field

from mcp_asrama.client import NotFound
from mcp_asrama.server.arguments import is_id, parse_tanggal
from mcp_asrama.server.asrama_server import AsramaServer
from mcp_asrama.server.features import anak_reads
from mcp_asrama.server.guard.scoped import scoped_reader


def _text(name: str, value: str, limit: int = 100) -> str:
    """A user-given value, single-line and bounded, quoted for the template."""
    value = " ".join(value.split())
    if not value or len(value) > limit:
        raise MCPError(code=INVALID_PARAMS, message=f"{name} harus diisi, paling panjang {limit} karakter")
    return value


def _date(name: str, value: str) -> date:
    day = parse_tanggal(value.strip())
    if day is not None:
        return day
    raise MCPError(code=INVALID_PARAMS, message=f"{name} harus tanggal yang ada, format YYYY-MM-DD")


OUT_OF_SCOPE = "Di luar wewenang Anda: token Anda tidak memberi akses ke {what} ini."


def _allow(ctx: Context[Any, Any], what: str, **unit: Any) -> None:
    """Refuse a report on a room or class the principal may not see, as the guard's policy says (the template
    itself holds no data)."""
    if not scoped_reader(ctx).may_report(**unit):
        raise MCPError(code=INVALID_PARAMS, message=OUT_OF_SCOPE.format(what=what))


def _class(ctx: Context[Any, Any], kelas: str) -> str:
    """A class the principal may report on whole, as typed (single-line, bounded)."""
    name = _text("kelas", kelas, 20)
    _allow(ctx, "kelas", kelas=name)
    return name


KelasArg = Annotated[str, Field(description="Kelas, mis. '7A'")]


def laporan_kamar(nama_kamar: Annotated[str, Field(description="Nama kamar, mis. 'Al-Fatih 1'")], ctx: Context) -> str:
    """Laporan singkat satu kamar: penghuni, terisi vs kapasitas, dan siapa yang tidak hadir hari ini."""
    kamar = _text("nama_kamar", nama_kamar)
    _allow(ctx, "kamar", kamar=kamar)
    return (
        f'Buatkan laporan singkat untuk kamar "{kamar}" per hari ini ({date.today().isoformat()}). '
        f'Gunakan daftar_kamar untuk gedung, kapasitas, terisi dan musyrif; cari_anak(kamar="{kamar}") untuk '
        f'daftar penghuni; absensi_harian(tanggal=hari ini, kamar="{kamar}") untuk yang tidak hadir dan yang belum '
        "dicatat absensinya (belum_dicatat). Jawab hanya dari hasil tool; bila data tidak tersedia, katakan demikian."
    )


def laporan_harian(
    tanggal: Annotated[str, Field(description="Tanggal YYYY-MM-DD")],
    ctx: Context,
    kelas: Annotated[str | None, Field(description="Kelas, mis. '7A' (opsional)")] = None,
) -> str:
    """Laporan absensi satu hari, untuk seluruh asrama atau satu kelas."""
    hari = _date("tanggal", tanggal).isoformat()
    # A musyrif may report on the part of a class that lives in his rooms; tools show only that part.
    _allow(ctx, "kelas", kelas=kelas, rooms_of_class=True)
    cakupan = f'kelas "{_text("kelas", kelas, 20)}"' if kelas else "seluruh asrama"
    filter_kelas = f', kelas="{_text("kelas", kelas, 20)}"' if kelas else ""
    return (
        f'Buatkan laporan absensi {cakupan} untuk tanggal {hari}. Panggil absensi_harian(tanggal="{hari}"'
        f"{filter_kelas}). Sajikan jumlah per status (termasuk belum_dicatat), lalu daftar anak yang izin, sakit dan "
        "alpa beserta keterangannya, dan anak yang belum dicatat absensinya. Jawab hanya dari hasil tool."
    )


def rekap_wali_kelas(
    kelas: KelasArg,
    dari: Annotated[str, Field(description="Tanggal awal YYYY-MM-DD")],
    sampai: Annotated[str, Field(description="Tanggal akhir YYYY-MM-DD")],
    ctx: Context,
) -> str:
    """Rekap absensi satu kelas untuk wali kelas, dengan anak yang perlu diperhatikan."""
    nama_kelas = _class(ctx, kelas)
    awal, akhir = _date("dari", dari), _date("sampai", sampai)
    if akhir < awal:
        raise MCPError(code=INVALID_PARAMS, message="sampai harus sama dengan atau sesudah dari")
    return (
        f'Buatkan rekap absensi kelas "{nama_kelas}" dari {awal.isoformat()} sampai {akhir.isoformat()} untuk wali '
        f'kelas. Panggil rekap_absensi(dari="{awal.isoformat()}", sampai="{akhir.isoformat()}", '
        f'kelas="{nama_kelas}") dan cari_anak(kelas="{nama_kelas}"). Rekap hanya menghitung anak yang punya catatan: '
        "bila jumlah_anak rekap lebih kecil dari total cari_anak, sebutkan selisihnya sebagai anak yang belum pernah "
        f'dicatat dalam rentang itu; absensi_harian(tanggal="{akhir.isoformat()}", kelas="{nama_kelas}", '
        'status="belum_dicatat") menyebut siapa yang belum dicatat pada tanggal terakhir. Sajikan jumlah per status, '
        "anak yang paling sering tidak hadir, dan saran tindak lanjut yang wajar. Jawab hanya dari hasil tool."
    )


def _bulan(value: str) -> tuple[date, date]:
    """The first and last day of a month written `YYYY-MM`."""
    text = value.strip()
    if re.fullmatch(r"\d{4}-\d{2}", text) and 1 <= int(text[5:]) <= 12 and int(text[:4]) >= 1:
        year, month = int(text[:4]), int(text[5:])
        return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])
    raise MCPError(code=INVALID_PARAMS, message="bulan harus berformat YYYY-MM, mis. 2026-10")


async def laporan_bulanan_wali(
    id_anak: Annotated[str, Field(description="Id anak, mis. 'A001'")],
    bulan: Annotated[str, Field(description="Bulan YYYY-MM, mis. '2026-10'")],
    ctx: Context,
) -> str:
    """Laporan bulanan satu anak untuk pertemuan orang tua: kehadiran, hafalan, pelanggaran, prestasi, sakit (hari)."""
    ident = id_anak.strip()
    if not is_id(ident):
        raise MCPError(code=INVALID_PARAMS, message="id_anak harus 1–64 huruf, angka, '-', '_' atau '.'")
    awal, akhir = _bulan(bulan)
    reader = scoped_reader(ctx)
    try:
        await anak_reads.detail_anak(reader, ident)
    except NotFound:
        raise MCPError(code=INVALID_PARAMS, message=OUT_OF_SCOPE.format(what="anak") + " (atau id tidak ada)") from None
    a, z = awal.isoformat(), akhir.isoformat()
    health = (
        f'Kesehatan: sebutkan "sakit N hari" dari jumlah sakit pada rekap_absensi. Rincian kunjungan klinik ada di '
        f'kesehatan_anak(id_anak="{ident}", dari="{a}", sampai="{z}"); sertakan hanya yang perlu diketahui orang '
        "tua, dengan bahasa yang hati-hati."
        if reader.sees_health_details
        else 'Kesehatan: sebutkan hanya "sakit N hari" dari jumlah sakit pada rekap_absensi; jangan mencari atau '
        "menyebut keluhan, diagnosis, obat atau kunjungan klinik."
    )
    return (
        f'Buatkan laporan bulanan anak dengan id "{ident}" untuk bulan {bulan.strip()} ({a} s.d. {z}) bagi pertemuan '
        f'wali kelas dengan orang tua. Panggil detail_anak(id_anak="{ident}") untuk nama, kelas dan kamar; '
        f'rekap_absensi(dari="{a}", sampai="{z}", id_anak="{ident}") untuk kehadiran (hadir, izin, sakit, alpa); '
        f'hafalan_anak(id_anak="{ident}") untuk hafalan (ayat, juz, laju per pekan, setoran bulan ini); '
        f'pelanggaran_anak(id_anak="{ident}", dari="{a}", sampai="{z}") untuk pelanggaran dan poin; '
        f'prestasi_anak(id_anak="{ident}", dari="{a}", sampai="{z}") untuk prestasi (bidang, tingkat, keterangan). '
        f"{health} Susun: ringkasan, kehadiran, hafalan, disiplin dan prestasi (prestasi disebut berdampingan dengan "
        "pelanggaran), lalu saran tindak lanjut yang wajar dan membangun. Jawab hanya dari hasil tool; bila data "
        "tidak tersedia, katakan demikian."
    )


def rapat_wali_kelas(
    kelas: KelasArg,
    bulan: Annotated[str, Field(description="Bulan YYYY-MM, mis. '2026-10'")],
    ctx: Context,
) -> str:
    """Bahan rapat wali kelas untuk satu bulan: kehadiran, hafalan, pelanggaran dan jumlah kunjungan klinik."""
    nama_kelas = _class(ctx, kelas)
    awal, akhir = _bulan(bulan)
    a, z, k = awal.isoformat(), akhir.isoformat(), nama_kelas
    return (
        f'Siapkan bahan rapat wali kelas "{k}" untuk bulan {bulan.strip()} ({a} s.d. {z}). Panggil '
        f'cari_anak(kelas="{k}") untuk jumlah anak; rekap_absensi(dari="{a}", sampai="{z}", kelas="{k}") untuk '
        f'kehadiran; progres_hafalan(kelas="{k}") untuk hafalan (rata-rata dan anak yang tertinggal); '
        f'rekap_pelanggaran(dari="{a}", sampai="{z}", kelas="{k}") untuk disiplin; rekap_kesehatan(dari="{a}", '
        f'sampai="{z}", kelas="{k}") untuk jumlah kunjungan klinik per kategori (hanya jumlah; "disembunyikan" tetap '
        "ditulis disembunyikan, jangan ditebak; bila rekap itu ditolak, sebutkan alasannya saja). Sajikan ringkasan "
        "per bagian, anak yang perlu perhatian (kehadiran, hafalan, disiplin; tanpa data kesehatan per anak), dan "
        "usulan tindak lanjut. Jawab hanya dari hasil tool."
    )


def register(server: AsramaServer) -> None:
    """Add the prompts in a fixed order."""
    for fn in (laporan_kamar, laporan_harian, rekap_wali_kelas, laporan_bulanan_wali, rapat_wali_kelas):
        server.prompt()(fn)
