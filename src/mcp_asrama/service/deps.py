"""FastAPI dependencies: a database session per request and the bearer-token check."""

import secrets
from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

_bearer = HTTPBearer(auto_error=False, description="ASRAMA_SERVICE_TOKEN of the service")


def get_session(request: Request) -> Iterator[Session]:
    """One session per request, committed by the route that writes, always closed."""
    with request.app.state.sessions() as session:
        yield session


def require_token(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> None:
    """401 `Token tidak valid` unless the request carries the service's token (when one is set)."""
    expected: str | None = request.app.state.settings.token
    if expected is None:
        return
    given = credentials.credentials if credentials else ""
    if not secrets.compare_digest(given.encode(), expected.encode()):
        raise HTTPException(status_code=401, detail="Token tidak valid", headers={"WWW-Authenticate": "Bearer"})


SessionDep = Annotated[Session, Depends(get_session)]
TokenDep = Depends(require_token)
