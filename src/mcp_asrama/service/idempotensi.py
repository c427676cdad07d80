"""Idempotent writes: the first answer under an Idempotency-Key is stored in the write's own transaction and replayed
for the same request; the same key with another request is refused."""

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import delete
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from mcp_asrama.service.models import Idempotensi

REPLAYED_HEADER = "Idempotent-Replayed"
# How long a stored answer is replayed (a confirmation lives minutes); older ones are deleted by the next write:
# an answer may hold a student's name or an izin's reason.
KEPT = timedelta(days=1)


def fingerprint_of(request: Request, body: BaseModel | None, actor: str | None) -> str:
    """What makes two requests the same: method, path, the validated body and the actor."""
    payload = {
        "rute": f"{request.method} {request.url.path}",
        "body": body.model_dump(mode="json") if body is not None else None,
        "oleh": actor,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def replay(session: Session, key: str | None, fingerprint: str) -> JSONResponse | None:
    """The stored answer to `key`, or None when there is none; 409 when `key` answered another request."""
    if key is None:
        return None
    row = session.get(Idempotensi, key, populate_existing=True)
    if row is None:
        return None
    if row.fingerprint != fingerprint:
        raise HTTPException(status_code=409, detail="Idempotency-Key ini sudah dipakai untuk permintaan lain")
    return JSONResponse(status_code=row.status_code, content=json.loads(row.respons), headers={REPLAYED_HEADER: "true"})


def commit(
    session: Session, key: str | None, request: Request, fingerprint: str, status_code: int, answer: BaseModel
) -> JSONResponse | None:
    """Commit the write with `answer` stored under `key`. When a concurrent request under the same key committed
    first, this write is rolled back and that request's answer returned; else None (the caller returns `answer`)."""
    if key is not None:
        session.execute(delete(Idempotensi).where(Idempotensi.waktu < datetime.now(UTC) - KEPT))
        session.add(
            Idempotensi(
                kunci=key,
                rute=f"{request.method} {request.url.path}"[:300],
                fingerprint=fingerprint,
                status_code=status_code,
                respons=answer.model_dump_json(exclude_none=True),
                waktu=datetime.now(UTC),
            )
        )
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        stored = replay(session, key, fingerprint)
        if stored is None:
            raise
        return stored
    return None


@dataclass(frozen=True)
class Once:
    """One idempotent write: its request, key and fingerprint, taken before anything is read."""

    request: Request
    key: str | None
    fingerprint: str

    @classmethod
    def of(cls, request: Request, body: BaseModel | None, actor: str | None, key: str | None) -> "Once":
        return cls(request, key, fingerprint_of(request, body, actor))

    def replay(self, session: Session) -> JSONResponse | None:
        """The stored answer (`replay`); call it once the write's rows are held."""
        return replay(session, self.key, self.fingerprint)

    def commit(self, session: Session, status_code: int, answer: BaseModel) -> Any:
        """Commit the write and its answer (`commit`): the answer, or a concurrent request's."""
        return commit(session, self.key, self.request, self.fingerprint, status_code, answer) or answer
