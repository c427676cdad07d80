"""Clinic visits: recording one, listing them, and counting visits and students per category. Health data: nothing
here logs a field of a visit."""

import secrets
from datetime import UTC, date, datetime

from sqlalchemy import distinct, func, select
from sqlalchemy.orm import Session

from mcp_asrama.service.crud import perubahan
from mcp_asrama.service.crud.anak import FilterValues, dated_filters
from mcp_asrama.service.models import Anak, KunjunganKlinik


def create(
    session: Session,
    anak: Anak,
    *,
    tanggal: date,
    keluhan: str,
    kategori: str,
    tindakan: str | None,
    obat: str | None,
    rujukan: str | None,
    petugas: str | None,
    actor: str | None,
) -> KunjunganKlinik:
    """Store a visit."""
    record = KunjunganKlinik(
        id=secrets.token_urlsafe(12),
        id_anak=anak.id,
        tanggal=tanggal,
        keluhan=keluhan,
        kategori=kategori,
        tindakan=tindakan,
        obat=obat,
        rujukan=rujukan,
        petugas=petugas,
        dicatat_oleh=actor,
        dibuat=datetime.now(UTC),
    )
    session.add(record)
    perubahan.catat(session, "kesehatan", tanggal=tanggal, id_anak=anak.id)
    session.flush()
    return record


def search(
    session: Session,
    *,
    id_anak: str | None,
    kelas: FilterValues,
    kamar: FilterValues,
    dari: date | None,
    sampai: date | None,
    limit: int,
    offset: int,
) -> tuple[int, list[tuple[KunjunganKlinik, Anak]]]:
    """Visits matching every given filter, latest first: (total, one page)."""
    filters = dated_filters(
        session, KunjunganKlinik.tanggal, id_anak=id_anak, kelas=kelas, kamar=kamar, dari=dari, sampai=sampai
    )
    base = select(KunjunganKlinik, Anak).join(Anak, Anak.id == KunjunganKlinik.id_anak).where(*filters)
    total = session.scalar(select(func.count()).select_from(base.subquery())) or 0
    order = (KunjunganKlinik.tanggal.desc(), KunjunganKlinik.dibuat.desc(), KunjunganKlinik.id)
    page = session.execute(base.order_by(*order).limit(limit).offset(offset))
    return total, [(k, a) for k, a in page]


def rekap(
    session: Session, *, dari: date, sampai: date, kelas: FilterValues, kamar: FilterValues
) -> tuple[int, int, dict[str, tuple[int, int]]]:
    """Over [dari, sampai]: (visits, distinct students, {kategori: (visits, distinct students)})."""
    filters = dated_filters(
        session, KunjunganKlinik.tanggal, id_anak=None, kelas=kelas, kamar=kamar, dari=dari, sampai=sampai
    )
    base = select().select_from(KunjunganKlinik).join(Anak, Anak.id == KunjunganKlinik.id_anak).where(*filters)
    counts = (func.count(), func.count(distinct(KunjunganKlinik.id_anak)))
    kunjungan, anak = session.execute(base.add_columns(*counts)).one()
    per = session.execute(base.add_columns(KunjunganKlinik.kategori, *counts).group_by(KunjunganKlinik.kategori))
    return int(kunjungan), int(anak), {k: (int(v), int(a)) for k, v, a in per}
