"""`/oauth-state`: the shared state of the school's own sign-in (codes, refresh tokens, client registrations,
signing keys, sessions), by kind and opaque key, each row living until it expires. An expired row is never
answered, as if absent; each write deletes up to `PURGED` expired rows.

Add (`POST`: only when absent, else the stored value unchanged), store (`PUT`), read, take (read and delete at
once: of concurrent takers exactly one gets it), delete one, delete a family."""

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query, Response
from sqlalchemy import ColumnElement, delete, select, tuple_, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from mcp_asrama.contract.oauth_state import KEY_PATTERN, KIND_PATTERN, Dropped, State, StateIn
from mcp_asrama.service.crud.common import dialect
from mcp_asrama.service.deps import SessionDep, TokenDep
from mcp_asrama.service.models.oauth_state import OAuthState as Row

router = APIRouter(prefix="/oauth-state", tags=["oauth-state"], dependencies=[TokenDep])
KindPath = Annotated[str, Path(pattern=KIND_PATTERN, description="what is stored: code, refresh, client, …")]
KeyPath = Annotated[str, Path(pattern=KEY_PATTERN, description="its key (a secret's hash)")]
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "Tidak ada (atau sudah kedaluwarsa)"}}
PURGED = 100
ATTEMPTS = 3  # an add or store racing a take of the same key tries again


def _one(kind: str, key: str) -> ColumnElement[bool]:
    return (Row.kind == kind) & (Row.key == key)


def _purge(session: Session, now: datetime) -> None:
    """Delete up to `PURGED` expired rows."""
    expired = select(Row.kind, Row.key).where(Row.expires_at <= now).limit(PURGED)
    session.execute(delete(Row).where(tuple_(Row.kind, Row.key).in_(expired)))


def _live(session: Session, kind: str, key: str, now: datetime) -> dict[str, Any] | None:
    return session.scalar(select(Row.value).where(_one(kind, key), Row.expires_at > now))


def _add(session: Session, kind: str, key: str, body: StateIn, now: datetime) -> bool:
    """Store `body` unless `kind`/`key` holds a live row (an expired one is replaced): whether it was stored."""
    insert = postgresql.insert if dialect(session) == "postgresql" else sqlite.insert
    values = {"value": body.value, "family": body.family, "expires_at": now + timedelta(seconds=body.ttl)}
    statement = insert(Row).values(kind=kind, key=key, **values)
    statement = statement.on_conflict_do_update(
        index_elements=[Row.kind, Row.key],
        set_={name: statement.excluded[name] for name in values},
        where=Row.expires_at <= now,
    )
    return session.execute(statement.returning(Row.kind)).first() is not None


def _found(value: dict[str, Any] | None) -> dict[str, Any]:
    if value is None:
        raise HTTPException(status_code=404, detail="Tidak ada (atau sudah kedaluwarsa)")
    return value


@router.post(
    "/{kind}/{key}",
    response_model=State,
    responses={201: {"description": "Disimpan", "model": State}, 200: {"description": "Sudah ada: nilai tersimpan"}},
)
def add_state(kind: KindPath, key: KeyPath, body: StateIn, session: SessionDep, response: Response) -> State:
    """Store the value unless the key holds one (201, created); else 200 with the stored value, unchanged."""
    now = datetime.now(UTC)
    _purge(session, now)
    for _ in range(ATTEMPTS):
        if _add(session, kind, key, body, now):
            session.commit()
            response.status_code = 201
            return State(value=body.value, created=True)
        stored = _live(session, kind, key, now)
        if stored is not None:
            session.commit()
            return State(value=stored)
    raise HTTPException(status_code=409, detail="Kunci sedang berubah, coba lagi")


@router.put("/{kind}/{key}", response_model=State)
def put_state(kind: KindPath, key: KeyPath, body: StateIn, session: SessionDep) -> State:
    """Store the value, replacing any; `created`: whether the key held none."""
    now = datetime.now(UTC)
    _purge(session, now)
    values = {"value": body.value, "family": body.family, "expires_at": now + timedelta(seconds=body.ttl)}
    for _ in range(ATTEMPTS):
        created = _add(session, kind, key, body, now)
        if created or session.execute(update(Row).where(_one(kind, key)).values(values).returning(Row.kind)).first():
            session.commit()
            return State(value=body.value, created=created)
    raise HTTPException(status_code=409, detail="Kunci sedang berubah, coba lagi")


@router.get("/{kind}/{key}", response_model=State, responses=NOT_FOUND)
def get_state(kind: KindPath, key: KeyPath, session: SessionDep) -> State:
    """The stored value."""
    return State(value=_found(_live(session, kind, key, datetime.now(UTC))))


@router.post("/{kind}/{key}/take", response_model=State, responses=NOT_FOUND)
def take_state(kind: KindPath, key: KeyPath, session: SessionDep) -> State:
    """The stored value, deleted at once: of several asking together exactly one gets it, the others 404."""
    now = datetime.now(UTC)
    taken = session.scalar(delete(Row).where(_one(kind, key), Row.expires_at > now).returning(Row.value))
    _purge(session, now)
    session.commit()
    return State(value=_found(taken))


@router.delete("/{kind}/{key}", status_code=204)
def drop_state(kind: KindPath, key: KeyPath, session: SessionDep) -> Response:
    """Delete the key's value (204 also when there was none)."""
    session.execute(delete(Row).where(_one(kind, key)))
    session.commit()
    return Response(status_code=204)


@router.delete("", response_model=Dropped)
def drop_family(
    session: SessionDep,
    family: Annotated[str, Query(pattern=KEY_PATTERN, description="the family to delete, of every kind")],
) -> Dropped:
    """Delete every row of `family`; `deleted`: how many were live."""
    now = datetime.now(UTC)
    deleted = len(
        session.execute(delete(Row).where(Row.family == family, Row.expires_at > now).returning(Row.key)).all()
    )
    session.execute(delete(Row).where(Row.family == family))
    _purge(session, now)
    session.commit()
    return Dropped(deleted=deleted)
