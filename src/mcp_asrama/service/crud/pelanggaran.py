"""Discipline: the school's kinds of violation, and summing violations per student and category (recorded and
listed by `service.records`)."""

from collections.abc import Sequence
from datetime import date
from typing import Any

from sqlalchemy import case, func, insert, join, select
from sqlalchemy.orm import Session

from mcp_asrama.service.crud.anak import FilterValues, dated_filters
from mcp_asrama.service.crud.common import Rekap, ranked
from mcp_asrama.service.models import Anak, JenisPelanggaran, Pelanggaran
from mcp_asrama.service.schemas.pelanggaran import KATEGORI_PELANGGARAN

SUMMED = (*KATEGORI_PELANGGARAN, "jumlah", "poin")  # the numbers of a rekap, per student and in all

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
    session: Session, *, dari: date, sampai: date, kelas: FilterValues, kamar: FilterValues, limit: int | None = None
) -> Rekap:
    """Per student with at least one violation in [dari, sampai]: counts per kategori, their number and points; in
    all and per student (the first `limit`, or all), most points, then most violations first, then by name and id
    in code point order. Counted, summed and sorted by the database: it sends only the rows asked for."""
    filters = dated_filters(
        session, Pelanggaran.tanggal, id_anak=None, kelas=kelas, kamar=kamar, dari=dari, sampai=sampai
    )
    counted = [func.count().filter(Pelanggaran.kategori == k).label(k) for k in KATEGORI_PELANGGARAN]
    per = (
        select(
            Pelanggaran.id_anak,
            *counted,
            func.count().label("jumlah"),
            func.coalesce(func.sum(Pelanggaran.poin), 0).label("poin"),
        )
        .join(Anak, Anak.id == Pelanggaran.id_anak)
        .where(*filters)
        .group_by(Pelanggaran.id_anak)
        .subquery()
    )
    numbers = {name: per.c[name] for name in SUMMED}
    first = (per.c.poin.desc(), per.c.jumlah.desc())
    source = join(Anak.__table__, per, per.c.id_anak == Anak.id)
    return ranked(session, source, (Anak.id, Anak.nama, Anak.kelas, Anak.kamar), numbers, (), first, limit)
