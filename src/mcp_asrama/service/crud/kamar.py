"""Rooms with their occupancy."""

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from mcp_asrama.service.models import Anak, Kamar


def daftar_kamar(session: Session) -> list[dict[str, Any]]:
    """Every room with `terisi`, the number of students whose `kamar` names it (case-insensitively)."""
    occupancy = (
        select(func.lower(Anak.kamar).label("kunci"), func.count().label("terisi"))
        .where(Anak.kamar.is_not(None))
        .group_by(func.lower(Anak.kamar))
        .subquery()
    )
    rooms = session.execute(
        select(Kamar, func.coalesce(occupancy.c.terisi, 0))
        .outerjoin(occupancy, occupancy.c.kunci == func.lower(Kamar.nama))
        .order_by(Kamar.gedung, Kamar.nama)
    )
    return [
        {"nama": k.nama, "gedung": k.gedung, "kapasitas": k.kapasitas, "musyrif": k.musyrif, "terisi": terisi}
        for k, terisi in rooms
    ]
