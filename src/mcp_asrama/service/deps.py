"""FastAPI dependencies: a database session per request, the token checks, and who changes what under which key.

They run on the event loop (only the session's close waits on the database, in a worker thread): FastAPI runs a
sync dependency in a worker thread, a thread handoff per request that costs more CPU than the check itself.
"""

import logging
import re
import secrets
from collections.abc import AsyncIterator
from typing import Annotated

import anyio
import anyio.to_thread
from fastapi import Depends, Header, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBasic, HTTPBasicCredentials, HTTPBearer
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

_bearer = HTTPBearer(auto_error=False, description="ASRAMA_SERVICE_TOKEN of the service")
_basic = HTTPBasic(auto_error=False, description="any user name, the service's token as password")
log = logging.getLogger(__name__)


async def get_session(request: Request) -> AsyncIterator[Session]:
    """One session per request, committed by the route that writes, always closed.

    Made on the event loop (a session opens no connection before its first query), closed in a worker thread that
    no other work waits for (the closing ROLLBACK may wait on the database): a sync dependency would take a worker
    thread to make it as well, one more thread handoff per request (bench/lean.py).
    """
    session = request.app.state.sessions()
    try:
        yield session
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(_close, session, limiter=anyio.CapacityLimiter(1))


def _close(session: Session) -> None:
    """When the database went away after the answer was made, only the closing ROLLBACK fails: the connection is
    dropped and the answer stands (raised here, after the answer started, it would cut the response off)."""
    try:
        session.close()
    except SQLAlchemyError as exc:
        session.invalidate()
        log.warning("database connection lost while closing a session (%s); dropped", type(exc).__name__)


def _is_token(request: Request, given: str | None) -> bool:
    expected: str | None = request.app.state.settings.token
    # create_app refuses to start without a token; never compare against a missing one.
    return expected is not None and given is not None and secrets.compare_digest(given.encode(), expected.encode())


async def require_token(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> None:
    """401 `Token tidak valid` unless the request carries the service's token."""
    if not _is_token(request, credentials.credentials if credentials else None):
        raise HTTPException(status_code=401, detail="Token tidak valid", headers={"WWW-Authenticate": "Bearer"})


async def require_token_or_password(
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    basic: Annotated[HTTPBasicCredentials | None, Depends(_basic)],
) -> None:
    """Like `require_token`, or the token as an HTTP Basic password (a browser prompts for it)."""
    if not _is_token(request, bearer.credentials if bearer else basic.password if basic else None):
        challenge = 'Basic realm="mcp-asrama service: the password is ASRAMA_SERVICE_TOKEN", charset="UTF-8"'
        raise HTTPException(status_code=401, detail="Token tidak valid", headers={"WWW-Authenticate": challenge})


ACTOR_HEADER = "X-Asrama-Actor"
MAX_ACTOR = 200
_KEY = re.compile(r"[A-Za-z0-9_\-.:]{16,128}")


async def get_actor(
    actor: Annotated[str | None, Header(alias=ACTOR_HEADER, include_in_schema=True)] = None,
) -> str | None:
    """Who makes the change, as the MCP server names its caller: recorded, never trusted for access, never logged.

    At most 200 printable characters; anything else is refused (422), never altered.
    """
    if actor is None or actor == "":
        return None
    if len(actor) > MAX_ACTOR or not actor.isprintable():
        raise HTTPException(status_code=422, detail=f"{ACTOR_HEADER} harus 1-{MAX_ACTOR} karakter yang dapat dicetak")
    return actor


async def get_idempotency_key(key: Annotated[str | None, Header(alias="Idempotency-Key")] = None) -> str | None:
    """The write's Idempotency-Key: 16-128 characters of A-Z a-z 0-9 _ - . :"""
    if key is None:
        return None
    if not _KEY.fullmatch(key):
        raise HTTPException(status_code=422, detail="Idempotency-Key harus 16-128 karakter A-Z a-z 0-9 _ - . :")
    return key


SessionDep = Annotated[Session, Depends(get_session)]
TokenDep = Depends(require_token)
DocsTokenDep = Depends(require_token_or_password)
ActorDep = Annotated[str | None, Depends(get_actor)]
KeyDep = Annotated[str | None, Depends(get_idempotency_key)]
