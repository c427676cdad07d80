"""The server's instructions are composed from each feature's own summary, word for word as they were written by
hand before (the READS and WRITE_NOTE of app.py) for the modules listed by hand; a module that joins by itself
(`features.JOINED`: a contract domain's `features/<name>.py`) adds its own summaries after those."""

from mcp_asrama.server import features

READS = (
    "Data anak asrama/pesantren: cari anak (cari_anak), detail satu anak (detail_anak), daftar kamar (daftar_kamar), "
    "absensi satu hari (absensi_harian), rekap absensi (rekap_absensi), izin (daftar_izin), pelanggaran "
    "(pelanggaran_anak, rekap_pelanggaran), hafalan Al-Qur'an (hafalan_anak, progres_hafalan) dan kesehatan "
    "(rekap_kesehatan: hanya jumlah; kesehatan_anak: rincian hanya untuk petugas klinik). "
    "Jawab hanya dari hasil tool; jangan menebak. Data pribadi (NIK, nomor HP wali, alamat) tidak tersedia."
)
WRITE_NOTE = (
    " Bila wewenang Anda mengizinkan, catat absensi (catat_absensi), ajukan izin (ajukan_izin), akhiri izin "
    "(akhiri_izin), catat pelanggaran (catat_pelanggaran), setoran hafalan (catat_setoran_hafalan) dan, bagi "
    "petugas klinik, kunjungan klinik (catat_kunjungan_klinik): setiap pencatatan ditanyakan dulu kepada pengguna "
    "dan hanya ditulis bila ia menyetujui."
)


LISTED = tuple(module for module in features.TOLD if module not in features.JOINED)


def test_without_writes_the_instructions_name_the_reads() -> None:
    assert features.instructions(writes=False, told=LISTED) == READS
    if not features.JOINED:
        assert features.instructions(writes=False) == READS


def test_with_writes_they_name_the_writes_too() -> None:
    assert features.instructions(writes=True, told=LISTED) == READS + WRITE_NOTE
    if not features.JOINED:
        assert features.instructions(writes=True) == READS + WRITE_NOTE


def test_a_joined_module_is_told_after_the_listed_records() -> None:
    text = features.instructions(writes=True)
    for module in features.JOINED:
        reads, writes = getattr(module, "RINGKASAN", None), getattr(module, "RINGKASAN_TULIS", None)
        assert reads is None or text.index(reads) > text.index("kesehatan (rekap_kesehatan")
        assert writes is None or text.index(writes) > text.index("(catat_setoran_hafalan)")
    clinic = " dan, bagi petugas klinik, kunjungan klinik (catat_kunjungan_klinik): setiap pencatatan"
    assert clinic in text  # the aside stays last


def test_an_aside_goes_last_whatever_the_order() -> None:
    parts = ["a (x)", ", bagi petugas, b (y)", "c (z)"]
    assert features._series(parts) == "a (x), c (z) dan, bagi petugas, b (y)"
    assert features._series(["a (x)", "c (z)"]) == "a (x) dan c (z)"


def test_every_domain_is_told_and_every_tool_of_a_summary_is_named() -> None:
    assert set(features.TOLD) == set(features.DOMAINS)
    text = features.instructions(writes=True)
    for domain in features.DOMAINS:
        for spec in getattr(domain, "PENULISAN", ()):
            assert f"({spec.tool})" in text
