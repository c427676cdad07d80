"""Clinic visits: counting visits and students per category (recorded and listed by `service.records`). Health
data: nothing here logs a field of a visit."""

from datetime import date

from sqlalchemy import distinct, func, select
from sqlalchemy.orm import Session

from mcp_asrama.service.crud.anak import FilterValues, dated_filters
from mcp_asrama.service.models import Anak, KunjunganKlinik


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
