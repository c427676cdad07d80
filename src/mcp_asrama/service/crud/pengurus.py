"""The staff list's queries, shared by the routes and the `mcp-asrama pengurus` commands: list, find, store (by
case-folded email), deactivate, and set a local account's password (an Argon2id hash, `argon2-cffi`'s defaults:
RFC 9106's low-memory profile)."""

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from argon2 import PasswordHasher
from sqlalchemy import select
from sqlalchemy.orm import Session

from mcp_asrama.contract.pengurus import PengurusIn, fold_email
from mcp_asrama.service.crud import common
from mcp_asrama.service.models.pengurus import Pengurus

HASHER = PasswordHasher()
"""Argon2id with the library's maintained defaults (its parameters live in each hash, so they may change later)."""


def daftar(session: Session, aktif: bool | None = None, peran: Sequence[str] = ()) -> list[Pengurus]:
    """The staff by email, only the (in)active when `aktif` is given, only those with any of `peran` when given."""
    query = select(Pengurus).order_by(Pengurus.email)
    if aktif is not None:
        query = query.where(Pengurus.aktif == aktif)
    return [p for p in session.scalars(query) if not peran or set(peran) & set(p.peran)]


def cari(session: Session, email: str) -> Pengurus | None:
    """The staff member of `email` (in any case), or None."""
    return session.get(Pengurus, fold_email(email))


def rows_of(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Validated records as rows to store, each stamped with the time of the write."""
    now = datetime.now(UTC)
    return [{**record, "diubah": now} for record in records]


def simpan(session: Session, body: PengurusIn) -> bool:
    """Store `body` (its password, failed attempts and lock kept): whether the staff member is new."""
    new = cari(session, body.email) is None
    common.upsert(session, Pengurus, rows_of([body.model_dump()]), key=("email",))
    return new


def nonaktif(session: Session, email: str) -> Pengurus | None:
    """Deactivate the staff member of `email` (None: no such person); deactivating twice changes nothing more."""
    found = cari(session, email)
    if found is not None and found.aktif:
        found.aktif = False
        found.diubah = datetime.now(UTC)
    return found


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
