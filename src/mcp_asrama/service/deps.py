"""FastAPI dependencies: a database session per request and the token checks."""

import secrets
from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBasic, HTTPBasicCredentials, HTTPBearer
from sqlalchemy.orm import Session

_bearer = HTTPBearer(auto_error=False, description="ASRAMA_SERVICE_TOKEN of the service")
_basic = HTTPBasic(auto_error=False, description="any user name, the service's token as password")


def get_session(request: Request) -> Iterator[Session]:
    """One session per request, committed by the route that writes, always closed."""
    with request.app.state.sessions() as session:
        yield session


def _is_token(request: Request, given: str | None) -> bool:
    expected: str | None = request.app.state.settings.token
    # create_app refuses to start without a token; never compare against a missing one.
    return expected is not None and given is not None and secrets.compare_digest(given.encode(), expected.encode())


def require_token(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> None:
    """401 `Token tidak valid` unless the request carries the service's token."""
    if not _is_token(request, credentials.credentials if credentials else None):
        raise HTTPException(status_code=401, detail="Token tidak valid", headers={"WWW-Authenticate": "Bearer"})


def require_token_or_password(
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    basic: Annotated[HTTPBasicCredentials | None, Depends(_basic)],
) -> None:
    """Like `require_token`, or the token as an HTTP Basic password (a browser prompts for it)."""
    if not _is_token(request, bearer.credentials if bearer else basic.password if basic else None):
        challenge = 'Basic realm="mcp-asrama service: the password is ASRAMA_SERVICE_TOKEN", charset="UTF-8"'
        raise HTTPException(status_code=401, detail="Token tidak valid", headers={"WWW-Authenticate": challenge})


SessionDep = Annotated[Session, Depends(get_session)]
TokenDep = Depends(require_token)
DocsTokenDep = Depends(require_token_or_password)
