"""The staff list's queries, shared by the routes and the `mcp-asrama pengurus` commands: list, find, store (by
case-folded email), deactivate, set a local account's password (an Argon2id hash, `argon2-cffi`'s defaults:
RFC 9106's low-memory profile), check one at sign-in (`masuk`: failed attempts counted, the account locked after
`LOCK_AFTER` in a row), and each room's musyrif by the staff list."""

import math
import secrets
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any, Literal

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from mcp_asrama.contract import BY_NAME
from mcp_asrama.contract.oauth_state import person_family
from mcp_asrama.contract.pengurus import HasilMasuk, PengurusIn, fold_email
from mcp_asrama.contract.pengurus import Pengurus as PengurusPublic
from mcp_asrama.names import fold
from mcp_asrama.service.crud import common, perubahan
from mcp_asrama.service.crud.kamar import stored_room
from mcp_asrama.service.models.oauth_state import OAuthState
from mcp_asrama.service.models.pengurus import Pengurus

HASHER = PasswordHasher()
"""Argon2id with the library's maintained defaults (its parameters live in each hash, so they may change later)."""
LOCK_AFTER = 5
"""Wrong passwords in a row that lock the account: for `FIRST_LOCK`, doubled by each further one, at most `MAX_LOCK`."""
FIRST_LOCK = timedelta(seconds=60)
MAX_LOCK = timedelta(hours=1)


def daftar(session: Session, aktif: bool | None = None, peran: Sequence[str] = ()) -> list[Pengurus]:
    """The staff by email, only the (in)active when `aktif` is given, only those with any of `peran` when given."""
    query = select(Pengurus).order_by(Pengurus.email)
    if aktif is not None:
        query = query.where(Pengurus.aktif == aktif)
    return [p for p in session.scalars(query) if not peran or set(peran) & set(p.peran)]


def cari(session: Session, email: str) -> Pengurus | None:
    """The staff member of `email` (in any case), or None."""
    return session.get(Pengurus, fold_email(email))


def penanggung_jawab(session: Session, peran: str, unit: Literal["kamar", "kelas"]) -> dict[str, str]:
    """Who answers for each room (`musyrif`) or class (`wali_kelas`) by the staff list, by the unit name's fold: the
    name of the first active staff member (by email) with role `peran` whose rooms or classes hold it."""
    found: dict[str, str] = {}
    for staff in daftar(session, aktif=True, peran=(peran,)):
        for name in getattr(staff, unit):
            found.setdefault(fold(name), staff.nama)
    return found


def rows_of(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Validated records as rows to store, each stamped with the time of the write."""
    now = datetime.now(UTC)
    return [{**record, "diubah": now} for record in records]


def unknown_rooms(session: Session, kamar: Sequence[str]) -> list[str]:
    """The rooms of a staff record that are not stored (by the name's fold, as every filter compares)."""
    return [room for room in kamar if stored_room(session, room) is None]


ROOMS_UNKNOWN = "kamar tidak ada di daftar kamar: {}"


def changed(session: Session) -> None:
    """Record a staff change in the change feed of what shows it (the room list names each room's musyrif from the
    staff list: `contract.DOMAINS`' `shown_in`), so that its listeners are told."""
    for name in BY_NAME["pengurus"].shown_in:
        perubahan.catat(session, perubahan.jenis(name))


def simpan(session: Session, body: PengurusIn) -> bool:
    """Store `body` (its password, failed attempts and lock kept): whether the staff member is new. An inactive
    record's sign-ins end at once."""
    new = cari(session, body.email) is None
    common.upsert(session, Pengurus, rows_of([body.model_dump()]), key=("email",))
    if not body.aktif:
        sesi(session, body.email, cabut=True)
    changed(session)
    return new


def nonaktif(session: Session, email: str) -> Pengurus | None:
    """Deactivate the staff member of `email` (None: no such person) and end their sessions and tokens at once;
    deactivating twice changes nothing more."""
    found = cari(session, email)
    if found is not None and found.aktif:
        found.aktif = False
        found.diubah = datetime.now(UTC)
        changed(session)
    if found is not None:
        sesi(session, found.email, cabut=True)
    return found


def sesi(session: Session, email: str, *, cabut: bool = False) -> int:
    """How many sign-ins of `email` live (browser sessions and token families, `--auth sekolah`); with `cabut`,
    end them all (their refresh tokens stop at once, their access tokens at their next check)."""
    now = datetime.now(UTC)
    mine = OAuthState.family.startswith(person_family(email) + ".", autoescape=True)
    if cabut:
        return len(session.execute(delete(OAuthState).where(mine).returning(OAuthState.key)).all())
    query = select(func.count(func.distinct(OAuthState.family))).where(mine, OAuthState.expires_at > now)
    return int(session.scalar(query) or 0)


def set_sandi(session: Session, email: str, sandi: str) -> bool:
    """Store the Argon2id hash of `sandi` as the password of `email` and clear its failed attempts and lock
    (False: no such person)."""
    found = cari(session, email)
    if found is None:
        return False
    found.sandi = HASHER.hash(sandi)
    found.gagal = 0
    found.terkunci_sampai = None
    found.diubah = datetime.now(UTC)
    return True


@cache
def _dummy_hash() -> str:
    """A hash of a random password: checked when there is nothing to check, so the time taken does not tell."""
    return HASHER.hash(secrets.token_urlsafe(16))


def _verifies(hashed: str, sandi: str) -> bool:
    try:
        return HASHER.verify(hashed, sandi)
    except (VerificationError, InvalidHashError):
        return False


def _utc(moment: datetime | None) -> datetime | None:
    """A stored time as UTC (SQLite gives it back without its zone)."""
    return moment.replace(tzinfo=UTC) if moment is not None and moment.tzinfo is None else moment


def masuk(session: Session, email: str, sandi: str, now: datetime) -> HasilMasuk:
    """Check `sandi` against the password of `email` at `now` (the caller commits): `salah` for an unknown email, no
    password or a wrong one (counted: the `LOCK_AFTER`th in a row locks the account); `terkunci` while locked (not
    checked, not counted); `nonaktif` for the right one of a deactivated account; else `ok` (the count cleared, the
    hash renewed when the hasher's parameters changed)."""
    found = cari(session, email)
    if found is None or found.sandi is None:
        _verifies(_dummy_hash(), sandi)
        return HasilMasuk(hasil="salah")
    locked = _utc(found.terkunci_sampai)
    if locked is not None and locked > now:
        return HasilMasuk(hasil="terkunci", coba_lagi_detik=math.ceil((locked - now).total_seconds()))
    if not _verifies(found.sandi, sandi):
        counted = update(Pengurus).where(Pengurus.email == found.email).values(gagal=Pengurus.gagal + 1)
        gagal = session.execute(counted.returning(Pengurus.gagal)).scalar_one()
        if gagal >= LOCK_AFTER:
            found.terkunci_sampai = now + min(FIRST_LOCK * 2 ** min(gagal - LOCK_AFTER, 6), MAX_LOCK)
        return HasilMasuk(hasil="salah")
    if not found.aktif:
        return HasilMasuk(hasil="nonaktif")
    found.gagal = 0
    found.terkunci_sampai = None
    if HASHER.check_needs_rehash(found.sandi):
        found.sandi = HASHER.hash(sandi)
    return HasilMasuk(hasil="ok", pengurus=PengurusPublic.model_validate(found, from_attributes=True))
