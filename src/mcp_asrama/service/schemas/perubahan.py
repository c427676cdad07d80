"""The change feed's event (`GET /perubahan`): the contract's, every key sent (null: any of that kind)."""

from datetime import date

from mcp_asrama.contract import perubahan as wire


class PerubahanPublic(wire.Perubahan):
    """One committed change: `tanggal`, `id_anak` and `kamar` say which records; null: any of that kind. With a
    student: `kamar` and `kelas` are that student's (who may see the change)."""

    tanggal: date | None
    id_anak: str | None
    kamar: str | None


class Kepala(wire.Posisi):
    """The newest event's id when the stream opened (0: none), in its first frame and in a reset."""
