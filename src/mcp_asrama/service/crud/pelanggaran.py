"""Discipline: the school's kinds of violation, and summing violations per student and category (recorded and
listed by `service.records`)."""

from collections.abc import Sequence
from datetime import date
from typing import Any

from sqlalchemy import case, func, insert, select
from sqlalchemy.orm import Session

from mcp_asrama.service.crud.anak import FilterValues, dated_filters
from mcp_asrama.service.models import Anak, JenisPelanggaran, Pelanggaran
from mcp_asrama.service.schemas.pelanggaran import KATEGORI_PELANGGARAN

# (kode, nama, kategori, poin): the kinds a new database starts with (revision 0002 inserts its own copy).
DEFAULT_JENIS: tuple[tuple[str, str, str, int], ...] = (
    ("terlambat_sholat", "Terlambat sholat berjamaah", "ringan", 5),
    ("terlambat_kelas", "Terlambat masuk kelas", "ringan", 5),
    ("tidak_piket", "Tidak melaksanakan piket", "ringan", 5),
    ("seragam", "Tidak berseragam lengkap", "ringan", 5),
    ("tidur_kajian", "Tidur saat kajian", "ringan", 5),
    ("berbahasa_kasar", "Berkata kasar", "ringan", 10),
    ("keluar_tanpa_izin", "Keluar asrama tanpa izin", "sedang", 20),
    ("membawa_hp", "Membawa HP tanpa izin", "sedang", 25),
    ("bolos", "Tidak masuk kelas tanpa keterangan", "sedang", 20),
    ("terlambat_kembali", "Terlambat kembali dari izin", "sedang", 15),
    ("berkelahi", "Berkelahi", "berat", 50),
    ("merokok", "Merokok", "berat", 75),
    ("mencuri", "Mengambil barang orang lain", "berat", 100),
)


def ensure_default_jenis(session: Session) -> int:
    """Give an empty `jenis_pelanggaran` the default kinds; returns how many were inserted (0: it had some)."""
    if session.scalar(select(JenisPelanggaran.kode).limit(1)) is not None:
        return 0
    rows = [{"kode": k, "nama": n, "kategori": c, "poin": p} for k, n, c, p in DEFAULT_JENIS]
    session.execute(insert(JenisPelanggaran), rows)
    return len(rows)


def _kategori_order() -> Any:
    return case({k: n for n, k in enumerate(KATEGORI_PELANGGARAN)}, value=JenisPelanggaran.kategori, else_=9)


def list_jenis(session: Session) -> Sequence[JenisPelanggaran]:
    """Every kind, by kategori (ringan, sedang, berat) then nama."""
    return session.scalars(
        select(JenisPelanggaran).order_by(_kategori_order(), JenisPelanggaran.nama, JenisPelanggaran.kode)
    ).all()


def get_jenis(session: Session, kode: str) -> JenisPelanggaran | None:
    return session.get(JenisPelanggaran, kode)


def rekap(
    session: Session, *, dari: date, sampai: date, kelas: FilterValues, kamar: FilterValues
) -> list[tuple[Anak, dict[str, int], int]]:
    """Per student with at least one violation in [dari, sampai]: (student, count per kategori, points)."""
    filters = dated_filters(
        session, Pelanggaran.tanggal, id_anak=None, kelas=kelas, kamar=kamar, dari=dari, sampai=sampai
    )
    rows = session.execute(
        select(Anak, Pelanggaran.kategori, func.count(), func.sum(Pelanggaran.poin))
        .join(Anak, Anak.id == Pelanggaran.id_anak)
        .where(*filters)
        .group_by(Anak.no, Pelanggaran.kategori)
    )
    per_anak: dict[str, tuple[Anak, dict[str, int], list[int]]] = {}
    for anak, kategori, jumlah, poin in rows:
        entry = per_anak.setdefault(anak.id, (anak, {}, [0]))
        entry[1][kategori] = entry[1].get(kategori, 0) + int(jumlah)
        entry[2][0] += int(poin or 0)
    return [(a, counts, poin[0]) for a, counts, poin in per_anak.values()]
