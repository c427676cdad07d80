"""Aggregates kept beside their records, written in the same transaction as every change of them (issue 24): each
student's memorisation progress (`hafalan_progres`, refreshed by our writes of deposits; a trigger names in
`hafalan_progres_basi` every student whose deposits changed, by any writer) and running attendance counts
(`absensi_kumulatif`, kept by triggers on `absensi`, whoever writes it). Tables and triggers: migration 0009."""

from datetime import date

from sqlalchemy import BigInteger, Date, Float, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from mcp_asrama.service.models.base import Base

PACE_FIELD = 4  # digits of one value of `HafalanProgres.laju` (at most 6236 ayat)


class HafalanProgres(Base):
    """One student's deposits summed up (`crud.hafalan.summarise`): distinct ayat and juz memorised by ziyadah, the
    last deposit of any kind, and the pace for each of the 28 days from the last ziyadah (`laju`, `PACE_FIELD`
    digits each: the distinct ziyadah ayat of the 28 days up to the last ziyadah + k). A student without deposits
    has no row."""

    __tablename__ = "hafalan_progres"

    id_anak: Mapped[str] = mapped_column(ForeignKey("anak.id", ondelete="CASCADE"), primary_key=True)
    ayat: Mapped[int] = mapped_column(Integer)
    juz: Mapped[float] = mapped_column(Float)
    # Days as numbers (`date.toordinal`): 100,000 of them read without parsing a date each
    hari_setoran_terakhir: Mapped[int] = mapped_column(Integer)
    hari_ziyadah_terakhir: Mapped[int | None] = mapped_column(Integer)
    laju: Mapped[str] = mapped_column(String(28 * PACE_FIELD))


class HafalanProgresBasi(Base):
    """A student whose deposits changed since their `hafalan_progres` row was written (a trigger on `hafalan` adds
    them; `crud.hafalan.refresh` removes them): their progress is counted from the deposits until refreshed."""

    __tablename__ = "hafalan_progres_basi"

    id_anak: Mapped[str] = mapped_column(String(64), primary_key=True)


class AbsensiKumulatif(Base):
    """Beside each attendance record, the student's count per status over every record up to that day, packed in
    one integer (`crud.absensi_kumulatif.WEIGHT`): a range's counts are two rows' difference."""

    __tablename__ = "absensi_kumulatif"

    # No foreign key: the rows follow `absensi` (deleted with its records, which follow their student).
    id_anak: Mapped[str] = mapped_column(String(64), primary_key=True)
    tanggal: Mapped[date] = mapped_column(Date, primary_key=True)
    jumlah: Mapped[int] = mapped_column(BigInteger)

    __table_args__ = (
        # A day's rows, one index range holding the counts: a whole school's rekap joins them (revision 0010)
        Index("ix_absensi_kumulatif_hari", "tanggal", "id_anak", "jumlah"),
        {"sqlite_with_rowid": False},  # the key is the table: a seek reads `jumlah` at once
    )
