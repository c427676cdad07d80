"""ORM tables: students (`anak`), rooms (`kamar`), daily attendance (`absensi`) with its history
(`riwayat_absensi`), leave (`izin`) and the stored answers of idempotent writes (`idempotensi`)."""

from datetime import date, datetime

from sqlalchemy import Date, DateTime, ForeignKey, Index, Integer, String, Text, func
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    """Declarative base of the service's tables."""


class Kamar(Base):
    """A dormitory room."""

    __tablename__ = "kamar"

    nama: Mapped[str] = mapped_column(String(100), primary_key=True)
    gedung: Mapped[str] = mapped_column(String(100))
    kapasitas: Mapped[int] = mapped_column(Integer)
    musyrif: Mapped[str | None] = mapped_column(String(200))


class Anak(Base):
    """A student; `nik`, `no_hp_wali`, `alamat` and `tanggal_lahir` are personal data."""

    __tablename__ = "anak"

    # A stable integer key: SQLite's rowid alias, which the trigram name index refers to.
    no: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(64), unique=True)
    nama: Mapped[str] = mapped_column(String(200))
    kelas: Mapped[str] = mapped_column(String(20))
    kamar: Mapped[str | None] = mapped_column(String(100))
    status: Mapped[str] = mapped_column(String(10), default="aktif")
    jenis_kelamin: Mapped[str | None] = mapped_column(String(1))
    nama_wali: Mapped[str | None] = mapped_column(String(200))
    nik: Mapped[str | None] = mapped_column(String(16))
    no_hp_wali: Mapped[str | None] = mapped_column(String(20))
    alamat: Mapped[str | None] = mapped_column(String(500))
    tanggal_lahir: Mapped[date | None] = mapped_column(Date)

    __table_args__ = (
        Index("ix_anak_nama_id", "nama", "id"),
        Index("ix_anak_kelas_ci", func.lower(kelas)),
        Index("ix_anak_kamar_ci", func.lower(kamar)),
    )


class Absensi(Base):
    """One student's attendance on one day: hadir, izin, sakit or alpa."""

    __tablename__ = "absensi"

    tanggal: Mapped[date] = mapped_column(Date, primary_key=True)
    id_anak: Mapped[str] = mapped_column(ForeignKey("anak.id", ondelete="CASCADE"), primary_key=True)
    status: Mapped[str] = mapped_column(String(5))
    keterangan: Mapped[str | None] = mapped_column(String(500))

    # Covers a student's date range with its status: /absensi/rekap reads only this index, never the table.
    __table_args__ = (Index("ix_absensi_anak_tanggal_status", "id_anak", "tanggal", "status"),)


class RiwayatAbsensi(Base):
    """One change of an attendance record: old → new (NULL: no record), who (`oleh`), when, which confirmation
    (`kunci`, the write's Idempotency-Key)."""

    __tablename__ = "riwayat_absensi"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tanggal: Mapped[date] = mapped_column(Date)
    id_anak: Mapped[str] = mapped_column(ForeignKey("anak.id", ondelete="CASCADE"))
    status_lama: Mapped[str | None] = mapped_column(String(5))
    status_baru: Mapped[str | None] = mapped_column(String(5))
    keterangan_lama: Mapped[str | None] = mapped_column(String(500))
    keterangan_baru: Mapped[str | None] = mapped_column(String(500))
    oleh: Mapped[str | None] = mapped_column(String(200))
    waktu: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    kunci: Mapped[str | None] = mapped_column(String(128))

    __table_args__ = (Index("ix_riwayat_absensi_anak_tanggal", "id_anak", "tanggal", "id"),)


class Izin(Base):
    """A student's leave over [dari, sampai]; `tanggal_kembali` once ended. `id` is a random handle, `alasan` may be
    personal (kept here only, never copied into `absensi.keterangan`)."""

    __tablename__ = "izin"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    id_anak: Mapped[str] = mapped_column(ForeignKey("anak.id", ondelete="CASCADE"))
    dari: Mapped[date] = mapped_column(Date)
    sampai: Mapped[date] = mapped_column(Date)
    jenis: Mapped[str] = mapped_column(String(10))
    alasan: Mapped[str | None] = mapped_column(String(500))
    tanggal_kembali: Mapped[date | None] = mapped_column(Date)
    dibuat_oleh: Mapped[str | None] = mapped_column(String(200))
    dibuat: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    selesai_oleh: Mapped[str | None] = mapped_column(String(200))

    __table_args__ = (Index("ix_izin_anak_dari", "id_anak", "dari"),)


class Idempotensi(Base):
    """The first answer to a write made with an Idempotency-Key, replayed when the same request comes again."""

    __tablename__ = "idempotensi"

    kunci: Mapped[str] = mapped_column(String(128), primary_key=True)
    rute: Mapped[str] = mapped_column(String(300))
    sidik: Mapped[str] = mapped_column(String(64))
    status_code: Mapped[int] = mapped_column(Integer)
    respons: Mapped[str] = mapped_column(Text)
    waktu: Mapped[datetime] = mapped_column(DateTime(timezone=True))
