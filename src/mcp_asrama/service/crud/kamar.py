"""Rooms with their occupancy, and the rule that no two rooms share a name's fold."""

from collections.abc import Iterable
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from mcp_asrama.names import fold
from mcp_asrama.service.models import Anak, Kamar


class NameClash(ValueError):
    """Room names that differ only in case or spacing from a stored room's, or from each other's."""

    def __init__(self, names: list[str]) -> None:
        shown = ", ".join(f"'{n[:40]}'" for n in names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        super().__init__(f"room name(s) {shown} differ only in case or spacing from another room: use the stored name")
        self.names = names


def stored_room(session: Session, name: str) -> str | None:
    """The stored room `name` folds onto (`Straße 1` for `STRASSE  1`), or None."""
    return session.scalar(select(Kamar.nama).where(Kamar.kunci == fold(name)).order_by(Kamar.nama).limit(1))


def refuse_clashes(session: Session, names: Iterable[str]) -> None:
    """NameClash unless each of `names` is a stored room's exact name or folds onto no stored room and onto no other
    of `names`: a room is renamed by nobody's typing."""
    by_key: dict[str, set[str]] = {}
    for name in names:
        by_key.setdefault(fold(name), set()).add(name)
    clashes = {n for spellings in by_key.values() if len(spellings) > 1 for n in spellings}
    keys = list(by_key)
    stored: dict[str, set[str]] = {}
    for start in range(0, len(keys), 500):
        for key, nama in session.execute(
            select(Kamar.kunci, Kamar.nama).where(Kamar.kunci.in_(keys[start : start + 500]))
        ):
            stored.setdefault(key or "", set()).add(nama)
    clashes.update(n for key, namas in stored.items() for n in by_key[key] if n not in namas)
    if clashes:
        raise NameClash(sorted(clashes))


def daftar_kamar(session: Session) -> list[dict[str, Any]]:
    """Every room with `terisi`, the number of students whose `kamar` names it (by the names' fold)."""
    occupancy = (
        select(Anak.kamar_kunci.label("kunci"), func.count().label("terisi"))
        .where(Anak.kamar_kunci.is_not(None))
        .group_by(Anak.kamar_kunci)
        .subquery()
    )
    rooms = session.execute(
        select(Kamar, func.coalesce(occupancy.c.terisi, 0))
        .outerjoin(occupancy, occupancy.c.kunci == Kamar.kunci)
        .order_by(Kamar.gedung, Kamar.nama)
    )
    return [
        {"nama": k.nama, "gedung": k.gedung, "kapasitas": k.kapasitas, "musyrif": k.musyrif, "terisi": terisi}
        for k, terisi in rooms
    ]
